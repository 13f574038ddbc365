package probe

import (
	"errors"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/keychain"
	"github.com/pullpath/pullpath/internal/registry"
	"github.com/pullpath/pullpath/internal/verdict"
)

// TestTryEach checks the kubelet's loop over its credentials
// (kuberuntime_image.go PullImage) as the probe runs it: one pull per
// credential until one works, the verdict the failure furthest along when
// all fail, and which identity the report then names. The lab tests in
// internal/cli (TestProbeSeveralProviders) run the same loop against a real
// registry.
func TestTryEach(t *testing.T) {
	held := func(n int) []attempt {
		var out []attempt
		for i := range n {
			name := string(rune('a' + i))
			out = append(out, attempt{
				creds: &registry.Credentials{Username: "user-" + name, Password: "pass-" + name, Source: "kubelet credential provider p-" + name},
				cred:  &keychain.Credential{Source: keychain.Source{Kind: keychain.KindProvider, Name: "p-" + name}, Key: "reg.test"},
				info:  &CredentialProvider{Provider: "p-" + name, MatchedKey: "reg.test"},
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
		name     string
		n        int
		results  []error // what each pull returns, in order
		want     error   // nil, or the error returned (compared by identity)
		identity string
		failed   int // "credential N of M" warnings
	}{
		{"the first pulls", 3, []error{nil}, nil, "user-a", 0},
		{"one credential: one pull", 1, []error{first}, first, "user-a", 0},
		{"rejected, then accepted", 3, []error{bad(), nil}, nil, "user-b", 1},
		{"rejected twice, then accepted", 3, []error{bad(), bad(), nil}, nil, "user-c", 2},
		{"all rejected alike: the first's failure", 2, []error{first, bad()}, first, "user-a", 2},
		{"rejected, then denied: the denial, furthest along", 2, []error{bad(), denied}, denied, "user-b", 2},
		{"a DNS failure comes before any credential", 3, []error{nxdomain}, nxdomain, "user-a", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &prober{rep: &Report{CredentialProvider: &CredentialProvider{}}}
			var tries []string
			got := p.tryEach(held(tt.n), func(a attempt) error {
				tries = append(tries, a.creds.Username)
				if len(tries) > len(tt.results) {
					t.Fatalf("pull %d with %s: more than expected", len(tries), a.creds.Username)
				}
				return tt.results[len(tries)-1]
			})
			if len(tries) != len(tt.results) {
				t.Errorf("pulled with %v, want %d pulls", tries, len(tt.results))
			}
			for i, u := range tries {
				if want := "user-" + string(rune('a'+i)); u != want {
					t.Errorf("pull %d used %s, want %s (the kubelet's order)", i+1, u, want)
				}
			}
			if tt.want == nil && got != nil || tt.want != nil && !errors.Is(got, tt.want) {
				t.Errorf("returned %v, want %v", got, tt.want)
			}
			if !strings.Contains(p.rep.Identity, tt.identity) {
				t.Errorf("identity %q, want %s", p.rep.Identity, tt.identity)
			}
			if p.rep.CredentialProvider.Provider != "p-"+tt.identity[len("user-"):] {
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
			if tt.results[0] == nxdomain && (len(p.rep.Warnings) != 1 || p.rep.Warnings[0].Code != "auth.provider-several-credentials") {
				t.Errorf("warnings %+v, want one saying the other credentials are not tried", p.rep.Warnings)
			}
		})
	}
	// An anonymous pull because a provider failed fails with the
	// provider's cause, where the registry refused it.
	cause := verdict.Errorf("auth.provider-failed", verdict.RoleNone, "", "provider x exited 1")
	p := &prober{rep: &Report{}}
	got := p.tryEach([]attempt{{creds: &registry.Credentials{}, cause: cause}}, func(attempt) error {
		return verdict.Errorf("auth.no-credentials", verdict.RoleRegistry, "reg.test:443", "401")
	})
	ve, _ := verdict.AsError(got)
	if ve == nil || ve.Cause != "auth.provider-failed" || ve.Endpoint != "reg.test:443" || !strings.Contains(ve.Detail, "the anonymous pull then failed") {
		t.Errorf("anonymous attempt after a provider failure = %+v", ve)
	}
}
