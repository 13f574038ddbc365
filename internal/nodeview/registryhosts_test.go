package nodeview

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/core/remotes/docker"
	"github.com/containerd/containerd/v2/core/remotes/docker/config"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pullpath/pullpath/internal/testpki"
	"github.com/pullpath/pullpath/internal/verdict"
)

// hostSummary is the comparable part of a RegistryHost.
type hostSummary struct {
	Host, Scheme, Path string
	Capabilities       []string
	Mirror             bool
	SkipVerify         bool
	HTTPFallback       bool
	CAFiles            []string // node paths (root stripped)
	Source             string   // node path
	Header             http.Header
	DialTimeout        time.Duration
	Warnings           []string
}

func summarise(root string, hs []RegistryHost) []hostSummary {
	strip := func(p string) string {
		if p == "" {
			return ""
		}
		return strings.TrimPrefix(p, root)
	}
	var out []hostSummary
	for _, h := range hs {
		s := hostSummary{Host: h.Host, Scheme: h.Scheme, Path: h.Path, Capabilities: h.Capabilities, Mirror: h.Mirror,
			SkipVerify: h.SkipVerify, HTTPFallback: h.HTTPFallback, Source: strip(h.Source), Header: h.Header, DialTimeout: h.DialTimeout}
		for _, c := range h.CAFiles {
			s.CAFiles = append(s.CAFiles, strip(c))
		}
		for _, w := range h.Warnings {
			s.Warnings = append(s.Warnings, w.Code)
		}
		out = append(out, s)
	}
	return out
}

var allCaps = []string{"pull", "resolve", "push", "referrers"}

