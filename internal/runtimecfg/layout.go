package runtimecfg

import (
	"debug/buildinfo"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/verdict"
)

// A layout is a distribution's way of laying out containerd: where its
// configuration is, which binary runs it, and what it is generated from.
type layout struct {
	name string
	// config is the containerd configuration the distribution starts
	// containerd with.
	config string
	// binaries hold the runtime (their Go build information names the
	// containerd module they embed).
	binaries []string
	// registries is the file the configuration is generated from (k3s and
	// RKE2's registries.yaml), "" when none.
	registries string
}

// layouts are recognised by their configuration file, in this order; the
// plain containerd layout is the fallback.
var layouts = []layout{
	{name: "k3s", config: "/var/lib/rancher/k3s/agent/etc/containerd/config.toml",
		binaries: []string{"/usr/local/bin/k3s", "/usr/bin/k3s"}, registries: "/etc/rancher/k3s/registries.yaml"},
	{name: "rke2", config: "/var/lib/rancher/rke2/agent/etc/containerd/config.toml",
		binaries: []string{"/var/lib/rancher/rke2/bin/containerd", "/usr/local/bin/rke2", "/usr/bin/rke2"}, registries: "/etc/rancher/rke2/registries.yaml"},
	{name: "talos", config: "/etc/cri/containerd.toml", binaries: []string{"/bin/containerd", "/usr/bin/containerd"}},
}

// detectLayout returns the distribution layout found under root, or nil.
func detectLayout(root string) *layout {
	for i, l := range layouts {
		if hp, err := nodeview.InRoot(root, l.config); err == nil {
			if fi, err := os.Stat(hp); err == nil && fi.Mode().IsRegular() {
				return &layouts[i]
			}
		}
	}
	return nil
}

// embeddedContainerd reads the containerd version a distribution binary
// embeds (k3s and RKE2 link containerd as a module, often replaced by
// their fork: github.com/k3s-io/containerd/v2 v2.0.5-k3s1).
func embeddedContainerd(root string, l *layout) (nodeview.RuntimeBinary, bool) {
	for _, b := range l.binaries {
		hp, err := nodeview.InRoot(root, b)
		if err != nil {
			continue
		}
		bi, err := buildinfo.ReadFile(hp)
		if err != nil {
			continue
		}
		rb := nodeview.RuntimeBinary{Path: b, GoVersion: bi.GoVersion, ModulePath: bi.Main.Path, ModuleVersion: bi.Main.Version}
		if strings.HasPrefix(bi.Main.Path, "github.com/containerd/containerd") {
			return rb, true
		}
		for _, d := range bi.Deps {
			if strings.HasPrefix(d.Path, "github.com/containerd/containerd") && !strings.Contains(strings.TrimPrefix(d.Path, "github.com/containerd/containerd"), "/api") {
				m := d
				if d.Replace != nil {
					m = d.Replace
				}
				rb.ModulePath, rb.ModuleVersion = d.Path, m.Version
				return rb, true
			}
		}
	}
	return nodeview.RuntimeBinary{}, false
}

// k3sRegistries is registries.yaml as k3s and RKE2 read it.
type k3sRegistries struct {
	Mirrors map[string]struct {
		Endpoint []string          `json:"endpoint"`
		Rewrite  map[string]string `json:"rewrite"`
	} `json:"mirrors"`
	Configs map[string]struct {
		Auth *struct {
			Username string `json:"username"`
		} `json:"auth"`
		TLS *struct {
			CAFile             string `json:"ca_file"`
			InsecureSkipVerify bool   `json:"insecure_skip_verify"`
		} `json:"tls"`
	} `json:"configs"`
}

// compareRegistries names the differences between registries.yaml and the
// files k3s/RKE2 generated from it (a restart not yet done, or a custom
// config.toml.tmpl that drops a stanza).
func (c *Config) compareRegistries(l *layout) {
	data, _, err := nodeview.ReadInRoot(c.root, l.registries)
	if err != nil {
		return
	}
	c.Files = append(c.Files, ConfigFile{Path: l.registries, Version: 0})
	var ry k3sRegistries
	if err := yaml.Unmarshal(data, &ry); err != nil {
		c.warn(verdict.CodeConfigRegistriesYaml, fmt.Sprintf("%s: %v: %s refuses to start on a registries.yaml it cannot parse; the generated files read here are from before the change", l.registries, err, l.name))
		return
	}
	for _, host := range sortedKeys(ry.Mirrors) {
		m := ry.Mirrors[host]
		want := []string{}
		for _, e := range m.Endpoint {
			if u, err := url.Parse(e); err == nil && u.Host != "" {
				want = append(want, u.Host)
			} else {
				want = append(want, e)
			}
		}
		got, dir := c.generatedHosts(host)
		var missing []string
		for _, w := range want {
			if !slices.Contains(got, w) {
				missing = append(missing, w)
			}
		}
		if len(missing) > 0 {
			where := "no hosts.toml for " + host + " under " + strings.Join(c.HostsDirs, ":")
			if dir != "" {
				where = dir + "/hosts.toml lacks them"
			}
			c.warn(verdict.CodeConfigRegistriesStale, fmt.Sprintf("%s names mirror endpoint(s) %s for %s, but %s: %s has not been restarted since registries.yaml changed (it generates the files at start), so the runtime does not use them yet", l.registries, strings.Join(missing, ", "), host, where, l.name))
		}
	}
	for _, host := range sortedKeys(ry.Configs) {
		if ry.Configs[host].Auth == nil {
			continue
		}
		if cfg, ok := c.reg.Configs[host]; !ok || cfg.Auth == nil {
			c.warn(verdict.CodeConfigK3sTemplateAuth, fmt.Sprintf("%s has an auth for %s, but the generated containerd configuration has no registry.configs.%q.auth: a custom config.toml.tmpl dropped the auth stanza, or %s has not been restarted, so pulls through %s go without these credentials", l.registries, host, host, l.name, host))
		}
	}
}

// generatedHosts lists the hosts a generated hosts.toml for registry names
// (mirrors and server), and its directory (node path).
func (c *Config) generatedHosts(registry string) ([]string, string) {
	for _, d := range c.HostsDirs {
		for _, name := range []string{registry, strings.ReplaceAll(registry, ":", "_") + "_"} {
			p := filepath.Join(d, name, "hosts.toml")
			data, _, err := nodeview.ReadInRoot(c.root, p)
			if err != nil {
				continue
			}
			var hosts []string
			for _, line := range strings.Split(string(data), "\n") {
				line = strings.TrimSpace(line)
				var raw string
				switch {
				case strings.HasPrefix(line, "[host."):
					raw = strings.Trim(strings.TrimSuffix(strings.TrimPrefix(line, "[host."), "]"), `"'`)
				case strings.HasPrefix(line, "server"):
					_, v, _ := strings.Cut(line, "=")
					raw = strings.Trim(strings.TrimSpace(v), `"'`)
				default:
					continue
				}
				if !strings.Contains(raw, "://") {
					raw = "https://" + raw
				}
				if u, err := url.Parse(raw); err == nil {
					hosts = append(hosts, u.Host)
				}
			}
			return hosts, filepath.Join(d, name)
		}
	}
	return nil, ""
}
