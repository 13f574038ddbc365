package cli

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/labtest"
)

// canaryForms are the forms a password can leak in: as it is, base64 of
// user:password (Basic, docker config auth), base64 of the password alone,
// URL-encoded, and JSON-escaped.
func canaryForms(user, pass string) []string {
	js, _ := json.Marshal(pass)
	forms := []string{
		pass,
		base64.StdEncoding.EncodeToString([]byte(user + ":" + pass)),
		base64.RawStdEncoding.EncodeToString([]byte(user + ":" + pass)),
		base64.StdEncoding.EncodeToString([]byte(pass)),
		url.QueryEscape(pass),
		strings.Trim(string(js), `"`),
	}
	return forms
}

// TestCredentialCanary runs probe with every way credentials enter
// (--username/--password-stdin, --docker-config, --pull-secret as JSON and
// YAML, the kubelet's credential provider with --as-kubelet) × every output (text, -o json, stderr) × a success, an auth failure
// and a blob failure, and greps everything printed for the password in each
// of its forms. The auth failure's password is a canary that nothing may
// repeat; the lab's real password is checked the same way.
func TestCredentialCanary(t *testing.T) {
	l := labtest.New(t, lab.Options{})
	healthy := labtest.Scenario(t, l, "healthy-auth")
	blobFail := labtest.Scenario(t, l, "blob-refused")
	const canary = "pp-canary-7Hq2Zx9Lm4-secret"
	provider := buildCredProvider(t) // the kubelet's credential provider entry
	runs := []struct {
		name     string
		sc       lab.Scenario
		pass     string
		wantExit int
		want     string
	}{
		{"success", healthy, healthy.Password, ExitOK, "The pull path works"},
		{"auth failure", healthy, canary, ExitFailure, "auth.bad-credentials"},
		{"blob failure", blobFail, blobFail.Password, ExitFailure, blobFail.Expect.Cause},
		{"echoing registry", echoRegistry(t), canary, ExitFailure, "authz.denied"},
	}
	type entry struct {
		name string
		args func(t *testing.T, sc lab.Scenario, user, pass string) (stdin string, args []string)
	}
	host := func(sc lab.Scenario) string { return sc.Image[:strings.IndexByte(sc.Image, '/')] }
	dockerConfig := func(sc lab.Scenario, user, pass string) []byte {
		cfg, _ := json.Marshal(map[string]any{"auths": map[string]any{host(sc): map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))}}})
		return cfg
	}
	entries := []entry{
		{"--password-stdin", func(t *testing.T, sc lab.Scenario, user, pass string) (string, []string) {
			return pass + "\n", []string{"--username", user, "--password-stdin"}
		}},
		{"--docker-config", func(t *testing.T, sc lab.Scenario, user, pass string) (string, []string) {
			f := filepath.Join(t.TempDir(), "config.json")
			if err := os.WriteFile(f, dockerConfig(sc, user, pass), 0o600); err != nil {
				t.Fatal(err)
			}
			return "", []string{"--docker-config", f}
		}},
		{"--pull-secret json", func(t *testing.T, sc lab.Scenario, user, pass string) (string, []string) {
			secret, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/dockerconfigjson",
				"metadata": map[string]string{"name": "pull"}, "data": map[string]string{".dockerconfigjson": base64.StdEncoding.EncodeToString(dockerConfig(sc, user, pass))}})
			f := filepath.Join(t.TempDir(), "secret.json")
			if err := os.WriteFile(f, secret, 0o600); err != nil {
				t.Fatal(err)
			}
			return "", []string{"--pull-secret", f}
		}},
		{"--as-kubelet", func(t *testing.T, sc lab.Scenario, user, pass string) (string, []string) {
			skipUnlessRoot(t)
			n := kubeletNode{provider: provider, mode: "good", key: host(sc), user: user, pass: pass, matchImages: []string{host(sc)}}
			return "", []string{"--root", n.root(t, sc.Root), "--as-kubelet"}
		}},
		{"--pull-secret yaml stringData", func(t *testing.T, sc lab.Scenario, user, pass string) (string, []string) {
			y := fmt.Sprintf("apiVersion: v1\nkind: Secret\ntype: kubernetes.io/dockerconfigjson\nmetadata:\n  name: pull\nstringData:\n  .dockerconfigjson: '%s'\n", dockerConfig(sc, user, pass))
			f := filepath.Join(t.TempDir(), "secret.yaml")
			if err := os.WriteFile(f, []byte(y), 0o600); err != nil {
				t.Fatal(err)
			}
			return "", []string{"--pull-secret", f}
		}},
	}
	for _, run := range runs {
		for _, e := range entries {
			for _, format := range []string{"text", "json"} {
				t.Run(run.name+"/"+e.name+"/"+format, func(t *testing.T) {
					stdin, cargs := e.args(t, run.sc, run.sc.Username, run.pass)
					args := probeArgs(l, run.sc, append(cargs, "-o", format, "--progress")...)
					code, out, stderr := runCLI(t, stdin, args...)
					if code != run.wantExit {
						t.Fatalf("pullpath %v: exit %d, want %d\n%s%s", args, code, run.wantExit, out, stderr)
					}
					if !strings.Contains(out, run.want) {
						t.Errorf("output does not say %q:\n%s", run.want, out)
					}
					for _, f := range canaryForms(run.sc.Username, run.pass) {
						if strings.Contains(out, f) || strings.Contains(stderr, f) {
							t.Errorf("the output shows the password as %q", f)
						}
					}
				})
			}
		}
	}
}