func TestRegistryHosts(t *testing.T) {
	nodeCA := testpki.MustCA(t, "node CA")
	mirrorCA := testpki.MustCA(t, "mirror CA")
	client := mirrorCA.MustIssue(t, testpki.Leaf{Names: []string{"client"}, Client: true})
	clientCert, clientKey := testpki.CertPEM(client), testpki.KeyPEM(client.PrivateKey)
	const d = "/etc/containerd/certs.d"
	tests := []struct {
		name     string
		files    map[string]string
		opts     []Option
		host     string
		want     []hostSummary
		trustCA  map[int]bool // host index → whether its TLS trusts mirrorCA
		wantCert int          // client certificates on host 0
	}{
		{
			name: "no certs.d: the registry itself",
			host: "registry.example",
			want: []hostSummary{{Host: "registry.example", Scheme: "https", Path: "/v2", Capabilities: allCaps, DialTimeout: 30 * time.Second}},
		},
		{
			name: "docker.io is registry-1.docker.io",
			host: "docker.io",
			want: []hostSummary{{Host: "registry-1.docker.io", Scheme: "https", Path: "/v2", Capabilities: allCaps, DialTimeout: 30 * time.Second}},
		},
		{
			name: "index.docker.io reads docker.io's directory",
			host: "index.docker.io",
			files: map[string]string{
				d + "/docker.io/hosts.toml": "server = \"https://registry-1.docker.io\"\n[host.\"https://hub-mirror.corp.example\"]\ncapabilities = [\"pull\", \"resolve\"]\n",
			},
			want: []hostSummary{
				{Host: "hub-mirror.corp.example", Scheme: "https", Path: "/v2", Capabilities: []string{"pull", "resolve"}, Mirror: true, Source: d + "/docker.io/hosts.toml", DialTimeout: 30 * time.Second},
				{Host: "registry-1.docker.io", Scheme: "https", Path: "/v2", Capabilities: allCaps, Source: d + "/docker.io/hosts.toml", DialTimeout: 30 * time.Second},
			},
		},
		{
			name: "mirrors in file order, then server; override_path, header, dial_timeout",
			host: "registry.example",
			files: map[string]string{
				d + "/registry.example/hosts.toml": `server = "https://registry.example"
[host."https://b-mirror.example"]
  capabilities = ["pull"]
  override_path = true
[host."https://b-mirror.example".header]
  x-custom = "1"
[host."https://a-mirror.example:8443/custom"]
  capabilities = ["pull", "resolve"]
  dial_timeout = "2s"
`,
			},
			want: []hostSummary{
				{Host: "b-mirror.example", Scheme: "https", Path: "", Capabilities: []string{"pull"}, Mirror: true, Source: d + "/registry.example/hosts.toml", Header: http.Header{"x-custom": {"1"}}, DialTimeout: 30 * time.Second},
				{Host: "a-mirror.example:8443", Scheme: "https", Path: "/custom/v2", Capabilities: []string{"pull", "resolve"}, Mirror: true, Source: d + "/registry.example/hosts.toml", DialTimeout: 2 * time.Second},
				{Host: "registry.example", Scheme: "https", Path: "/v2", Capabilities: allCaps, Source: d + "/registry.example/hosts.toml", DialTimeout: 30 * time.Second},
			},
		},
		{
			name: "host_port_ directory",
			host: "registry.example:5000",
			files: map[string]string{
				d + "/registry.example_5000_/hosts.toml": "[host.\"http://mirror.example:5000\"]\n",
				d + "/registry.example:5000/hosts.toml":  "[host.\"https://wrong.example\"]\n",
			},
			want: []hostSummary{
				{Host: "mirror.example:5000", Scheme: "http", Path: "/v2", Capabilities: allCaps, Mirror: true, Source: d + "/registry.example_5000_/hosts.toml", DialTimeout: 30 * time.Second},
				{Host: "registry.example:5000", Scheme: "https", Path: "/v2", Capabilities: allCaps, Source: d + "/registry.example_5000_/hosts.toml", DialTimeout: 30 * time.Second},
			},
		},
		{
			name: "host:port directory",
			host: "registry.example:5000",
			files: map[string]string{
				d + "/registry.example:5000/hosts.toml": "[host.\"https://colon.example\"]\n",
			},
			want: []hostSummary{
				{Host: "colon.example", Scheme: "https", Path: "/v2", Capabilities: allCaps, Mirror: true, Source: d + "/registry.example:5000/hosts.toml", DialTimeout: 30 * time.Second},
				{Host: "registry.example:5000", Scheme: "https", Path: "/v2", Capabilities: allCaps, Source: d + "/registry.example:5000/hosts.toml", DialTimeout: 30 * time.Second},
			},
		},
		{
			name: "_default directory",
			host: "other.example",
			files: map[string]string{
				d + "/_default/hosts.toml": "[host.\"https://catch-all.example\"]\ncapabilities = [\"pull\"]\n",
			},
			want: []hostSummary{
				{Host: "catch-all.example", Scheme: "https", Path: "/v2", Capabilities: []string{"pull"}, Mirror: true, Source: d + "/_default/hosts.toml", DialTimeout: 30 * time.Second},
				{Host: "other.example", Scheme: "https", Path: "/v2", Capabilities: allCaps, Source: d + "/_default/hosts.toml", DialTimeout: 30 * time.Second},
			},
		},
		{
			name: "ca relative and absolute resolve under the root; client pair",
			host: "registry.example",
			files: map[string]string{
				d + "/registry.example/hosts.toml": `[host."https://rel.example"]
  ca = "mirror-ca.pem"
  client = [["/etc/pki/client.cert", "/etc/pki/client.key"]]
[host."https://abs.example"]
  ca = ["/usr/local/share/ca/mirror-ca.pem"]
[host."https://none.example"]
`,
				d + "/registry.example/mirror-ca.pem": string(mirrorCA.PEM),
				"/usr/local/share/ca/mirror-ca.pem":   string(mirrorCA.PEM),
				"/etc/pki/client.cert":                string(clientCert),
				"/etc/pki/client.key":                 string(clientKey),
			},
			want: []hostSummary{
				{Host: "rel.example", Scheme: "https", Path: "/v2", Capabilities: allCaps, Mirror: true, CAFiles: []string{d + "/registry.example/mirror-ca.pem"}, Source: d + "/registry.example/hosts.toml", DialTimeout: 30 * time.Second},
				{Host: "abs.example", Scheme: "https", Path: "/v2", Capabilities: allCaps, Mirror: true, CAFiles: []string{"/usr/local/share/ca/mirror-ca.pem"}, Source: d + "/registry.example/hosts.toml", DialTimeout: 30 * time.Second},
				{Host: "none.example", Scheme: "https", Path: "/v2", Capabilities: allCaps, Mirror: true, Source: d + "/registry.example/hosts.toml", DialTimeout: 30 * time.Second},
				{Host: "registry.example", Scheme: "https", Path: "/v2", Capabilities: allCaps, Source: d + "/registry.example/hosts.toml", DialTimeout: 30 * time.Second},
			},
			trustCA:  map[int]bool{0: true, 1: true, 2: false, 3: false},
			wantCert: 1,
		},
		{
			name: "skip_verify warns; http host with TLS settings tries HTTPS first",
			host: "registry.example",
			files: map[string]string{
				d + "/registry.example/hosts.toml": "[host.\"http://insecure.example:5000\"]\nskip_verify = true\n",
			},
			want: []hostSummary{
				{Host: "insecure.example:5000", Scheme: "https", Path: "/v2", Capabilities: allCaps, Mirror: true, SkipVerify: true, HTTPFallback: true, Source: d + "/registry.example/hosts.toml", DialTimeout: 30 * time.Second, Warnings: []string{"tls.skip-verify"}},
				{Host: "registry.example", Scheme: "https", Path: "/v2", Capabilities: allCaps, Source: d + "/registry.example/hosts.toml", DialTimeout: 30 * time.Second},
			},
		},
		{
			name: "docker-style cert files without hosts.toml",
			host: "registry.example",
			files: map[string]string{
				d + "/registry.example/ca.crt": string(mirrorCA.PEM),
			},
			want: []hostSummary{
				{Host: "registry.example", Scheme: "https", Path: "/v2", Capabilities: allCaps, CAFiles: []string{d + "/registry.example/ca.crt"}, DialTimeout: 30 * time.Second},
			},
			trustCA: map[int]bool{0: true},
		},
		{
			name: "/etc/docker/certs.d is containerd's second default directory",
			host: "registry.example",
			files: map[string]string{
				"/etc/docker/certs.d/registry.example/hosts.toml": "[host.\"https://docker-dir.example\"]\n",
			},
			want: []hostSummary{
				{Host: "docker-dir.example", Scheme: "https", Path: "/v2", Capabilities: allCaps, Mirror: true, Source: "/etc/docker/certs.d/registry.example/hosts.toml", DialTimeout: 30 * time.Second},
				{Host: "registry.example", Scheme: "https", Path: "/v2", Capabilities: allCaps, Source: "/etc/docker/certs.d/registry.example/hosts.toml", DialTimeout: 30 * time.Second},
			},
		},
		{
			name: "WithHostsDir reads only the given directory",
			host: "registry.example",
			opts: []Option{WithHostsDir("/etc/containerd/certs.d")},
			files: map[string]string{
				"/etc/docker/certs.d/registry.example/hosts.toml": "[host.\"https://docker-dir.example\"]\n",
			},
			want: []hostSummary{{Host: "registry.example", Scheme: "https", Path: "/v2", Capabilities: allCaps, DialTimeout: 30 * time.Second}},
		},
		{
			name: "a host header repeated later is tried twice, as containerd does",
			host: "registry.example",
			files: map[string]string{
				d + "/registry.example/hosts.toml": "[host.\"https://a.example\"]\n[host.\"https://b.example\"]\n[host.\"https://a.example\".header]\nx = [\"1\", \"2\"]\n",
			},
			want: []hostSummary{
				{Host: "a.example", Scheme: "https", Path: "/v2", Capabilities: allCaps, Mirror: true, Source: d + "/registry.example/hosts.toml", Header: http.Header{"x": {"1", "2"}}, DialTimeout: 30 * time.Second},
				{Host: "b.example", Scheme: "https", Path: "/v2", Capabilities: allCaps, Mirror: true, Source: d + "/registry.example/hosts.toml", DialTimeout: 30 * time.Second},
				{Host: "a.example", Scheme: "https", Path: "/v2", Capabilities: allCaps, Mirror: true, Source: d + "/registry.example/hosts.toml", Header: http.Header{"x": {"1", "2"}}, DialTimeout: 30 * time.Second},
				{Host: "registry.example", Scheme: "https", Path: "/v2", Capabilities: allCaps, Source: d + "/registry.example/hosts.toml", DialTimeout: 30 * time.Second},
			},
		},
		{
			name: "an entry equal to the server is the registry itself (plain http)",
			host: "r.example:5000",
			files: map[string]string{
				d + "/r.example:5000/hosts.toml": "server = \"http://r.example:5000\"\n[host.\"http://r.example:5000\"]\ncapabilities = [\"pull\", \"resolve\"]\n",
			},
			want: []hostSummary{
				{Host: "r.example:5000", Scheme: "http", Path: "/v2", Capabilities: []string{"pull", "resolve"}, Source: d + "/r.example:5000/hosts.toml", DialTimeout: 30 * time.Second},
				{Host: "r.example:5000", Scheme: "http", Path: "/v2", Capabilities: allCaps, Source: d + "/r.example:5000/hosts.toml", DialTimeout: 30 * time.Second},
			},
		},
		{
			name: "an entry equal to the server with a ca is the registry; a mirror before it stays a mirror",
			host: "registry.example",
			files: map[string]string{
				d + "/registry.example/hosts.toml":    "server = \"https://registry.example\"\n[host.\"https://mirror.example\"]\n[host.\"https://registry.example\"]\nca = \"mirror-ca.pem\"\n",
				d + "/registry.example/mirror-ca.pem": string(mirrorCA.PEM),
			},
			want: []hostSummary{
				{Host: "mirror.example", Scheme: "https", Path: "/v2", Capabilities: allCaps, Mirror: true, Source: d + "/registry.example/hosts.toml", DialTimeout: 30 * time.Second},
				{Host: "registry.example", Scheme: "https", Path: "/v2", Capabilities: allCaps, CAFiles: []string{d + "/registry.example/mirror-ca.pem"}, Source: d + "/registry.example/hosts.toml", DialTimeout: 30 * time.Second},
				{Host: "registry.example", Scheme: "https", Path: "/v2", Capabilities: allCaps, Source: d + "/registry.example/hosts.toml", DialTimeout: 30 * time.Second},
			},
			trustCA: map[int]bool{1: true},
		},
		{
			name: "an http entry with skip_verify equal to an http server is the registry",
			host: "r.example:5000",
			files: map[string]string{
				d + "/r.example:5000/hosts.toml": "server = \"http://r.example:5000\"\n[host.\"http://r.example:5000\"]\nskip_verify = true\n",
			},
			want: []hostSummary{
				{Host: "r.example:5000", Scheme: "https", Path: "/v2", Capabilities: allCaps, SkipVerify: true, HTTPFallback: true, Source: d + "/r.example:5000/hosts.toml", DialTimeout: 30 * time.Second, Warnings: []string{"tls.skip-verify"}},
				{Host: "r.example:5000", Scheme: "http", Path: "/v2", Capabilities: allCaps, Source: d + "/r.example:5000/hosts.toml", DialTimeout: 30 * time.Second},
			},
		},
		{
			name: "same host on another path or scheme is a mirror",
			host: "registry.example",
			files: map[string]string{
				d + "/registry.example/hosts.toml": "server = \"https://registry.example\"\n[host.\"https://registry.example/cache\"]\n[host.\"http://registry.example\"]\n",
			},
			want: []hostSummary{
				{Host: "registry.example", Scheme: "https", Path: "/cache/v2", Capabilities: allCaps, Mirror: true, Source: d + "/registry.example/hosts.toml", DialTimeout: 30 * time.Second},
				{Host: "registry.example", Scheme: "http", Path: "/v2", Capabilities: allCaps, Mirror: true, Source: d + "/registry.example/hosts.toml", DialTimeout: 30 * time.Second},
				{Host: "registry.example", Scheme: "https", Path: "/v2", Capabilities: allCaps, Source: d + "/registry.example/hosts.toml", DialTimeout: 30 * time.Second},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			files := map[string]string{"/etc/ssl/certs/ca-certificates.crt": string(nodeCA.PEM), "/etc/resolv.conf": "nameserver 10.0.0.1\n"}
			for k, v := range tt.files {
				files[k] = v
			}
			writeFiles(t, root, files)
			v, err := Load(root, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			hs, err := v.RegistryHosts(context.Background(), tt.host)
			if err != nil {
				t.Fatalf("RegistryHosts(%q) error = %v", tt.host, err)
			}
			if diff := cmp.Diff(tt.want, summarise(root, hs), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("RegistryHosts(%q) mismatch (-want +got):\n%s", tt.host, diff)
			}
			for i, h := range hs {
				if h.TLS == nil || h.Client == nil {
					t.Fatalf("RegistryHosts(%q)[%d] has no TLS config or client", tt.host, i)
				}
				if !trusts(t, h.TLS.RootCAs, nodeCA, "x.example") {
					t.Errorf("RegistryHosts(%q)[%d] TLS does not trust the node trust store", tt.host, i)
				}
				if got := trusts(t, h.TLS.RootCAs, mirrorCA, "x.example"); got != tt.trustCA[i] {
					t.Errorf("RegistryHosts(%q)[%d] trusts the hosts.toml CA = %v, want %v", tt.host, i, got, tt.trustCA[i])
				}
			}
			if len(hs) > 0 && len(hs[0].TLS.Certificates) != tt.wantCert {
				t.Errorf("RegistryHosts(%q)[0] client certificates = %d, want %d", tt.host, len(hs[0].TLS.Certificates), tt.wantCert)
			}
		})
	}
}

func TestRegistryHostsErrors(t *testing.T) {
	nodeCA := testpki.MustCA(t, "node CA")
	const d = "/etc/containerd/certs.d/registry.example"
	tests := []struct {
		name      string
		files     map[string]string
		dirs      []string
		wantCause string
		wantFile  string // node path named in the error
		wantHosts []string
	}{
		{
			name:      "TOML syntax error",
			files:     map[string]string{d + "/hosts.toml": "[host.\"https://mirror.example\"\ncapabilities = [\"pull\"]\n"},
			wantCause: "config.hosts-toml", wantFile: d + "/hosts.toml",
			wantHosts: []string{"registry.example"}, // containerd falls back to the default
		},
		{
			name:      "unknown capability",
			files:     map[string]string{d + "/hosts.toml": "[host.\"https://mirror.example\"]\ncapabilities = [\"pul\"]\n"},
			wantCause: "config.hosts-toml", wantFile: d + "/hosts.toml",
			wantHosts: []string{"registry.example"},
		},
		{
			name:      "wrong type for skip_verify",
			files:     map[string]string{d + "/hosts.toml": "[host.\"https://mirror.example\"]\nskip_verify = \"yes\"\n"},
			wantCause: "config.hosts-toml", wantFile: d + "/hosts.toml",
			wantHosts: []string{"registry.example"},
		},
		{
			name:      "bad dial_timeout",
			files:     map[string]string{d + "/hosts.toml": "dial_timeout = \"soon\"\n"},
			wantCause: "config.hosts-toml", wantFile: d + "/hosts.toml",
			wantHosts: []string{"registry.example"},
		},
		{
			name:      "hosts.toml is a directory",
			dirs:      []string{d + "/hosts.toml"},
			wantCause: "config.hosts-toml", wantFile: d + "/hosts.toml",
		},
		{
			name:      "missing ca file",
			files:     map[string]string{d + "/hosts.toml": "[host.\"https://mirror.example\"]\nca = \"/etc/certs/missing.pem\"\n"},
			wantCause: "config.ca-file", wantFile: "/etc/certs/missing.pem",
		},
		{
			name:      "ca file without a certificate",
			files:     map[string]string{d + "/hosts.toml": "[host.\"https://mirror.example\"]\nca = \"ca.pem\"\n", d + "/ca.pem": "garbage"},
			wantCause: "config.ca-file", wantFile: d + "/ca.pem",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			files := map[string]string{"/etc/ssl/certs/ca-certificates.crt": string(nodeCA.PEM)}
			for k, v := range tt.files {
				files[k] = v
			}
			writeFiles(t, root, files)
			for _, dir := range tt.dirs {
				if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			v, _ := Load(root)
			hs, err := v.RegistryHosts(context.Background(), "registry.example")
			e, ok := verdict.AsError(err)
			if !ok || e.Cause != tt.wantCause {
				t.Fatalf("RegistryHosts() error = %v, want cause %s", err, tt.wantCause)
			}
			if want := filepath.Join(root, tt.wantFile); !strings.Contains(e.Error(), want) {
				t.Errorf("RegistryHosts() error = %q, want it to name %s", e.Error(), want)
			}
			var got []string
			for _, h := range hs {
				got = append(got, h.Host)
			}
			if diff := cmp.Diff(tt.wantHosts, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("RegistryHosts() partial hosts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRegistryHostsLeavesNoTempFiles(t *testing.T) {
	root := t.TempDir()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	writeFiles(t, root, map[string]string{"/etc/containerd/certs.d/registry.example/hosts.toml": "[host.\"https://m.example\"]\n"})
	v, _ := Load(root)
	if _, err := v.RegistryHosts(context.Background(), "registry.example"); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		t.Errorf("RegistryHosts left %d entries in TMPDIR, want 0", len(ents))
	}
}

func TestRegistryHostsRejectsPathsAsHosts(t *testing.T) {
	root := t.TempDir()
	v, _ := Load(root)
	for _, h := range []string{"", ".", "..", "../../etc", "a/b", "a b", "a\\b"} {
		t.Run(h, func(t *testing.T) {
			hs, err := v.RegistryHosts(context.Background(), h)
			e, ok := verdict.AsError(err)
			if !ok || e.Cause != "config.reference" || hs != nil {
				t.Errorf("RegistryHosts(%q) = %v, %v, want config.reference and no hosts", h, hs, err)
			}
		})
	}
}

// TestRegistryHostsServerEntryAgainstContainerd runs containerd's own
// resolver over a hosts.toml whose only [host] entry is the server itself
// (plain http), against a loopback registry that answers 404: containerd
// asks that one endpoint twice (the entry, then the server), and the plan
// must name both as the registry, never as a mirror.
func TestRegistryHostsServerEntryAgainstContainerd(t *testing.T) {
	var (
		mu   sync.Mutex
		seen []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.Host+r.URL.Path)
		mu.Unlock()
		http.NotFound(w, r)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	root := t.TempDir()
	dir := "/etc/containerd/certs.d/" + host
	writeFiles(t, root, map[string]string{
		dir + "/hosts.toml": fmt.Sprintf("server = %q\n[host.%q]\ncapabilities = [\"pull\", \"resolve\"]\n", srv.URL, srv.URL),
	})

	resolver := docker.NewResolver(docker.ResolverOptions{Hosts: config.ConfigureHosts(t.Context(), config.HostOptions{
		HostDir: config.HostDirFromRoot(filepath.Join(root, "etc", "containerd", "certs.d")),
	})})
	_, _, err := resolver.Resolve(t.Context(), host+"/app:1")
	if err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("containerd Resolve() error = %v, want not found", err)
	}
	want := []string{"HEAD " + host + "/v2/app/manifests/1", "HEAD " + host + "/v2/app/manifests/1"}
	mu.Lock()
	got := append([]string(nil), seen...)
	mu.Unlock()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("containerd's requests (-want +got):\n%s", diff)
	}

	v, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	hs, err := v.RegistryHosts(t.Context(), host)
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 2 {
		t.Fatalf("RegistryHosts(%q) = %d hosts, want the 2 containerd tried", host, len(hs))
	}
	for i, h := range hs {
		if h.Host != host || h.Scheme != "http" || h.Mirror {
			t.Errorf("RegistryHosts(%q)[%d] = %s://%s mirror=%v, want http://%s as the registry", host, i, h.Scheme, h.Host, h.Mirror, host)
		}
	}
}
