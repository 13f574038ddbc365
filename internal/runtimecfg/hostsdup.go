package runtimecfg

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/verdict"
)

// lintRepeatedEndpoints warns about an endpoint a hosts.toml lists twice.
// containerd keeps every [host] table and then the server, in file order,
// with no de-duplication (core/remotes/docker/config/hosts.go:
// parseHostsFile appends each host and the root host config;
// ConfigureHosts turns each into a RegistryHost), and its resolver and
// fetcher try each host in turn (core/remotes/docker/resolver.go Resolve:
// "trying next host" on an error, a 404 or a status above 399). The plan
// keeps both entries, as containerd does; this lint says what it costs.
func lintRepeatedEndpoints(p *Plan) []verdict.Warning {
	var out []verdict.Warning
	for i, e := range p.Endpoints {
		for j := 0; j < i; j++ {
			f := p.Endpoints[j]
			if e.Scheme != f.Scheme || e.Host != f.Host || e.Path != f.Path || e.TLS.HTTPFallback != f.TLS.HTTPFallback {
				continue
			}
			what := "a [host] table and server"
			if i < len(p.Endpoints)-1 {
				what = "two [host] tables"
			}
			out = append(out, verdict.Warning{Code: verdict.CodeConfigHostsServerRepeated, Endpoint: e.Host,
				Message: fmt.Sprintf("%s: %s name the same endpoint %s://%s%s: containerd keeps both and tries it twice in a row (plan orders %d and %d), so a failure there is met twice, each with its own timeout", e.Source, what, e.Scheme, e.Host, e.Path, j+1, i+1)})
			break
		}
	}
	return out
}

// lintHostsDirOS finds, when no host directory matched the registry, a
// directory that the other operating system's containerd would have read:
// a Linux name ("host:port") on a Windows node, whose containerd drops
// every colon (core/remotes/docker/config config_windows.go hostPaths),
// or a Windows name ("hostport") on a Linux node (config_unix.go).
// "host_port_" is read by both and never warned about.
func (c *Config) lintHostsDirOS(registry string) []verdict.Warning {
	other := nodeview.OSWindows
	if c.nodeOS == nodeview.OSWindows {
		other = "linux"
	}
	mine := nodeview.HostDirCandidates(c.nodeOS, registry)
	var out []verdict.Warning
	for _, d := range c.HostsDirs {
		for _, name := range nodeview.HostDirCandidates(other, registry) {
			if name == "_default" || slices.Contains(mine, name) {
				continue
			}
			hp, err := nodeview.InRoot(c.root, nodeview.NodePath(c.nodeOS, d))
			if err != nil {
				continue
			}
			if fi, err := os.Stat(filepath.Join(hp, name)); err == nil && fi.IsDir() {
				out = append(out, verdict.Warning{Code: verdict.CodeConfigHostsDirOs,
					Message: fmt.Sprintf("%s is named for containerd on %s: on this %s node containerd looks for %s under %s and never reads it", c.nodePath(filepath.Join(hp, name)), other, c.nodeOS, strings.Join(mine, ", then "), d)})
			}
		}
	}
	return out
}
