package nodeview

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pullpath/pullpath/internal/nodeview/credtest"
	"github.com/pullpath/pullpath/internal/verdict"
)

func saProvider(ta *ServiceAccountTokenAttributes) CredentialProvider {
	return CredentialProvider{Name: "acr-credential-provider", APIVersion: "credentialprovider.kubelet.k8s.io/v1", MatchImages: []string{"*.azurecr.io"},
		DefaultCacheDuration: &Duration{10 * time.Minute}, TokenAttributes: ta}
}

// TestProviderServiceAccount: what the kubelet sends a provider for a pod's
// service account, and when it does not run the provider at all
// (pluginProvider.provide, getServiceAccountData).
func TestProviderServiceAccount(t *testing.T) {
	yes, no := true, false
	aks := &ServiceAccountTokenAttributes{ServiceAccountTokenAudience: "api://AKSIdentityBinding", CacheType: "ServiceAccount", RequireServiceAccount: &yes,
		RequiredServiceAccountAnnotationKeys: []string{"kubernetes.azure.com/acr-client-id"}, OptionalServiceAccountAnnotationKeys: []string{"kubernetes.azure.com/acr-tenant-id", "absent"}}
	sa := &ServiceAccount{Namespace: "shop", Name: "puller", UID: "u-1", Token: "tok", Audience: "api://AKSIdentityBinding",
		Annotations: map[string]string{"kubernetes.azure.com/acr-client-id": "cid", "kubernetes.azure.com/acr-tenant-id": "tid", "unrelated": "x"}}
	with := func(f func(*ServiceAccount)) *ServiceAccount {
		c := *sa
		c.Annotations = map[string]string{}
		for k, v := range sa.Annotations {
			c.Annotations[k] = v
		}
		f(&c)
		return &c
	}
	tests := []struct {
		name      string
		ta        *ServiceAccountTokenAttributes
		sa        *ServiceAccount
		wantToken string
		wantAnn   map[string]string
		wantErr   string // a substring; "" for none
	}{
		{name: "no tokenAttributes: nothing sent, even with a service account", ta: nil, sa: sa},
		{name: "required and optional annotations, others dropped", ta: aks, sa: sa, wantToken: "tok",
			wantAnn: map[string]string{"kubernetes.azure.com/acr-client-id": "cid", "kubernetes.azure.com/acr-tenant-id": "tid"}},
		{name: "required annotation missing: not run", ta: aks, sa: with(func(s *ServiceAccount) { delete(s.Annotations, "kubernetes.azure.com/acr-client-id") }), wantErr: "requires the annotation kubernetes.azure.com/acr-client-id"},
		{name: "requireServiceAccount without one: not run", ta: aks, sa: nil, wantErr: "requires the pod's service account token"},
		{name: "service account optional: run without token", ta: &ServiceAccountTokenAttributes{ServiceAccountTokenAudience: "aud", RequireServiceAccount: &no}, sa: nil},
		{name: "no annotation keys: token only", ta: &ServiceAccountTokenAttributes{ServiceAccountTokenAudience: "api://AKSIdentityBinding", RequireServiceAccount: &yes}, sa: sa, wantToken: "tok"},
		{name: "no token given", ta: aks, sa: with(func(s *ServiceAccount) { s.Token = "" }), wantErr: "needs a token of service account shop/puller"},
		{name: "token for another audience", ta: aks, sa: with(func(s *ServiceAccount) { s.Audience = "other" }), wantErr: `wants a token for audience "api://AKSIdentityBinding"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok, ann, err := providerServiceAccount(saProvider(tt.ta), tt.sa)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "tok\"") || strings.Contains(err.Error(), " tok ") {
					t.Errorf("the error holds the token: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tok != tt.wantToken {
				t.Errorf("token = %q, want %q", tok, tt.wantToken)
			}
			if diff := cmp.Diff(tt.wantAnn, ann); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRunProviderServiceAccount runs the test provider with a service
// account: the request carries serviceAccountToken and the selected
// serviceAccountAnnotations; a provider that echoes the token back as a
// password is refused unless cacheType is Token, as in the kubelet.
func TestRunProviderServiceAccount(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("provider tests skipped: a provider runs chrooted in the node root, which needs root (hack/test.sh runs them as root)")
	}
	root := t.TempDir()
	binDir := "/opt/credential-provider"
	if err := os.MkdirAll(filepath.Join(root, binDir), 0o755); err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(credtest.Build(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, binDir, "lab-provider"), bin, 0o755); err != nil {
		t.Fatal(err)
	}
	const token = "eyJhbGciOiJSUzI1NiJ9.pp-sa-token-canary.c2ln"
	yes := true
	p := CredentialProvider{Name: "lab-provider", APIVersion: "credentialprovider.kubelet.k8s.io/v1", MatchImages: []string{"*.lab.test"},
		DefaultCacheDuration: &Duration{time.Minute}, Args: []string{"good"},
		Env: []ExecEnvVar{{"PP_KEY", "registry.lab.test"}, {"PP_USER", "puller"}, {"PP_PASS", "provider-pass"}},
		TokenAttributes: &ServiceAccountTokenAttributes{ServiceAccountTokenAudience: "lab-audience", CacheType: "ServiceAccount", RequireServiceAccount: &yes,
			RequiredServiceAccountAnnotationKeys: []string{"lab.test/client-id"}}}
	sa := &ServiceAccount{Namespace: "shop", Name: "puller", Token: token, Audience: "lab-audience", Annotations: map[string]string{"lab.test/client-id": "c-1", "other": "o"}}
	opts := ExecOptions{Timeout: 5 * time.Second, Environ: []string{"PP_REQUEST_LOG=/requests", "PATH=/usr/bin:/bin"}, ServiceAccount: sa}

	res, err := RunProvider(context.Background(), root, binDir, p, "registry.lab.test/team/shop", opts)
	if err != nil {
		t.Fatalf("RunProvider: %v", err)
	}
	req, _ := os.ReadFile(filepath.Join(root, "requests"))
	want := `"serviceAccountToken":"` + token + `","serviceAccountAnnotations":{"lab.test/client-id":"c-1"}}`
	if !strings.Contains(string(req), want) {
		t.Errorf("the provider saw %s, want %s", req, want)
	}
	if got := res.Secrets(); len(got) != 2 || got[0] != token {
		t.Errorf("Secrets() = %d values, want the token and the password", len(got))
	}

	p.Args = []string{"echo"}
	_, err = RunProvider(context.Background(), root, binDir, p, "registry.lab.test/team/shop", opts)
	if ve, ok := verdict.AsError(err); !ok || ve.Cause != "auth.provider-failed" || strings.Contains(err.Error(), token) {
		t.Errorf("echoed token with cacheType ServiceAccount: %v, want auth.provider-failed without the token", err)
	}
	p.TokenAttributes.CacheType = CacheTypeToken
	res, err = RunProvider(context.Background(), root, binDir, p, "registry.lab.test/team/shop", opts)
	if err != nil || res.Creds[0].Password != token {
		t.Errorf("echoed token with cacheType Token: %v, want it accepted", err)
	}
}
