package cluster

import (
	"fmt"
	"strings"
)

// poolIdentities says per pool which identity a pull would present
// : a pull secret with an entry for the registry, else what the
// probe on one of the pool's nodes found running the kubelet's credential
// provider (probe --as-kubelet is the probe's default), else what the
// registry host suggests, else anonymous.
func (a *analysis) poolIdentities() {
	secret := ""
	for _, ps := range a.rep.Identity.PullSecrets {
		if ps.Matches {
			secret = ps.Name
			break
		}
	}
	for i := range a.rep.Pools {
		pl := &a.rep.Pools[i]
		switch {
		case secret != "":
			pl.Identity = "pull secret " + secret
		default:
			pl.Identity = a.probedIdentity(pl.Name)
		}
		if pl.Identity != "" {
			continue
		}
		if prov := a.rep.Identity.Provider; prov != "" {
			name, _, _ := strings.Cut(prov, " ")
			pl.Identity = "kubelet credential provider " + name + " expected (not probed)"
		} else {
			pl.Identity = "anonymous (no pull secret matches; not probed)"
		}
	}
}

// probedIdentity is the identity the first finished probe of pool used,
// or "" when no probe of the pool got that far.
func (a *analysis) probedIdentity(pool string) string {
	for _, nd := range a.rep.Nodes {
		if nd.Pool != pool || nd.Probe == nil || nd.Probe.Report == nil {
			continue
		}
		rep := nd.Probe.Report
		cp := rep.CredentialProvider
		switch {
		case cp == nil:
			return fmt.Sprintf("%s (probed on %s; no kubelet credential provider config seen)", rep.Identity, nd.Name)
		case cp.Provider != "" && cp.Error == "":
			return fmt.Sprintf("kubelet credential provider %s (probed on %s)", cp.Provider, nd.Name)
		case cp.Error == "no provider matches the image":
			return fmt.Sprintf("anonymous: no kubelet credential provider in %s matches the image (probed on %s)", cp.Config, nd.Name)
		case cp.Provider != "":
			return fmt.Sprintf("anonymous: kubelet credential provider %s gave nothing: %s (probed on %s)", cp.Provider, rep.Verdict.Cause, nd.Name)
		default:
			// E.g. a probe pod that does not mount the provider's directory.
			return fmt.Sprintf("not known: the probe on %s could not use the kubelet's credential provider setup (%s)", nd.Name, cp.Error)
		}
	}
	return ""
}
