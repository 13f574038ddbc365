package cli

import (
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/labtest"
	"github.com/pullpath/pullpath/internal/nodeview/credtest"
)

// buildCredProvider builds the test credential provider.
func buildCredProvider(t *testing.T) string { return credtest.Build(t) }

// skipUnlessRoot skips: a provider runs chrooted in the node root.
func skipUnlessRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("kubelet provider tests skipped: a provider runs chrooted in the node root, which needs root (hack/test.sh runs them as root)")
	}
}

// kubeletNode is a node root for the kubelet-identity tests.
type kubeletNode struct {
	provider    string   // the built provider binary
	mode        string   // its first argument: good, fail, sleep, version
	key         string   // the auth key it returns
	user, pass  string   // and the credentials under it
	matchImages []string // the config's matchImages
	noBinary    bool     // leave the provider out of the bin dir
	noConfig    bool     // the kubelet's flag names a file that is not there
	binMode     os.FileMode
	extra       string // appended to the provider's entry (e.g. tokenAttributes)
}

// root copies the scenario's node root and adds a kubelet unit whose flags
// (in /etc/default/kubelet, as on AKS) name a CredentialProviderConfig for
// the test provider.
func (n kubeletNode) root(t *testing.T, base string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(base)); err != nil {
		t.Fatalf("copying the node root: %v", err)
	}
	cfg := credtest.Config(credtest.Provider{MatchImages: n.matchImages, Mode: n.mode, Key: n.key, User: n.user, Pass: n.pass}) + n.extra
	files := map[string]string{
		"etc/systemd/system/kubelet.service": "[Service]\nEnvironmentFile=/etc/default/kubelet\nExecStart=/usr/local/bin/kubelet --v=2 $KUBELET_FLAGS\n",
		"etc/default/kubelet":                "KUBELET_FLAGS=--image-credential-provider-bin-dir=/var/lib/kubelet/credential-provider --image-credential-provider-config=/var/lib/kubelet/credential-provider-config.yaml\n",
	}
	if !n.noConfig {
		files["var/lib/kubelet/credential-provider-config.yaml"] = cfg
	}
	for name, content := range files {
		f := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	binDir := filepath.Join(root, "var/lib/kubelet/credential-provider")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if !n.noBinary {
		data, err := os.ReadFile(n.provider)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(binDir, "lab-provider"), data, cmp.Or(n.binMode, 0o755)); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(binDir, "lab-provider"), cmp.Or(n.binMode, 0o755)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestProbeAsKubelet runs probe against the lab's token-auth registry with
// the kubelet's credential provider as the only identity: good, wrong and
// timing-out credentials, and each way the provider setup can be broken.
// Every run is checked for the provider's password in every form, in text
// and JSON, stdout and stderr.
func TestProbeAsKubelet(t *testing.T) {
	skipUnlessRoot(t)
	l := labtest.New(t, lab.Options{})
	sc := labtest.Scenario(t, l, "healthy-auth")
	host := sc.Image[:strings.IndexByte(sc.Image, '/')]
	provider := buildCredProvider(t)
	const canary = "pp-canary-Kub3let9Qx-secret"
	good := kubeletNode{provider: provider, mode: "good", key: host, user: sc.Username, pass: sc.Password, matchImages: []string{host}}
	with := func(f func(*kubeletNode)) kubeletNode { n := good; f(&n); return n }
	tests := []struct {
		name     string
		node     kubeletNode
		args     []string
		wantExit int
		want     []string // in the text output
		cause    string   // the JSON verdict's cause
	}{
		{"good credentials", good, nil, ExitOK, []string{"The pull path works"}, ""},
		{"auto: on when the node has a config", good, []string{"--as-kubelet=true"}, ExitOK, []string{"The pull path works"}, ""},
		{"wrong credentials", with(func(n *kubeletNode) { n.pass = canary }), nil, ExitFailure,
			[]string{"auth.bad-credentials", `kubelet credential provider lab-provider`}, "auth.bad-credentials"},
		{"provider times out", with(func(n *kubeletNode) { n.mode = "sleep" }), []string{"--credential-provider-timeout", "300ms"}, ExitFailure,
			[]string{"auth.provider-timeout", "context deadline exceeded"}, "auth.provider-timeout"},
		{"provider exits non-zero, a token on its stderr", with(func(n *kubeletNode) { n.mode = "fail"; n.pass = canary }), nil, ExitFailure,
			[]string{"auth.provider-failed", "exit status 1", "its stderr: getting a token from the identity endpoint: 400 Bad Request: access_token="}, "auth.provider-failed"},
		{"provider answers in another apiVersion", with(func(n *kubeletNode) { n.mode = "version" }), nil, ExitFailure,
			[]string{"auth.provider-failed", "did not match expected apiVersion"}, "auth.provider-failed"},
		{"no credentials for this host", with(func(n *kubeletNode) { n.key = "other.lab.test" }), nil, ExitFailure,
			[]string{"auth.provider-no-credentials", "other.lab.test"}, "auth.provider-no-credentials"},
		{"no provider matches", with(func(n *kubeletNode) { n.matchImages = []string{"*.azurecr.io"} }), nil, ExitFailure,
			[]string{"auth.provider-no-match", "*.azurecr.io"}, "auth.provider-no-match"},
		{"binary missing", with(func(n *kubeletNode) { n.noBinary = true }), []string{"--as-kubelet"}, ExitFailure,
			[]string{"config.credential-provider-binary", "did not exist"}, "config.credential-provider-binary"},
		{"config missing", with(func(n *kubeletNode) { n.noConfig = true }), []string{"--as-kubelet"}, ExitFailure,
			[]string{"config.credential-provider", "credential-provider-config.yaml"}, "config.credential-provider"},
		// By default a config or binary the probe cannot see is a warning
		// only: a probe pod may mount only part of the host.
		{"auto: binary missing is a warning", with(func(n *kubeletNode) { n.noBinary = true }), nil, ExitFailure,
			[]string{"auth.provider-unusable", "did not exist", "auth.no-credentials"}, "auth.no-credentials"},
		{"auto: config missing is a warning", with(func(n *kubeletNode) { n.noConfig = true }), nil, ExitFailure,
			[]string{"auth.provider-unusable", "credential-provider-config.yaml", "auth.no-credentials"}, "auth.no-credentials"},
		// Unasked, only a provider that root installed runs; asked, it does.
		{"auto: a group-writable provider is not run", with(func(n *kubeletNode) { n.binMode = 0o775 }), nil, ExitFailure,
			[]string{"auth.provider-unusable", "not running kubelet credential provider lab-provider unasked", "writable by group or others", "auth.no-credentials"}, "auth.no-credentials"},
		{"--as-kubelet: a group-writable provider is run", with(func(n *kubeletNode) { n.binMode = 0o775 }), []string{"--as-kubelet"}, ExitOK, []string{"The pull path works"}, ""},
		{"--as-kubelet on a node without a config", with(func(n *kubeletNode) { n.noConfig = true }), []string{"--as-kubelet", "--root", sc.Root}, ExitFailure,
			[]string{"config.credential-provider", "has no --image-credential-provider-config"}, "config.credential-provider"},
		{"--as-kubelet=false: anonymous", good, []string{"--as-kubelet=false"}, ExitFailure, []string{"auth.no-credentials"}, "auth.no-credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := tt.node.root(t, sc.Root)
			for _, format := range []string{"text", "json"} {
				args := probeArgs(l, sc, append([]string{"--root", root, "-o", format}, tt.args...)...)
				code, out, stderr := runCLI(t, "", args...)
				if code != tt.wantExit {
					t.Fatalf("pullpath %v: exit %d, want %d\n%s%s", args, code, tt.wantExit, out, stderr)
				}
				if format == "text" {
					if os.Getenv("PULLPATH_SHOW_KUBELET") != "" {
						t.Logf("%s", out)
					}
					for _, w := range tt.want {
						if !strings.Contains(out, w) {
							t.Errorf("text output lacks %q:\n%s", w, out)
						}
					}
				} else {
					var rep struct {
						Verdict            struct{ Cause string }
						Identity           string
						CredentialProvider *struct {
							Config  string   `json:"config"`
							Matched []string `json:"matched"`
						} `json:"credential_provider"`
					}
					if err := json.Unmarshal([]byte(out), &rep); err != nil {
						t.Fatalf("-o json: %v\n%s", err, out)
					}
					wantCause := tt.cause
					if wantCause == "" {
						wantCause = "ok" // an ok verdict says cause ok (CONTRACT)
					}
					if rep.Verdict.Cause != wantCause {
						t.Errorf("JSON verdict cause %q, want %q", rep.Verdict.Cause, wantCause)
					}
					wantCP := !strings.Contains(strings.Join(tt.args, " "), "--as-kubelet=false") && !strings.HasSuffix(tt.name, "without a config")
					if wantCP != (rep.CredentialProvider != nil) || (wantCP && rep.CredentialProvider.Config != "/var/lib/kubelet/credential-provider-config.yaml") {
						t.Errorf("credential_provider = %+v, want it present: %v", rep.CredentialProvider, wantCP)
					}
				}
				for _, f := range append(canaryForms(tt.node.user, tt.node.pass), canaryForms(sc.Username, sc.Password)...) {
					if strings.Contains(out, f) || strings.Contains(stderr, f) {
						t.Errorf("%s output shows a provider credential as %q:\n%s%s", format, f, out, stderr)
					}
				}
			}
		})
	}
}
