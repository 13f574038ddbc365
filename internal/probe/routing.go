package probe

import (
	"path/filepath"
	"strings"

	"github.com/pullpath/pullpath/internal/keychain"
	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/registry"
	"github.com/pullpath/pullpath/internal/runtimecfg"
)

// RuntimeRouting is the node runtime's credential rule for a plan: which
// containerd rule applies (version and pull path, as runtimecfg decided
// them) and the runtime's own credentials read from the node root, the
// hosts.toml Authorization headers of the plan's hosts and
// registry.configs."<host>".auth of config.toml (k3s, RKE2, Bottlerocket).
// notes say what could not be read, with no secret in them. A nil c is
// containerd 1.6's rule with no runtime credentials. root is the node root
// the hosts were read under (their files are named as node paths).
func RuntimeRouting(c *runtimecfg.Config, root string, hosts []nodeview.RegistryHost) (keychain.Runtime, keychain.Fallbacks, []string) {
	rt := keychain.Containerd16
	var fb keychain.Fallbacks
	var notes []string
	if c != nil {
		rt = keychain.Containerd(c.Runtime.Major(), c.Runtime.Minor(), c.PullPath)
		auths, bad := c.ConfigAuths()
		notes = append(notes, bad...)
		for h, a := range auths {
			if fb.ConfigAuth == nil {
				fb.ConfigAuth = map[string]keychain.Credential{}
			}
			fb.ConfigAuth[h] = keychain.ConfigAuthCredential(h, a.Source, a.Username, a.Password, a.IdentityToken)
		}
	}
	for _, h := range hosts {
		src := h.Source
		if root != "" && root != "/" {
			if rel, err := filepath.Rel(root, src); err == nil && !strings.HasPrefix(rel, "..") {
				src = "/" + rel
			}
		}
		if src == "" {
			src = "hosts.toml"
		}
		if cred, ok := keychain.HeaderCredential(src, h.Header); ok {
			if fb.Headers == nil {
				fb.Headers = map[string]keychain.Credential{}
			}
			fb.Headers[h.Host] = cred
		}
	}
	return rt, fb, notes
}

// configAuthCreds is what containerd presents host when the kubelet's
// request carries no AuthConfig: the host's registry.configs auth of
// config.toml (RuntimeRouting), nil when there is none. The probe holds it
// from then on, so the report redacts it.
func (p *prober) configAuthCreds(host string) *registry.Credentials {
	if p.rep.RuntimeConfig == nil || p.rep.RuntimeConfig.Config == nil {
		return nil
	}
	auths, _ := p.rep.RuntimeConfig.ConfigAuths()
	a, ok := auths[host]
	if !ok {
		return nil
	}
	c := keychain.ConfigAuthCredential(host, a.Source, a.Username, a.Password, a.IdentityToken)
	rc := &registry.Credentials{Username: c.Username, Password: c.Password, Source: c.Name()}
	p.mirrorCreds = append(p.mirrorCreds, rc)
	return rc
}

// crioAuthCreds is what containers/image presents host for a CRI-O pull
// whose request carries no credential: the key of the pull's auth file
// (the pod namespace's namespaced file when it exists, else
// global_auth_file; runtimecfg crioRoutes), nil when it asks anonymously.
// The probe holds it from then on, so the report redacts it.
func (p *prober) crioAuthCreds(host string) *registry.Credentials {
	rc := p.rep.RuntimeConfig
	if rc == nil || rc.Plan == nil {
		return nil
	}
	c := rc.Plan.CRIOCredential(host)
	if c == nil {
		return nil
	}
	out := &registry.Credentials{Username: c.Username, Password: c.Password, Source: c.Name()}
	p.mirrorCreds = append(p.mirrorCreds, out)
	return out
}
