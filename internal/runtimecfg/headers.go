package runtimecfg

import "net/http"

// Headers are the extra headers containerd adds, for the plan host whose
// hosts.toml [header] table is host, to that host's requests (req) and to
// the token requests that host's challenge draws (token):
//   - req: config.toml's registry.headers (the resolver's headers:
//     docker.ResolverOptions.Headers, every version), then the host's own
//     values appended (remotes/docker resolver.go newRequest);
//   - token, before 2.1: none (remotes/docker/auth fetch.go is given no
//     header by the CRI plugin, 1.6.20 to 2.0.7);
//   - token, 2.1 and later (containerd PR #11092): the host's hosts.toml
//     headers (config.ConfigureHosts: docker.WithAuthHeader(host.header)),
//     and registry.headers too on the CRI plugin's local pull
//     (internal/cri/server/images/image_pull.go registryHosts:
//     AuthorizerOpts), not on the transfer service's
//     (core/transfer/registry NewOCIRegistry passes them to the resolver
//     only).
//
// CRI-O (containers/image) sends no configured header; a nil c is
// containerd 1.6 with no registry.headers.
func (c *Config) Headers(host http.Header) (req, token http.Header) {
	if c != nil && c.crio != nil {
		return nil, nil
	}
	var global http.Header
	if c != nil {
		for k, vs := range c.reg.Headers {
			if global == nil {
				global = http.Header{}
			}
			// As written: containerd converts the table to an
			// http.Header without canonicalising its keys.
			global[k] = append(global[k], vs...)
		}
	}
	req = joinHeaders(global, host)
	if !c.HostHeadersOnTokens() {
		return req, nil
	}
	if c.PullPath == PullLocal {
		return req, joinHeaders(global, host)
	}
	return req, joinHeaders(nil, host)
}

// HostHeadersOnTokens reports whether the runtime sends a host's hosts.toml
// headers on the token requests that host's challenge draws: containerd
// 2.1 and later (Headers).
func (c *Config) HostHeadersOnTokens() bool {
	return c != nil && c.crio == nil && c.Runtime.AtLeast(2, 1)
}

// joinHeaders is a copy of a with b's values appended, nil when both are empty.
func joinHeaders(a, b http.Header) http.Header {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	out := a.Clone()
	if out == nil {
		out = http.Header{}
	}
	for k, vs := range b {
		out[k] = append(out[k], vs...)
	}
	return out
}
