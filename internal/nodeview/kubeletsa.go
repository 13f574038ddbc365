package nodeview

import (
	"slices"

	"github.com/pullpath/pullpath/internal/verdict"
)

// ServiceAccount is the pod service account a provider with tokenAttributes
// (KEP-4412) is run for: its token for the provider's audience and the
// annotations the kubelet reads from it.
type ServiceAccount struct {
	Namespace, Name string
	UID             string
	// Annotations are the service account's annotations; the provider gets
	// only those its config names.
	Annotations map[string]string
	// Token is the service-account token for the provider's audience
	// (never printed).
	Token string
	// Audience is what Token was issued for; "" when not known (a token
	// file).
	Audience string
}

// String names the service account.
func (sa *ServiceAccount) String() string { return sa.Namespace + "/" + sa.Name }

// CacheTypeToken is tokenAttributes.cacheType "Token": the provider's
// credentials live as long as the token, and may be the token itself.
const CacheTypeToken = "Token"

// providerServiceAccount returns what the kubelet puts into p's request for
// the pod's service account sa (nil: the pod has none, or none was given):
// the token and the annotations named by requiredServiceAccountAnnotationKeys
// and optionalServiceAccountAnnotationKeys. As in the kubelet
// (pkg/credentialprovider/plugin/plugin.go, pluginProvider.provide and
// serviceAccountProvider.getServiceAccountData, v1.34), a provider without
// tokenAttributes gets neither, and a provider is not run at all when it
// requires a service account and there is none, or when a required
// annotation is missing: that is the returned error
// (auth.provider-service-account; the kubelet then pulls anonymously).
func providerServiceAccount(p CredentialProvider, sa *ServiceAccount) (string, map[string]string, error) {
	ta := p.TokenAttributes
	if ta == nil {
		return "", nil, nil
	}
	if sa == nil {
		if ta.RequireServiceAccount != nil && *ta.RequireServiceAccount {
			return "", nil, verdict.Errorf(verdict.CodeAuthProviderServiceAccount, verdict.RoleNone, "", "kubelet credential provider %s requires the pod's service account token (tokenAttributes.requireServiceAccount, audience %q): without a service account (--service-account NS/NAME) the kubelet does not run it", p.Name, ta.ServiceAccountTokenAudience)
		}
		return "", nil, nil
	}
	ann := map[string]string{}
	for _, k := range ta.RequiredServiceAccountAnnotationKeys {
		v, ok := sa.Annotations[k]
		if !ok {
			return "", nil, verdict.Errorf(verdict.CodeAuthProviderServiceAccount, verdict.RoleNone, "", "kubelet credential provider %s requires the annotation %s on service account %s, which it lacks: the kubelet does not run the provider for its pods", p.Name, k, sa)
		}
		ann[k] = v
	}
	for _, k := range ta.OptionalServiceAccountAnnotationKeys {
		if v, ok := sa.Annotations[k]; ok {
			ann[k] = v
		}
	}
	if sa.Token == "" {
		return "", nil, verdict.Errorf(verdict.CodeAuthProviderServiceAccount, verdict.RoleNone, "", "kubelet credential provider %s needs a token of service account %s for audience %q, and none was given", p.Name, sa, ta.ServiceAccountTokenAudience)
	}
	if sa.Audience != "" && sa.Audience != ta.ServiceAccountTokenAudience {
		return "", nil, verdict.Errorf(verdict.CodeAuthProviderServiceAccount, verdict.RoleNone, "", "kubelet credential provider %s wants a token for audience %q, the token of %s is for %q", p.Name, ta.ServiceAccountTokenAudience, sa, sa.Audience)
	}
	if len(ann) == 0 {
		ann = nil
	}
	return sa.Token, ann, nil
}

// checkEchoedToken is the kubelet's rule that a provider whose cacheType is
// not Token must not hand the service-account token back as a password.
func checkEchoedToken(p CredentialProvider, token string, auth map[string]AuthConfig) error {
	if token == "" || p.TokenAttributes == nil || p.TokenAttributes.CacheType == CacheTypeToken {
		return nil
	}
	keys := make([]string, 0, len(auth))
	for k := range auth {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if auth[k].Password == token {
			return verdict.Errorf(verdict.CodeAuthProviderFailed, verdict.RoleNone, "", "kubelet credential provider %s returned the service account token as the password for %s, which the kubelet refuses unless tokenAttributes.cacheType is Token", p.Name, k)
		}
	}
	return nil
}
