package probe_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/keychain"
	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/probe"
	"github.com/pullpath/pullpath/internal/runtimecfg"
)

// TestRuntimeRouting reads the runtime's own credentials from a node
// root: a hosts.toml Authorization header, config.toml's
// registry.configs auth (k3s, Bottlerocket), one that does not decode;
// the rule follows runtimecfg's version and pull path; no secret appears
// in a name or note.
func TestRuntimeRouting(t *testing.T) {
	const secret = "s3cret-Zq81"
	hdr := "Basic " + base64.StdEncoding.EncodeToString([]byte("hdr-user:"+secret))
	files := map[string]string{
		"etc/containerd/config.toml": fmt.Sprintf(`version = 2
[plugins."io.containerd.grpc.v1.cri".registry]
  config_path = "/etc/containerd/certs.d"
[plugins."io.containerd.grpc.v1.cri".registry.configs."mirror.lab.test".auth]
  username = "k3s-user"
  password = %q
[plugins."io.containerd.grpc.v1.cri".registry.configs."other.lab.test".auth]
  auth = %q
[plugins."io.containerd.grpc.v1.cri".registry.configs."bad.lab.test".auth]
  auth = "!!%s"
`, secret, base64.StdEncoding.EncodeToString([]byte("b64-user:"+secret)), secret),
		"etc/containerd/certs.d/registry.lab.test/hosts.toml": fmt.Sprintf("server = \"https://registry.lab.test\"\n[host.\"https://mirror.lab.test\"]\n  capabilities = [\"pull\", \"resolve\"]\n  [host.\"https://mirror.lab.test\".header]\n    Authorization = %q\n", hdr),
	}
	root := t.TempDir()
	for p, c := range files {
		f := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		version string
		want    keychain.Runtime
	}{
		{"v1.6.20", keychain.Containerd16},
		// registry.configs forces 2.1+ onto the local pull.
		{"v2.2.9", keychain.Containerd2Local},
	} {
		c, err := runtimecfg.Load(root, nodeview.RuntimeBinary{Path: "/usr/bin/containerd", ModuleVersion: tt.version}, runtimecfg.Options{})
		if err != nil {
			t.Fatal(err)
		}
		view, _ := nodeview.Load(root)
		plan, err := c.Plan(context.Background(), view, "registry.lab.test", false)
		if err != nil {
			t.Fatal(err)
		}
		rt, fb, notes := probe.RuntimeRouting(c, root, plan.Hosts)
		if rt != tt.want {
			t.Errorf("%s: rule %s, want %s (pull path %s)", tt.version, rt, tt.want, c.PullPath)
		}
		h, ok := fb.Headers["mirror.lab.test"]
		if !ok || h.Username != "hdr-user" || h.Source.Name != "/etc/containerd/certs.d/registry.lab.test/hosts.toml" {
			t.Errorf("%s: header credential %q from %q", tt.version, h.Username, h.Source.Name)
		}
		if a := fb.ConfigAuth["mirror.lab.test"]; a.Username != "k3s-user" || a.Password != secret || !strings.Contains(a.Name(), `registry.configs."mirror.lab.test".auth`) {
			t.Errorf("%s: config auth %q %q", tt.version, a.Username, a.Name())
		}
		if a := fb.ConfigAuth["other.lab.test"]; a.Username != "b64-user" || a.Password != secret {
			t.Errorf("%s: config auth from auth: %q", tt.version, a.Username)
		}
		if _, ok := fb.ConfigAuth["bad.lab.test"]; ok || len(notes) != 1 || !strings.Contains(notes[0], "bad.lab.test") {
			t.Errorf("%s: bad auth: notes %q", tt.version, notes)
		}
		var shown []string
		shown = append(shown, notes...)
		for _, c := range fb.ConfigAuth {
			shown = append(shown, c.Name())
		}
		for _, c := range fb.Headers {
			shown = append(shown, c.Name())
		}
		routes := keychain.Route(rt, "registry.lab.test", "app", []keychain.Host{keychain.PlanHost{Host: "mirror.lab.test", Mirror: true}, keychain.PlanHost{Host: "registry.lab.test"}}, nil, fb)
		for _, r := range routes {
			shown = append(shown, r.Presented(), r.Why)
		}
		for _, n := range keychain.HeaderNotes(routes, nil, true) {
			shown = append(shown, n.Message)
		}
		for _, s := range shown {
			if strings.Contains(s, secret) || strings.Contains(s, hdr) {
				t.Errorf("a secret in %q", s)
			}
		}
	}
}
