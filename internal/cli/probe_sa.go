package cli

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/pullpath/pullpath/internal/nodeview"
)

// saFlags are probe's KEP-4412 flags.
type saFlags struct {
	serviceAccount string   // NS/NAME
	tokenFile      string   // a token already issued (a projected token)
	annotations    []string // KEY=VALUE of the service account
}

func (s *saFlags) add(f *pflag.FlagSet) {
	f.StringVar(&s.serviceAccount, "service-account", "", "run a kubelet credential provider that takes the pod's service-account token (tokenAttributes, KEP-4412) as for a pod of service account NS/NAME; the token comes from the API server (TokenRequest, needs create on serviceaccounts/token and get on serviceaccounts) or --service-account-token-file")
	f.StringVar(&s.tokenFile, "service-account-token-file", "", "a token of the --service-account for the provider's audience (e.g. a projected serviceAccountToken volume); the only way in pullpath-node")
	f.StringArrayVar(&s.annotations, "service-account-annotation", nil, "KEY=VALUE: an annotation of the --service-account, with --service-account-token-file (repeatable)")
}

// resolver checks the flags and returns the probe's ServiceAccount
// function, nil without --service-account. tokens is the binary's
// Features.ServiceAccountTokens (nil without a Kubernetes client).
func (s *saFlags) resolver(tokens func(ctx context.Context, ns, name, audience string) (*nodeview.ServiceAccount, error)) (func(context.Context, string) (*nodeview.ServiceAccount, error), error) {
	if s.serviceAccount == "" {
		if s.tokenFile != "" || len(s.annotations) > 0 {
			return nil, usageErrorf("--service-account-token-file and --service-account-annotation need --service-account NS/NAME")
		}
		return nil, nil
	}
	ns, name, ok := strings.Cut(s.serviceAccount, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return nil, invalidFlag("service-account", s.serviceAccount, "NAMESPACE/NAME")
	}
	ann := map[string]string{}
	for _, a := range s.annotations {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return nil, invalidFlag("service-account-annotation", a, "KEY=VALUE")
		}
		ann[k] = v
	}
	if s.tokenFile == "" {
		if len(ann) > 0 {
			return nil, usageErrorf("--service-account-annotation goes with --service-account-token-file; without it the annotations are read from the API server")
		}
		if tokens == nil {
			return nil, usageErrorf("--service-account needs --service-account-token-file in this build (pullpath-node has no Kubernetes client); the full pullpath asks the API server")
		}
		return func(ctx context.Context, audience string) (*nodeview.ServiceAccount, error) {
			return tokens(ctx, ns, name, audience)
		}, nil
	}
	file := s.tokenFile
	return func(_ context.Context, audience string) (*nodeview.ServiceAccount, error) {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("reading --service-account-token-file: %w", err)
		}
		tok := strings.TrimSpace(string(b))
		return &nodeview.ServiceAccount{Namespace: ns, Name: name, Annotations: ann, Token: tok, Audience: tokenAudience(tok, audience)}, nil
	}, nil
}

// tokenAudience returns want when the JWT's aud claim holds it, else the
// first audience it names, else "" (not a JWT: not checked). The claims are
// read, not verified: the registry verifies the token.
func tokenAudience(tok, want string) string {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var claims struct {
		Aud json.RawMessage `json:"aud"`
	}
	if json.Unmarshal(b, &claims) != nil {
		return ""
	}
	var auds []string
	if json.Unmarshal(claims.Aud, &auds) != nil {
		var one string
		if json.Unmarshal(claims.Aud, &one) != nil {
			return ""
		}
		auds = []string{one}
	}
	if slices.Contains(auds, want) {
		return want
	}
	if len(auds) > 0 {
		return auds[0]
	}
	return ""
}
