package probe

import (
	"errors"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/registry"
	"github.com/pullpath/pullpath/internal/verdict"
)

// TestNextCredentials checks the kubelet's loop over its credentials
// (kuberuntime_image.go PullImage) as the probe runs it: which failures
// move on to the next credential, which verdict stays when all fail, and
// which identity the report then names. The lab tests in internal/cli
// (TestProbeSeveralProviders) run the same loop against a real registry.
func TestNextCredentials(t *testing.T) {
	held := func(n int) []kubeletCredential {
		var out []kubeletCredential
		for i := range n {
			name := string(rune('a' + i))
			out = append(out, kubeletCredential{
				creds: &registry.Credentials{Username: "user-" + name, Password: "pass-" + name, Source: "kubelet credential provider p-" + name},
				info:  CredentialProvider{Provider: "p-" + name, MatchedKey: "reg.test"},
			})
		}
		return out
	}
	bad := func() *verdict.Error {
		return verdict.Errorf("auth.bad-credentials", verdict.RoleAuth, "auth.test:443", "401")
	}
	denied := verdict.Errorf("authz.denied", verdict.RoleRegistry, "reg.test:443", "403")
	nxdomain := verdict.Errorf("dns.nxdomain", verdict.RoleRegistry, "reg.test:443", "no such host")
	first := bad()
	tests := []struct {
		name      string
		n         int
		err       error
		results   []error // what each retry returns, in order
		wantTries int
		want      error // nil, or the error returned (compared by identity)
		identity  string
		failed    int // "credential N of M" warnings
	}{
		{"the first pulls", 3, nil, nil, 0, nil, "", 0},
		{"one credential: nothing to retry", 1, first, nil, 0, first, "", 0},
		{"rejected, then accepted", 3, bad(), []error{nil}, 1, nil, "user-b", 1},
		{"rejected twice, then accepted", 3, bad(), []error{bad(), nil}, 2, nil, "user-c", 2},
		{"all rejected alike: the first's failure", 2, first, []error{bad()}, 1, first, "user-a", 2},
		{"rejected, then denied: the denial, furthest along", 2, bad(), []error{denied}, 1, denied, "user-b", 2},
		{"a DNS failure comes before any credential", 3, nxdomain, nil, 0, nxdomain, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &prober{rep: &Report{CredentialProvider: &CredentialProvider{}}, kubeletHeld: held(tt.n)}
			var tries []string
			got := p.nextCredentials(tt.err, func(c *registry.Credentials) error {
				tries = append(tries, c.Username)
				if len(tries) > len(tt.results) {
					t.Fatalf("retry %d with %s: more than expected", len(tries), c.Username)
				}
				return tt.results[len(tries)-1]
			})
			if len(tries) != tt.wantTries {
				t.Errorf("retried with %v, want %d retries", tries, tt.wantTries)
			}
			for i, u := range tries {
				if want := "user-" + string(rune('b'+i)); u != want {
					t.Errorf("retry %d used %s, want %s (the kubelet's order)", i+1, u, want)
				}
			}
			if tt.want == nil && got != nil || tt.want != nil && !errors.Is(got, tt.want) {
				t.Errorf("returned %v, want %v", got, tt.want)
			}
			if tt.identity != "" && !strings.Contains(p.rep.Identity, tt.identity) {
				t.Errorf("identity %q, want %s", p.rep.Identity, tt.identity)
			}
			if tt.identity != "" && p.rep.CredentialProvider.Provider != "p-"+tt.identity[len("user-"):] {
				t.Errorf("credential_provider.provider %q does not match identity %s", p.rep.CredentialProvider.Provider, tt.identity)
			}
			failed := 0
			for _, w := range p.rep.Warnings {
				if strings.HasPrefix(w.Message, "credential ") {
					failed++
				}
				if strings.Contains(w.Message, "pass-") {
					t.Errorf("warning shows a password: %q", w.Message)
				}
			}
			if failed != tt.failed {
				t.Errorf("%d failed-attempt warnings, want %d: %+v", failed, tt.failed, p.rep.Warnings)
			}
			if tt.err == nxdomain && (len(p.rep.Warnings) != 1 || p.rep.Warnings[0].Code != "auth.provider-several-credentials") {
				t.Errorf("warnings %+v, want one saying the other credentials are not tried", p.rep.Warnings)
			}
		})
	}
}
