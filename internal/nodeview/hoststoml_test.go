package nodeview

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containerd/containerd/v2/core/remotes/docker"
	"github.com/containerd/containerd/v2/core/remotes/docker/config"
	"github.com/containerd/log"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParseHostsTOML(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    hostsSpec
		wantErr string
	}{
		{name: "empty", in: "\n", want: hostsSpec{}},
		{
			name: "full",
			in: `server = "https://registry.example"
capabilities = ["pull", "resolve"]
[host."https://m1.example"]
  capabilities = ["PULL"]
  ca = ["a.pem", "/abs/b.pem"]
  client = ["c.pem", ["d.cert", "/abs/d.key"]]
  skip_verify = false
  override_path = true
  dial_timeout = "3s"
  [host."https://m1.example".header]
    x-a = "1"
    x-b = ["2", "3"]
[host."m2.example"]
  ca = "/abs/only.pem"
  unknown_key = "ignored, as containerd ignores it"
`,
			want: hostsSpec{
				Server: hostSpec{Name: "https://registry.example", Capabilities: []string{"pull", "resolve"}},
				Hosts: []hostSpec{
					{Name: "https://m1.example", Capabilities: []string{"PULL"}, CASet: true, CA: []string{"/node/dir/a.pem", "/abs/b.pem"},
						Client: [][2]string{{"/node/dir/c.pem", ""}, {"/node/dir/d.cert", "/abs/d.key"}}, SkipVerify: new(bool),
						OverridePath: true, DialTimeout: "3s", HeaderSet: true, Header: map[string][]string{"x-a": {"1"}, "x-b": {"2", "3"}}},
					{Name: "m2.example", CASet: true, CA: []string{"/abs/only.pem"}},
				},
				HostTree: true,
			},
		},
		{name: "root only", in: "server = \"https://registry.example\"\n", want: hostsSpec{Server: hostSpec{Name: "https://registry.example"}}},
		{name: "empty host table", in: "server = \"https://registry.example\"\n[host]\n", want: hostsSpec{Server: hostSpec{Name: "https://registry.example"}, HostTree: true}},
		{name: "syntax", in: "[host.\"x\"\n", wantErr: "toml"},
		{name: "unknown capability", in: "[host.\"x\"]\ncapabilities = [\"fetch\"]\n", wantErr: "unknown capability fetch"},
		{name: "ca number", in: "[host.\"x\"]\nca = 5\n", wantErr: "invalid type"},
		{name: "ca array of numbers", in: "[host.\"x\"]\nca = [5]\n", wantErr: "unable to cast"},
		{name: "client triple", in: "[host.\"x\"]\nclient = [[\"a\", \"b\", \"c\"]]\n", wantErr: "invalid pair"},
		{name: "client table", in: "[host.\"x\"]\nclient = [{a = 1}]\n", wantErr: "invalid type"},
		{name: "header number", in: "[host.\"x\".header]\nx = 1\n", wantErr: "invalid type"},
		{name: "dial timeout", in: "dial_timeout = \"1 second\"\n", wantErr: "dial_timeout"},
		{name: "server url", in: "server = \"https://bad host:port:x\"\n", wantErr: "parsing server"},
		{name: "array of tables", in: "[[host.\"x\"]]\n", wantErr: "toml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseHostsTOML("/node/dir", []byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(tt.wantErr)) {
					t.Fatalf("parseHostsTOML(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseHostsTOML(%q) error = %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("parseHostsTOML(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestTOMLString(t *testing.T) {
	for _, s := range []string{"", "plain", `quote " and \ backslash`, "tab\tnewline\nnul\x00del\x7f", "ünïcode ☃"} {
		t.Run(s, func(t *testing.T) {
			in := "server = " + tomlString(s) + "\n"
			got, err := parseHostsTOML("/", []byte(in))
			if err != nil && s != "" {
				// A server that is not a URL is rejected by the URL check,
				// not by TOML: only the TOML decoding matters here.
				if !strings.Contains(err.Error(), "parsing server") {
					t.Fatalf("tomlString(%q) gave undecodable TOML: %v", s, err)
				}
				return
			}
			if got.Server.Name != s {
				t.Errorf("tomlString(%q) round-trips to %q", s, got.Server.Name)
			}
		})
	}
}

// containerdHosts runs containerd's ConfigureHosts over a directory holding
// hosts.toml with content b.
func containerdHosts(t *testing.T, b []byte) ([]docker.RegistryHost, error) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hosts.toml"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := log.WithLogger(context.Background(), quietLogger())
	return config.ConfigureHosts(ctx, config.HostOptions{HostDir: func(string) (string, error) { return dir, nil }})("registry.example")
}

type chost struct {
	Host, Scheme, Path string
	Caps               docker.HostCapabilities
	Header             map[string][]string
}

func summariseContainerd(hs []docker.RegistryHost) []chost {
	var out []chost
	for _, h := range hs {
		out = append(out, chost{h.Host, h.Scheme, h.Path, h.Capabilities, h.Header})
	}
	return out
}

// FuzzParseHostsTOML checks the pre-parse against containerd itself: when
// pullpath accepts a file, containerd reads the rewritten copy to the same
// hosts as the original; when pullpath rejects it, containerd fell back
// (one default host).
func FuzzParseHostsTOML(f *testing.F) {
	for _, s := range []string{
		"server = \"https://registry.example\"\n[host.\"https://m.example\"]\ncapabilities = [\"pull\"]\n",
		"[host.\"http://a:5000\"]\nskip_verify = true\n[host.\"http://a:5000\".header]\nx = [\"1\"]\n[host.\"b\"]\noverride_path = true\n",
		"[host.\"a\"]\n[host.\"b\"]\n[host.\"a\".header]\nk = \"v\"\n",
		"capabilities = [\"pull\", \"resolve\", \"push\", \"referrers\"]\ndial_timeout = \"1s\"\n",
		"[host.\"x\"]\ncapabilities = [\"nope\"]\n",
		"host = { \"inline.example\" = { capabilities = [\"pull\"] } }\n",
		"[host]\n[host.\"q\\\"uote\"]\n",
		"[host.\"m\"]\nca = [\"hosts.toml\"]\nclient = [[\"a\", \"b\"]]\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		spec, perr := parseHostsTOML("/node", []byte(in))
		orig, oerr := containerdHosts(t, []byte(in))
		if perr != nil {
			if oerr == nil && len(orig) != 1 {
				t.Fatalf("pullpath rejects %q (%v) but containerd reads %d hosts", in, perr, len(orig))
			}
			return
		}
		out, err := spec.emitUnique(func(p string) (string, error) { return p, nil })
		if err != nil {
			return
		}
		again, err := parseHostsTOML("/node", out)
		if err != nil {
			t.Fatalf("emitted copy of %q does not parse: %v\n%s", in, err, out)
		}
		if u := spec.uniqueIndex(); len(again.Hosts) != len(u.names) {
			t.Fatalf("emitted copy of %q has %d hosts, want %d", in, len(again.Hosts), len(u.names))
		}
		if oerr != nil {
			return
		}
		copyHosts, cerr := containerdHosts(t, out)
		if cerr != nil {
			t.Fatalf("containerd rejects the emitted copy of %q: %v\n%s", in, cerr, out)
		}
		u := spec.uniqueIndex()
		if len(copyHosts) != len(u.names)+1 {
			t.Fatalf("containerd reads %d hosts from the emitted copy of %q, want %d\n%s", len(copyHosts), in, len(u.names)+1, out)
		}
		var expanded []docker.RegistryHost
		for _, i := range u.index {
			expanded = append(expanded, copyHosts[i])
		}
		expanded = append(expanded, copyHosts[len(copyHosts)-1])
		if diff := cmp.Diff(summariseContainerd(orig), summariseContainerd(expanded), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("containerd reads %q and its emitted copy differently (-orig +copy):\n%s\ncopy:\n%s", in, diff, out)
		}
	})
}
