package nodeview

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/nodeview/credtest"
	"github.com/pullpath/pullpath/internal/verdict"
)

func TestRunProvider(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("provider tests skipped: a provider runs chrooted in the node root, which needs root (hack/test.sh runs them as root)")
	}
	root := t.TempDir()
	binDir := "/var/lib/kubelet/credential-provider"
	hostBin := filepath.Join(root, binDir)
	if err := os.MkdirAll(hostBin, 0o755); err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(credtest.Build(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hostBin, "lab-provider"), bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hostBin, "not-executable"), []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The provider runs chrooted in root: it logs to a node path.
	log := filepath.Join(root, "requests")
	const secret = "s3cr3t-from-the-provider"
	writeFiles(t, root, map[string]string{"etc/kubernetes/azure.json": secret + "\n"})
	base := CredentialProvider{Name: "lab-provider", APIVersion: "credentialprovider.kubelet.k8s.io/v1", MatchImages: []string{"*.lab.test"},
		DefaultCacheDuration: &Duration{10 * time.Minute},
		Env:                  []ExecEnvVar{{"PP_KEY", "registry.lab.test"}, {"PP_USER", "puller"}, {"PP_PASS", secret}, {"PP_CONFIG_ENV", "from-config"}}}
	with := func(f func(*CredentialProvider)) CredentialProvider {
		p := base
		p.Env = append([]ExecEnvVar{}, base.Env...)
		f(&p)
		return p
	}
	tests := []struct {
		name      string
		p         CredentialProvider
		image     string
		wantCause string
		wantUser  string
	}{
		{name: "good", p: with(func(p *CredentialProvider) { p.Args = []string{"good", "--extra"} }), image: "registry.lab.test/team/shop", wantUser: "puller"},
		{name: "node paths are the node root's (chroot)", p: with(func(p *CredentialProvider) {
			p.Env = append(p.Env, ExecEnvVar{"PP_PASS_FILE", "/etc/kubernetes/azure.json"})
		}), image: "registry.lab.test/team/shop", wantUser: "puller"},
		{name: "v1beta1 provider", p: with(func(p *CredentialProvider) { p.APIVersion = "credentialprovider.kubelet.k8s.io/v1beta1" }), image: "registry.lab.test/team/shop", wantUser: "puller"},
		{name: "returns credentials for another host", p: with(func(p *CredentialProvider) { p.Env[0].Value = "other.lab.test" }), image: "registry.lab.test/team/shop", wantCause: "auth.provider-no-credentials"},
		{name: "exits non-zero", p: with(func(p *CredentialProvider) { p.Args = []string{"fail"} }), image: "registry.lab.test/team/shop", wantCause: "auth.provider-failed"},
		{name: "answers in another apiVersion", p: with(func(p *CredentialProvider) { p.Args = []string{"version"} }), image: "registry.lab.test/team/shop", wantCause: "auth.provider-failed"},
		{name: "times out", p: with(func(p *CredentialProvider) { p.Args = []string{"sleep"} }), image: "registry.lab.test/team/shop", wantCause: "auth.provider-timeout"},
		{name: "binary missing", p: with(func(p *CredentialProvider) { p.Name = "ecr-credential-provider" }), image: "registry.lab.test/team/shop", wantCause: "config.credential-provider-binary"},
		{name: "binary not executable", p: with(func(p *CredentialProvider) { p.Name = "not-executable" }), image: "registry.lab.test/team/shop", wantCause: "config.credential-provider-binary"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(log)
			res, err := RunProvider(context.Background(), root, binDir, tt.p, tt.image, ExecOptions{Timeout: time.Second, Environ: []string{"PP_REQUEST_LOG=/requests", "PATH=/usr/bin:/bin"}})
			if tt.wantCause != "" {
				ve, ok := verdict.AsError(err)
				if !ok || ve.Cause != tt.wantCause {
					t.Fatalf("RunProvider = %v, want cause %s", err, tt.wantCause)
				}
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error holds the provider's credential: %v", err)
				}
				if tt.wantCause == "auth.provider-failed" && tt.p.Args[0] == "fail" && (res == nil || !strings.Contains(res.Stderr, "identity endpoint")) {
					t.Errorf("the provider's stderr was not kept: %+v", res)
				}
				return
			}
			if err != nil {
				t.Fatalf("RunProvider: %v", err)
			}
			if len(res.Creds) != 1 || res.Creds[0].Username != tt.wantUser || res.Creds[0].Password != secret || res.Keys[0] != "registry.lab.test" {
				t.Errorf("credentials = %v under %v, want %s under registry.lab.test", res.Creds, res.Keys, tt.wantUser)
			}
			if res.CacheDuration != 5*time.Minute || res.CacheKeyType != "Registry" {
				t.Errorf("cache = %s %s, want the response's 5m Registry", res.CacheKeyType, res.CacheDuration)
			}
			req, err := os.ReadFile(log)
			if err != nil {
				t.Fatalf("the provider logged no request: %v", err)
			}
			wantReq := `request={"apiVersion":"` + tt.p.APIVersion + `","kind":"CredentialProviderRequest","image":"registry.lab.test/team/shop"}`
			if !strings.Contains(string(req), wantReq) || !strings.Contains(string(req), "env=from-config") {
				t.Errorf("the provider saw %q, want %s and the config's env", req, wantReq)
			}
			if len(tt.p.Args) > 0 && !strings.Contains(string(req), "args="+strings.Join(tt.p.Args, ",")) {
				t.Errorf("the provider saw %q, want args %v", req, tt.p.Args)
			}
		})
	}
}

func TestCheckProviderOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("ownership test skipped: it needs files owned by root (run as root, as hack/test.sh does in CI)")
	}
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"bin/ok": "x", "open/p": "x"})
	if err := os.Chmod(filepath.Join(root, "bin/ok"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "open"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := CheckProviderOwner(root, "/bin", "ok"); err != nil {
		t.Errorf("CheckProviderOwner(root-owned 0755) = %v, want nil", err)
	}
	if err := CheckProviderOwner(root, "/open", "p"); err == nil || !strings.Contains(err.Error(), "/open (-rwxrwxrwx) is not owned by root or is writable") {
		t.Errorf("CheckProviderOwner(under a 0777 directory) = %v, want the directory named", err)
	}
	if err := CheckProviderOwner(root, "/bin", "missing"); err != nil {
		t.Errorf("CheckProviderOwner(missing) = %v, want nil (RunProvider reports it)", err)
	}
}
