// Package credtest builds the test kubelet credential provider
// (internal/nodeview/testdata/credprovider, a real program speaking the
// kubelet's protocol) and writes the CredentialProviderConfig that runs it,
// for the tests of nodeview, cli and the node tier.
package credtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Build go-builds the provider (static, CGO_ENABLED=0, so that it runs
// chrooted in a node root) into a temporary directory and returns its path.
// It skips the test when there is no go command.
func Build(tb testing.TB) string {
	tb.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		tb.Skip("credential provider tests skipped: no go command in PATH to build the test provider (hack/test.sh runs them)")
	}
	_, self, _, _ := runtime.Caller(0)
	bin := filepath.Join(tb.TempDir(), "lab-provider")
	cmd := exec.Command(goBin, "build", "-o", bin, ".")
	cmd.Dir = filepath.Join(filepath.Dir(self), "..", "testdata", "credprovider")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("building the test provider: %v\n%s", err, out)
	}
	return bin
}

// Provider is the test provider's entry in a CredentialProviderConfig.
type Provider struct {
	MatchImages []string
	Mode        string // good, fail, sleep or version
	Key         string // the auth key it returns
	User, Pass  string // the credentials under it
}

// Config returns a CredentialProviderConfig (kubelet.config.k8s.io/v1)
// with the provider named lab-provider.
func Config(p Provider) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1
kind: CredentialProviderConfig
providers:
  - name: lab-provider
    matchImages: [%s]
    defaultCacheDuration: 10m
    apiVersion: credentialprovider.kubelet.k8s.io/v1
    args: [%s]
    env:
      - {name: PP_KEY, value: %q}
      - {name: PP_USER, value: %q}
      - {name: PP_PASS, value: %q}
`, `"`+strings.Join(p.MatchImages, `", "`)+`"`, p.Mode, p.Key, p.User, p.Pass)
}

// NodeRoot copies the node root base into a new directory and lays out the
// kubelet's credential provider there as AKS does: the flags in
// /etc/default/kubelet (read by the kubelet unit), the config cfg at
// /var/lib/kubelet/credential-provider-config.yaml and the provider binary
// at /var/lib/kubelet/credential-provider/lab-provider with mode binMode.
// It returns the new root.
func NodeRoot(tb testing.TB, base, provider, cfg string, binMode os.FileMode) string {
	tb.Helper()
	root := tb.TempDir()
	if err := os.CopyFS(root, os.DirFS(base)); err != nil {
		tb.Fatalf("copying the node root: %v", err)
	}
	bin, err := os.ReadFile(provider)
	if err != nil {
		tb.Fatal(err)
	}
	for name, f := range map[string]struct {
		data []byte
		mode os.FileMode
	}{
		"etc/systemd/system/kubelet.service":               {[]byte("[Service]\nEnvironmentFile=/etc/default/kubelet\nExecStart=/usr/local/bin/kubelet --v=2 $KUBELET_FLAGS\n"), 0o644},
		"etc/default/kubelet":                              {[]byte("KUBELET_FLAGS=--image-credential-provider-bin-dir=/var/lib/kubelet/credential-provider --image-credential-provider-config=/var/lib/kubelet/credential-provider-config.yaml\n"), 0o644},
		"var/lib/kubelet/credential-provider-config.yaml":  {[]byte(cfg), 0o600},
		"var/lib/kubelet/credential-provider/lab-provider": {bin, binMode},
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, f.data, f.mode); err != nil {
			tb.Fatal(err)
		}
		if err := os.Chmod(p, f.mode); err != nil { // past the umask
			tb.Fatal(err)
		}
	}
	return root
}
