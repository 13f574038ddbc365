package cluster

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
)

// testKubeconfig has two contexts on two clusters with two users; the
// current context "dev" has namespace "shop".
const testKubeconfig = `apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster: {server: "https://127.0.0.1:6443"}
- name: prod-cluster
  cluster: {server: "https://127.0.0.2:6443"}
users:
- name: dev-user
  user: {token: dev-token}
- name: prod-user
  user: {token: prod-token}
contexts:
- name: dev
  context: {cluster: dev-cluster, user: dev-user, namespace: shop}
- name: prod
  context: {cluster: prod-cluster, user: prod-user}
`

// writeKubeconfig writes content to dir/name and returns its path.
func writeKubeconfig(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// kubeFlags parses args into fresh KubeFlags with env as the environment
// and no in-cluster config.
func kubeFlags(t *testing.T, env map[string]string, args ...string) *KubeFlags {
	t.Helper()
	k := NewKubeFlags()
	k.env = func(key string) string { return env[key] }
	k.inCluster = func() error { return rest.ErrNotInCluster }
	fs := pflag.NewFlagSet("diagnose", pflag.ContinueOnError)
	k.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parsing %q: %v", args, err)
	}
	return k
}

func TestKubeFlagsPrecedence(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	homeConfig := writeKubeconfig(t, home, ".kube/config", testKubeconfig)
	// A second file whose current context is prod: --kubeconfig and
	// $KUBECONFIG must win over ~/.kube/config.
	other := writeKubeconfig(t, dir, "other", strings.Replace(testKubeconfig, "current-context: dev", "current-context: prod", 1))
	envHome := map[string]string{"HOME": home}

	type want struct {
		ns, server, token, user string
		groups                  []string
		extra                   map[string][]string
		insecure                bool
		timeout                 time.Duration
	}
	dev := want{ns: "shop", server: "https://127.0.0.1:6443", token: "dev-token"}
	prod := want{ns: "default", server: "https://127.0.0.2:6443", token: "prod-token"}
	with := func(w want, f func(*want)) want { f(&w); return w }
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want want
	}{
		{"current context from ~/.kube/config, -n defaults to its namespace", envHome, nil, dev},
		{"-n wins over the context's namespace", envHome, []string{"-n", "other"}, with(dev, func(w *want) { w.ns = "other" })},
		{"--namespace ns/NAME is NAME, like kubectl", envHome, []string{"--namespace", "ns/other"}, with(dev, func(w *want) { w.ns = "other" })},
		{"--context switches cluster, user and namespace", envHome, []string{"--context", "prod"}, prod},
		{"--cluster and --user override the context's", envHome, []string{"--cluster", "prod-cluster", "--user", "prod-user"},
			with(prod, func(w *want) { w.ns = "shop" })},
		{"--server and --token override the kubeconfig's", envHome, []string{"-s", "https://127.0.0.9:6443", "--token", "flag-token"},
			with(dev, func(w *want) { w.server, w.token = "https://127.0.0.9:6443", "flag-token" })},
		{"impersonation", envHome, []string{"--as", "jane", "--as-group", "a", "--as-group", "b", "--as-user-extra", "k=1", "--as-user-extra", "k=2"},
			with(dev, func(w *want) {
				w.user, w.groups, w.extra = "jane", []string{"a", "b"}, map[string][]string{"k": {"1", "2"}}
			})},
		{"--insecure-skip-tls-verify and --request-timeout", envHome, []string{"--insecure-skip-tls-verify", "--request-timeout", "5s"},
			with(dev, func(w *want) { w.insecure, w.timeout = true, 5*time.Second })},
		{"$KUBECONFIG wins over ~/.kube/config", map[string]string{"HOME": home, "KUBECONFIG": other}, nil, prod},
		{"$KUBECONFIG is a list, the first file's current context wins",
			map[string]string{"HOME": home, "KUBECONFIG": filepath.Join(dir, "absent") + string(filepath.ListSeparator) + homeConfig + string(filepath.ListSeparator) + other}, nil, dev},
		{"--kubeconfig wins over $KUBECONFIG", map[string]string{"HOME": home, "KUBECONFIG": homeConfig}, []string{"--kubeconfig", other}, prod},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := kubeFlags(t, tt.env, tt.args...)
			ns, err := k.Namespace()
			if err != nil {
				t.Fatalf("Namespace: %v", err)
			}
			cfg, err := k.RESTConfig()
			if err != nil {
				t.Fatalf("RESTConfig: %v", err)
			}
			got := want{ns: ns, server: cfg.Host, token: cfg.BearerToken, user: cfg.Impersonate.UserName,
				groups: cfg.Impersonate.Groups, extra: cfg.Impersonate.Extra, insecure: cfg.Insecure, timeout: cfg.Timeout}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKubeFlagsNoKubeconfig(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")

	t.Run("none anywhere", func(t *testing.T) {
		k := kubeFlags(t, map[string]string{"HOME": home})
		_, err := k.Namespace()
		if !errors.Is(err, ErrNoKubeconfig) || !IsConfigError(err) {
			t.Fatalf("Namespace() = %v, want ErrNoKubeconfig as a config error", err)
		}
		for _, want := range []string{filepath.Join(home, ".kube", "config") + " (no such file)", "$KUBECONFIG is not set", "KUBERNETES_SERVICE_HOST is not set", "--kubeconfig"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
	})
	t.Run("$KUBECONFIG names only absent files", func(t *testing.T) {
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		k := kubeFlags(t, map[string]string{"HOME": home, "KUBECONFIG": a + string(filepath.ListSeparator) + b})
		_, err := k.Clientset()
		if !errors.Is(err, ErrNoKubeconfig) || !strings.Contains(err.Error(), a+" (no such file), "+b+" (no such file)") {
			t.Fatalf("Clientset() = %v, want ErrNoKubeconfig naming %s and %s", err, a, b)
		}
	})
	t.Run("explicit --kubeconfig that does not exist", func(t *testing.T) {
		writeKubeconfig(t, home, ".kube/config", testKubeconfig) // must not be used instead
		missing := filepath.Join(dir, "missing")
		k := kubeFlags(t, map[string]string{"HOME": home}, "--kubeconfig", missing)
		_, err := k.Namespace()
		if err == nil || !IsConfigError(err) || !strings.Contains(err.Error(), missing) {
			t.Fatalf("Namespace() = %v, want a config error naming %s", err, missing)
		}
	})
	t.Run("--server alone needs no kubeconfig", func(t *testing.T) {
		k := kubeFlags(t, map[string]string{"HOME": filepath.Join(dir, "empty")}, "--server", "https://127.0.0.1:6443", "-n", "x")
		cfg, err := k.RESTConfig()
		if err != nil || cfg.Host != "https://127.0.0.1:6443" {
			t.Fatalf("RESTConfig() = %v, %v; want host https://127.0.0.1:6443", cfg, err)
		}
	})
	t.Run("in a cluster", func(t *testing.T) {
		k := kubeFlags(t, map[string]string{"HOME": filepath.Join(dir, "empty")})
		k.inCluster = func() error { return nil }
		if err := k.checkFound(k.loadingRules()); err != nil {
			t.Fatalf("checkFound in a cluster = %v, want nil", err)
		}
	})
	t.Run("bad --as-user-extra", func(t *testing.T) {
		writeKubeconfig(t, home, ".kube/config", testKubeconfig)
		k := kubeFlags(t, map[string]string{"HOME": home}, "--as-user-extra", "novalue")
		if _, err := k.RESTConfig(); err == nil || !IsConfigError(err) || !strings.Contains(err.Error(), "KEY=VALUE") {
			t.Fatalf("RESTConfig() = %v, want an error asking for KEY=VALUE", err)
		}
	})
}

// TestKubeFlagsNamesLikeKubectl pins the flag set to kubectl's (cli-runtime's
// ConfigFlags), which diagnose had before: a user's kubectl habits work.
func TestKubeFlagsNamesLikeKubectl(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	NewKubeFlags().AddFlags(fs)
	var got []string
	fs.VisitAll(func(f *pflag.Flag) {
		name := "--" + f.Name
		if f.Shorthand != "" {
			name = "-" + f.Shorthand + "/" + name
		}
		got = append(got, name)
	})
	want := []string{"--as", "--as-group", "--as-uid", "--as-user-extra", "--cache-dir", "--certificate-authority",
		"--client-certificate", "--client-key", "--cluster", "--context", "--disable-compression", "--insecure-skip-tls-verify",
		"--kubeconfig", "-n/--namespace", "--proxy-url", "--request-timeout", "-s/--server", "--tls-server-name", "--token", "--user"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("flags (-want +got):\n%s", diff)
	}
}
