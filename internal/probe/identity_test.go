package probe_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/labtest"
	"github.com/pullpath/pullpath/internal/probe"
)

// TestIdentityIsTheRuntimes: when the kubelet sends no credential, the
// runtime presents its own (containerd's registry.configs auth, CRI-O's
// global_auth_file), and the report's identity names that one, not
// "anonymous", on success and in the verdict's "Identity used" line. With
// none, the identity stays anonymous. No secret reaches the report.
func TestIdentityIsTheRuntimes(t *testing.T) {
	l := labtest.New(t, lab.Options{Addrs: labAddrs(23)})
	sc := labtest.Scenario(t, l, "healthy-auth")
	configAuth := func(pass string) map[string]string {
		return map[string]string{"etc/containerd/config.toml": fmt.Sprintf("version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".registry]\n  config_path = \"/etc/containerd/certs.d\"\n[plugins.\"io.containerd.grpc.v1.cri\".registry.configs.%q.auth]\n  username = %q\n  password = %q\n", l.Registry, sc.Username, pass)}
	}
	authFile := func(pass string) map[string]string {
		a := base64.StdEncoding.EncodeToString([]byte(sc.Username + ":" + pass))
		return map[string]string{
			"etc/crio/crio.conf": "[crio.image]\nglobal_auth_file = \"/etc/crio/auth.json\"\n",
			"etc/crio/auth.json": fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, l.Registry, a),
		}
	}
	wrong := "wrong-" + sc.Password[:6]
	for _, tt := range []struct {
		name      string
		files     map[string]string
		wantCause string // "" for OK
		wantID    string // in Identity
	}{
		{"no runtime credential", nil, "auth.no-credentials", "anonymous"},
		{"containerd registry.configs auth", configAuth(sc.Password), "", `registry.configs."` + l.Registry + `".auth`},
		{"containerd registry.configs auth, wrong password", configAuth(wrong), "auth.bad-credentials", `registry.configs."` + l.Registry + `".auth`},
		{"CRI-O global_auth_file", authFile(sc.Password), "", "/etc/crio/auth.json"},
		{"CRI-O global_auth_file, wrong password", authFile(wrong), "auth.bad-credentials", "/etc/crio/auth.json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := copyRoot(t, sc.Root)
			layFiles(t, root, tt.files)
			rep, err := probe.Run(context.Background(), sc.Image, probe.Options{Root: root, Platform: sc.Platform, Timeout: 2 * time.Second, DNSPort: l.DNSPort, Blobs: probe.BlobsHead})
			if err != nil {
				t.Fatal(err)
			}
			wantVerdict(t, rep, tt.wantCause)
			if !strings.Contains(rep.Identity, tt.wantID) || tt.wantID != "anonymous" && !strings.Contains(rep.Identity, sc.Username) {
				t.Errorf("identity %q, want the runtime's credential (%s)", rep.Identity, tt.wantID)
			}
			if tt.wantCause != "" {
				next := strings.Join(rep.Verdict.Next, "\n")
				if !strings.Contains(next, "Identity used: "+rep.Identity) {
					t.Errorf("the verdict does not name the identity %q:\n%s", rep.Identity, next)
				}
			}
			out := fmt.Sprintf("%+v", rep)
			if strings.Contains(out, sc.Password) {
				t.Error("the report holds the password")
			}
		})
	}
}

// TestNodeDockerConfigKeyring: with no pull secret, the probe holds the
// kubelet's node docker config from the node root, in the kubelet's order;
// a file that does not decode is passed over with a warning; a config.json
// without auths ends the search, as in the kubelet; --no-node-docker-config
// leaves them out.
func TestNodeDockerConfigKeyring(t *testing.T) {
	l := labtest.New(t, lab.Options{Addrs: labAddrs(24)})
	sc := labtest.Scenario(t, l, "healthy-auth")
	good := fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, l.Registry, base64.StdEncoding.EncodeToString([]byte(sc.Username+":"+sc.Password)))
	for _, tt := range []struct {
		name      string
		files     map[string]string
		off       bool
		wantCause string // "" for OK
		wantID    string
		wantWarn  string
		unseen    bool // the verdict says the kubelet's root dir was not under the root
	}{
		{name: "kubelet root dir", files: map[string]string{"var/lib/kubelet/config.json": good}, wantID: "/var/lib/kubelet/config.json"},
		{name: "left out", files: map[string]string{"var/lib/kubelet/config.json": good}, off: true, wantCause: "auth.no-credentials", wantID: "anonymous"},
		{name: "a broken file is passed over", files: map[string]string{"var/lib/kubelet/config.json": "{", ".docker/config.json": good}, wantID: "/.docker/config.json", wantWarn: "auth.node-docker-config-skipped"},
		{name: "a config.json without auths ends the search", files: map[string]string{"var/lib/kubelet/config.json": "{}", ".docker/config.json": good}, wantCause: "auth.no-credentials", wantID: "anonymous"},
		{name: "no kubelet root dir under the root", wantCause: "auth.no-credentials", wantID: "anonymous", unseen: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := copyRoot(t, sc.Root)
			layFiles(t, root, tt.files)
			rep, err := probe.Run(context.Background(), sc.Image, probe.Options{Root: root, Platform: sc.Platform, Timeout: 2 * time.Second, DNSPort: l.DNSPort, Blobs: probe.BlobsHead, NoNodeDockerConfig: tt.off})
			if err != nil {
				t.Fatal(err)
			}
			wantVerdict(t, rep, tt.wantCause)
			if !strings.Contains(rep.Identity, tt.wantID) {
				t.Errorf("identity %q, want %s", rep.Identity, tt.wantID)
			}
			if got := strings.Contains(strings.Join(rep.Verdict.Next, "\n"), "was not read"); got != tt.unseen {
				t.Errorf("the verdict says the node docker config was not read: %v, want %v: %q", got, tt.unseen, rep.Verdict.Next)
			}
			if tt.wantWarn != "" && !hasWarning(rep, tt.wantWarn) {
				t.Errorf("no %s warning: %v", tt.wantWarn, rep.Warnings)
			}
			if out := fmt.Sprintf("%+v", rep); strings.Contains(out, sc.Password) {
				t.Error("the report holds the password")
			}
		})
	}
}

// layFiles writes files (path under root → content) under root.
func layFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// wantVerdict stops the test unless rep's verdict is OK (cause "") or
// has cause.
func wantVerdict(t *testing.T, rep *probe.Report, cause string) {
	t.Helper()
	switch {
	case cause == "" && !rep.Verdict.OK:
		t.Fatalf("verdict %+v, want OK", rep.Verdict)
	case cause != "" && rep.Verdict.Cause != cause:
		t.Fatalf("verdict %+v, want %s", rep.Verdict, cause)
	}
}
