package runtimecfg

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// ConfigAuth is one registry.configs."<host>".auth of the CRI plugin's
// merged configuration: k3s and RKE2 write mirror credentials there
// (registries.yaml configs.<host>.auth), and Bottlerocket renders
// settings.container-registry.credentials there
// (bottlerocket-os/bottlerocket packages/containerd/containerd-config-toml_k8s,
// docker.io under "registry-1.docker.io"). containerd's CRI plugin uses
// it for a host only when the kubelet's request has no AuthConfig.
//
// Username, Password and IdentityToken are secrets' carriers: never
// print them; Source and Host name the entry.
type ConfigAuth struct {
	Host          string
	Username      string
	Password      string
	IdentityToken string
	// Source is the table, with the main configuration file.
	Source string
}

// ConfigAuths returns the registry.configs.*.auth entries, by host (the
// host as containerd's credentials callback receives it: host[:port]).
// An auth whose "auth" field does not decode is left out with the reason
// in bad (no secret in it).
func (c *Config) ConfigAuths() (out map[string]ConfigAuth, bad []string) {
	main := ""
	for _, s := range c.Settings {
		if s.Key == "config file" {
			main = s.Value
		}
	}
	for _, h := range sortedKeys(c.reg.Configs) {
		a := c.reg.Configs[h].Auth
		if a == nil {
			continue
		}
		str := func(k string) string { s, _ := a[k].(string); return s }
		ca := ConfigAuth{Host: h, Username: str("username"), Password: str("password"), IdentityToken: str("identitytoken"),
			Source: fmt.Sprintf("registry.configs.%q.auth of %s", h, main)}
		// ParseAuth: username first, then identitytoken, then auth.
		if ca.Username == "" && ca.IdentityToken == "" && str("auth") != "" {
			dec, err := base64.StdEncoding.DecodeString(str("auth"))
			u, p, ok := strings.Cut(string(dec), ":")
			if err != nil || !ok {
				bad = append(bad, fmt.Sprintf("%s: auth is not base64 of user:password, containerd refuses the pull's credentials for %s", ca.Source, h))
				continue
			}
			ca.Username, ca.Password = u, strings.Trim(p, "\x00")
		}
		if ca.Username == "" && ca.Password == "" && ca.IdentityToken == "" {
			continue
		}
		if out == nil {
			out = map[string]ConfigAuth{}
		}
		out[h] = ca
	}
	return out, bad
}