// TestCredentialCanaryErrors checks that credential files that cannot be
// used are refused without repeating what they hold.
func TestCredentialCanaryErrors(t *testing.T) {
	const canary = "pp-canary-Err0r5Zx9-secret"
	dir := t.TempDir()
	// A node root whose resolver is a closed loopback port: the credential
	// error comes before any lookup, and a lookup could not leave loopback.
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/resolv.conf"), []byte("nameserver 127.0.0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString([]byte("puller:" + canary))
	files := map[string]string{
		"auth not base64":       `{"auths":{"registry.example":{"auth":"` + canary + `!"}}}`,
		"auth without colon":    `{"auths":{"registry.example":{"auth":"` + base64.StdEncoding.EncodeToString([]byte(canary)) + `"}}}`,
		"truncated json":        `{"auths":{"registry.example":{"auth":"` + b64 + `"`,
		"secret data not b64":   "kind: Secret\ntype: kubernetes.io/dockerconfigjson\ndata:\n  .dockerconfigjson: " + canary + "!\n",
		"secret wrong key":      "kind: Secret\ntype: Opaque\ndata:\n  password: " + b64 + "\n",
		"password in yaml junk": "kind: Secret\n\tpassword: " + canary + "\n",
	}
	for name, content := range files {
		f := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, flag := range []string{"--docker-config", "--pull-secret"} {
			for _, format := range []string{"text", "json"} {
				code, out, stderr := runCLI(t, "", "probe", "registry.example/app:1", "--root", root, flag, f, "-o", format, "--timeout", "1s")
				if code == ExitOK || !strings.Contains(out+stderr, "config.credentials") {
					t.Errorf("%s %s (%s): exit %d, want a config.credentials failure:\n%s%s", flag, name, format, code, out, stderr)
				}
				for _, form := range canaryForms("puller", canary) {
					if strings.Contains(out, form) || strings.Contains(stderr, form) {
						t.Errorf("%s %s (%s): output shows the password as %q:\n%s%s", flag, name, format, form, out, stderr)
					}
				}
			}
		}
	}
}

// echoRegistry is a registry on loopback that asks for Basic credentials
// and then refuses the pull with a body that repeats the request's headers
// and body, as misconfigured proxies and debug endpoints do.
func echoRegistry(t *testing.T) lab.Scenario {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			w.Header().Set("WWW-Authenticate", `Basic realm="echo"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		body, _ := io.ReadAll(io.LimitReader(r.Body, 4096))
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, "denied: map[Authorization:[%s]] body=%q %v", r.Header.Get("Authorization"), body, r.Header)
	}))
	t.Cleanup(srv.Close)
	root := t.TempDir()
	bundle := filepath.Join(root, "etc/ssl/certs/ca-certificates.crt")
	if err := os.MkdirAll(filepath.Dir(bundle), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/resolv.conf"), []byte("nameserver 127.0.0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return lab.Scenario{Name: "echo", Image: strings.TrimPrefix(srv.URL, "https://") + "/app:1", Root: root, Platform: "linux/amd64", Username: "puller"}
}
