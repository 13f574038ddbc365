package runtimecfg

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	tomlu "github.com/pelletier/go-toml/v2/unstable"

	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Plan is the runtime's ordered pull plan for one registry: every endpoint
// it tries, in its order. It is self-contained: a consumer needs nothing but
// Endpoints to know where a pull may go and how.
type Plan struct {
	// Registry is the registry host of the reference ("docker.io").
	Registry string `json:"registry"`
	// Mode is config_path or legacy (Config.Mode).
	Mode string `json:"registry_mode"`
	// HostsDir is the certs.d directory the runtime uses for Registry
	// (node path), "" when none (legacy mode, or no directory matches).
	HostsDir string `json:"hosts_dir,omitempty"`
	// Endpoints in the runtime's order; the last is the registry itself
	// unless a hosts.toml names a server elsewhere.
	Endpoints []Endpoint `json:"endpoints"`
	// Warnings are the lints of this registry's configuration.
	Warnings []verdict.Warning `json:"-"`
	// Hosts are the same endpoints as nodeview builds them for probing
	// (TLS configuration with the node trust store), index for index.
	Hosts []nodeview.RegistryHost `json:"-"`
	// CRIO holds what CRI-O's configuration says about the image beyond
	// the endpoints (crio_plan.go); nil for containerd.
	CRIO *CRIOFacts `json:"crio,omitempty"`
}

// Endpoint is one host the runtime tries for a registry.
type Endpoint struct {
	// Order is the 1-based position in which the runtime tries it.
	Order int `json:"order"`
	// Host is host[:port] as the runtime dials it; Scheme https or http;
	// Path the API root ("/v2", or hosts.toml's path with override_path).
	Host   string `json:"host"`
	Scheme string `json:"scheme"`
	Path   string `json:"path"`
	// Role is "mirror" or "registry".
	Role verdict.Role `json:"role"`
	// Capabilities are pull, resolve, push, referrers.
	Capabilities []string `json:"capabilities"`
	// Namespace is the ?ns= value the runtime adds to every request to this
	// endpoint (containerd adds it when the endpoint is not the registry).
	Namespace string `json:"ns,omitempty"`
	// OverridePath is true when Path is used as is (no /v2 appended).
	OverridePath bool `json:"override_path,omitempty"`
	TLS          TLS  `json:"tls"`
	// HeaderNames are the extra request headers' names (values may be
	// secrets and are not copied).
	HeaderNames []string `json:"header_names,omitempty"`
	// DialTimeout is the connect timeout the runtime uses.
	DialTimeout string `json:"dial_timeout"`
	// Source is where the endpoint comes from: "file[:line]", or "default"
	// for the registry the runtime adds itself.
	Source string `json:"source"`
	// Repository is the repository asked on this endpoint when the runtime
	// rewrites it (CRI-O: a [[registry]] location or mirror with a path).
	Repository string `json:"repository,omitempty"`
}

// TLS is an endpoint's TLS settings as the runtime applies them.
type TLS struct {
	// CAFiles are extra CA files (node paths), added to the node trust store.
	CAFiles []string `json:"ca,omitempty"`
	// ClientCerts are client certificate files (node paths), "cert" or
	// "cert+key".
	ClientCerts []string `json:"client,omitempty"`
	SkipVerify  bool     `json:"skip_verify,omitempty"`
	// HTTPFallback is true when the runtime tries HTTPS and falls back to
	// plain HTTP.
	HTTPFallback bool `json:"http_fallback,omitempty"`
}

// Tries reports whether the runtime tries the endpoint for a reference by
// tag (byDigest false) or by digest: a tag needs pull and resolve, a
// digest pull (containerd's resolver).
func (e Endpoint) Tries(byDigest bool) bool {
	has := func(c string) bool { return len(e.Capabilities) == 0 || slices.Contains(e.Capabilities, c) }
	return has("pull") && (byDigest || has("resolve"))
}

// Plan returns the runtime's plan for the registry refHost of a
// reference (byDigest: the reference has a digest). view is the node's
// view (trust store, root); its HostsDirs are replaced by the runtime's.
func (c *Config) Plan(ctx context.Context, view *nodeview.View, refHost string, byDigest bool) (*Plan, error) {
	host := refHost
	if host == "index.docker.io" {
		host = "docker.io"
	}
	if c.fatal != nil {
		return nil, c.fatal
	}
	p := &Plan{Registry: host, Mode: c.Mode, Endpoints: []Endpoint{}}
	var err error
	if c.Mode == ModeConfigPath {
		err = c.planHostsDirs(ctx, view, p)
	} else {
		err = c.planLegacy(view, p)
	}
	if err != nil && len(p.Hosts) == 0 {
		return p, err
	}
	for i, h := range p.Hosts {
		p.Endpoints[i].Order = i + 1
		if isProxy(host, h.Host) {
			p.Endpoints[i].Namespace = host
		}
	}
	for _, e := range p.Endpoints {
		if e.Role == verdict.RoleMirror && !e.Tries(byDigest) && e.Tries(true) {
			p.Warnings = append(p.Warnings, verdict.Warning{Code: verdict.CodeConfigMirrorDigestOnly, Endpoint: e.Host,
				Message: fmt.Sprintf("mirror %s (%s) has capabilities %s, without resolve: %s skips it for a reference by tag and goes to the next endpoint; only references by digest use it", e.Host, e.Source, strings.Join(e.Capabilities, ", "), c.rtName())})
		}
	}
	return p, err
}

// isProxy is containerd's RegistryHost.isProxy: requests to an endpoint
// other than the registry carry ?ns=<registry>.
func isProxy(refHost, host string) bool {
	return refHost != host && (refHost != "docker.io" || host != "registry-1.docker.io")
}

func (c *Config) planHostsDirs(ctx context.Context, view *nodeview.View, p *Plan) error {
	v := *view
	v.HostsDirs = c.HostsDirs
	v.OS = c.nodeOS
	v.HostsDir = ""
	if len(c.HostsDirs) > 0 {
		v.HostsDir = c.HostsDirs[0]
	}
	v.HostTreeRequired = c.Runtime.major == 1
	hosts, err := v.RegistryHosts(ctx, p.Registry)
	p.Hosts = hosts
	dir := ""
	source := ""
	for _, h := range hosts {
		if h.Dir != "" {
			dir = h.Dir
		}
		if h.Source != "" {
			source = h.Source
		}
	}
	if dir != "" {
		p.HostsDir = c.nodePath(dir)
	}
	for _, h := range hosts {
		role := verdict.RoleRegistry
		if h.Mirror {
			role = verdict.RoleMirror
		}
		e := Endpoint{Host: h.Host, Scheme: h.Scheme, Path: h.Path, Role: role, Capabilities: h.Capabilities,
			OverridePath: h.Path != "/v2", DialTimeout: h.DialTimeout.String(), Source: "default",
			TLS: TLS{SkipVerify: h.SkipVerify, HTTPFallback: h.HTTPFallback}}
		for _, f := range h.CAFiles {
			e.TLS.CAFiles = append(e.TLS.CAFiles, c.nodePath(f))
		}
		if h.TLS != nil {
			e.TLS.ClientCerts = clientNames(h.TLS)
		}
		switch {
		case h.Source != "":
			e.Source = c.nodePath(h.Source)
		case h.Refused != "":
			e.Source = c.nodePath(h.Dir) + " (*.crt, *.cert, *.key; its hosts.toml refused)"
		case h.Dir != "":
			e.Source = c.nodePath(h.Dir) + " (*.crt, *.cert, *.key; no hosts.toml)"
		}
		for k := range h.Header {
			e.HeaderNames = append(e.HeaderNames, k)
		}
		sort.Strings(e.HeaderNames)
		p.Endpoints = append(p.Endpoints, e)
	}
	if len(hosts) > 0 && hosts[0].Refused != "" {
		p.Warnings = append(p.Warnings, verdict.Warning{Code: verdict.CodeConfigHostsTOMLNoHostTable, Endpoint: p.Registry,
			Message: fmt.Sprintf("%s has no [host.\"...\"] table: %s refuses it (\"failed to decode hosts.toml\" error=\"invalid `host` tree\", containerd#10027) and pulls from %s with only the directory's *.crt, *.cert and *.key files, ignoring the file's server, header, ca, client, skip_verify and capabilities; add [host.\"<server>\"] with those keys (containerd 2.0 and later read the file as written)", hosts[0].Refused, c.rtName(), hosts[0].Host)})
	}
	if source != "" {
		p.Warnings = append(p.Warnings, lintHostsTOML(source, c.nodePath(source))...)
		p.Warnings = append(p.Warnings, lintRepeatedEndpoints(p)...)
	}
	if dir == "" {
		p.Warnings = append(p.Warnings, c.lintHostsDirName(p.Registry)...)
		p.Warnings = append(p.Warnings, c.lintHostsDirOS(p.Registry)...)
	}
	return err
}

// clientNames describes the client certificates of a TLS configuration by
// their subjects: file names are not kept by crypto/tls.
func clientNames(cfg *tls.Config) []string {
	var out []string
	for _, cert := range cfg.Certificates {
		if len(cert.Certificate) == 0 {
			continue
		}
		if x, err := x509.ParseCertificate(cert.Certificate[0]); err == nil {
			out = append(out, "subject "+x.Subject.String())
		}
	}
	return out
}

// nodePath turns a path on this machine under the root back into the node
// path.
func (c *Config) nodePath(p string) string {
	if c.root == "/" || c.root == "" {
		return p
	}
	abs, err := filepath.Abs(c.root)
	if err != nil {
		return p
	}
	if rel, err := filepath.Rel(abs, p); err == nil && !strings.HasPrefix(rel, "..") {
		if c.nodeOS == nodeview.OSWindows && runtime.GOOS != nodeview.OSWindows {
			// a copy of a Windows node's C: drive under the root
			return `C:\` + strings.ReplaceAll(rel, "/", `\`)
		}
		return "/" + filepath.ToSlash(rel)
	}
	return p
}

// lintHostsDirName finds a certs.d directory that was meant for the
// registry but is not named the way containerd looks it up: a registry
// with a port needs "host:port" (or "host_port_"), and a directory
// "host:443" is not used for a reference without a port.
func (c *Config) lintHostsDirName(registry string) []verdict.Warning {
	hostOnly, port, err := net.SplitHostPort(registry)
	var cands []string
	if err == nil {
		cands = []string{hostOnly}
	} else {
		cands = []string{registry + ":443", registry + "_443_"}
		port = ""
	}
	var out []verdict.Warning
	for _, d := range c.HostsDirs {
		for _, cand := range cands {
			hp, err := nodeview.InRoot(c.root, filepath.Join(nodeview.NodePath(c.nodeOS, d), cand))
			if err != nil {
				continue
			}
			if fi, err := os.Stat(hp); err == nil && fi.IsDir() {
				why := fmt.Sprintf("the reference names %s with port %s, so containerd looks for %s/%s (or %s_%s_) and never reads %s", registry, port, d, registry, hostOnly, port, filepath.Join(d, cand))
				if port == "" {
					why = fmt.Sprintf("the reference names %s without a port, so containerd looks for %s/%s and never reads %s", registry, d, registry, filepath.Join(d, cand))
				}
				out = append(out, verdict.Warning{Code: verdict.CodeConfigHostsDirPort, Message: why})
			}
		}
	}
	return out
}

// lintHostsTOML reports hosts.toml keys containerd ignores.
func lintHostsTOML(file, nodeFile string) []verdict.Warning {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	var out []verdict.Warning
	p := tomlu.Parser{}
	p.Reset(data)
	var table []string
	hostTables := 0
	var rootTLS []string
	rootTLSLine := 0
	for p.NextExpression() {
		e := p.Expression()
		var parts []string
		line := 0
		it := e.Key()
		for it.Next() {
			if line == 0 {
				line = p.Shape(it.Node().Raw).Start.Line
			}
			parts = append(parts, string(it.Node().Data))
		}
		switch e.Kind {
		case tomlu.Table, tomlu.ArrayTable:
			table = parts
			if len(parts) >= 1 && parts[0] == "host" {
				hostTables++
			}
			if (len(parts) == 1 && parts[0] == "auth") || (len(parts) == 3 && parts[0] == "host" && parts[2] == "auth") {
				out = append(out, verdict.Warning{Code: verdict.CodeConfigHostsTOMLAuth,
					Message: fmt.Sprintf("%s:%d: [%s] is not a hosts.toml key: containerd ignores it (containerd#11274) and sends no credentials from it; credentials come from the kubelet (imagePullSecrets, credential providers) or the CRI config", nodeFile, line, strings.Join(parts, "."))})
			}
		case tomlu.KeyValue:
			if len(table) == 0 && len(parts) == 1 && (parts[0] == "ca" || parts[0] == "client") {
				rootTLS = append(rootTLS, parts[0])
				if rootTLSLine == 0 {
					rootTLSLine = line
				}
			}
			if len(table) == 0 && len(parts) >= 1 && parts[0] == "auth" {
				out = append(out, verdict.Warning{Code: verdict.CodeConfigHostsTOMLAuth,
					Message: fmt.Sprintf("%s:%d: auth is not a hosts.toml key: containerd ignores it (containerd#11274)", nodeFile, line)})
			}
		}
	}
	if len(rootTLS) > 0 && hostTables == 0 {
		out = append(out, verdict.Warning{Code: verdict.CodeConfigHostsTOMLRootTLS,
			Message: fmt.Sprintf("%s:%d: %s at the top level with no [host.\"...\"] table: containerd releases affected by containerd#10027 and containerd#13212 fail to decode such a file (\"invalid `host` tree\") and ignore it with its %s; add [host.\"<server>\"] with the same keys", nodeFile, rootTLSLine, strings.Join(rootTLS, " and "), strings.Join(rootTLS, " and "))})
	}
	return out
}

// planLegacy builds the endpoints of the legacy inline configuration, as
// the CRI plugin's registryEndpoints and registryHosts do without
// config_path: mirrors[host] (else mirrors["*"]) in order, each given a
// scheme when it has none, then the registry itself unless an endpoint
// already is it. certs.d is not read at all.
func (c *Config) planLegacy(view *nodeview.View, p *Plan) error {
	host := p.Registry
	m, ok := c.reg.Mirrors[host]
	src := c.regFrom[host]
	if !ok {
		m = c.reg.Mirrors["*"]
		src = c.regFrom["*"]
	}
	var eps []string
	for _, e := range m.Endpoints {
		eps = append(eps, addDefaultScheme(e))
	}
	var srcs []string
	for range eps {
		srcs = append(srcs, src)
	}
	hasSelf := false
	for _, e := range eps {
		if u, err := url.Parse(e); err == nil && u.Host == host {
			hasSelf = true
		}
	}
	if !hasSelf {
		dh := host
		if host == "docker.io" {
			dh = "registry-1.docker.io"
		}
		eps = append(eps, defaultScheme(host)+"://"+dh)
		srcs = append(srcs, "default")
	}
	for i, e := range eps {
		u, err := url.Parse(e)
		if err != nil {
			return verdict.Errorf(verdict.CodeConfigContainerd, verdict.RoleNone, "", "%s: mirror endpoint %q of %s is not a URL: %s fails the pull (\"parse registry endpoint\")", srcs[i], e, host, c.rtName())
		}
		path := u.Path
		if path == "" {
			path = "/v2"
		}
		role := verdict.RoleRegistry
		if isProxy(host, u.Host) {
			role = verdict.RoleMirror
		}
		caps := []string{"pull", "resolve"}
		if c.Runtime.major >= 2 {
			caps = append(caps, "referrers")
		}
		tc := &tls.Config{RootCAs: view.Roots.Clone()}
		ep := Endpoint{Host: u.Host, Scheme: u.Scheme, Path: path, Role: role, Capabilities: caps,
			OverridePath: path != "/v2", DialTimeout: (30 * time.Second).String(), Source: srcs[i]}
		if isLocalhost(host) && u.Scheme == "http" {
			tc.InsecureSkipVerify = true
		}
		var caFiles []string
		if t := c.reg.Configs[u.Host].TLS; t != nil && c.Runtime.major < 2 {
			tc.InsecureSkipVerify = t.InsecureSkipVerify
			if t.CAFile != "" {
				data, hp, err := nodeview.ReadInRoot(c.root, t.CAFile)
				if err != nil {
					return verdict.Wrap(verdict.CodeConfigCAFile, verdict.RoleNone, "", fmt.Errorf("%s: registry.configs.%q.tls.ca_file: %w", c.tlsFrom[u.Host], u.Host, err))
				}
				if !tc.RootCAs.AppendCertsFromPEM(data) {
					return verdict.Errorf(verdict.CodeConfigCAFile, verdict.RoleNone, "", "%s: registry.configs.%q.tls.ca_file %s holds no PEM certificate", c.tlsFrom[u.Host], u.Host, t.CAFile)
				}
				caFiles = append(caFiles, hp)
				ep.TLS.CAFiles = []string{t.CAFile}
			}
			if (t.CertFile == "") != (t.KeyFile == "") {
				return verdict.Errorf(verdict.CodeConfigContainerd, verdict.RoleNone, "", "%s: registry.configs.%q.tls needs both cert_file and key_file: %s fails the pull", c.tlsFrom[u.Host], u.Host, c.rtName())
			}
			if t.CertFile != "" {
				cert, err := loadPair(c.root, t.CertFile, t.KeyFile)
				if err != nil {
					return verdict.Wrap(verdict.CodeConfigCAFile, verdict.RoleNone, "", fmt.Errorf("%s: registry.configs.%q.tls: %w", c.tlsFrom[u.Host], u.Host, err))
				}
				tc.Certificates = []tls.Certificate{cert}
				ep.TLS.ClientCerts = []string{t.CertFile + "+" + t.KeyFile}
			}
		}
		ep.TLS.SkipVerify = tc.InsecureSkipVerify
		rh := nodeview.RegistryHost{Host: u.Host, Scheme: u.Scheme, Path: path, Capabilities: caps, Mirror: role == verdict.RoleMirror,
			TLS: tc, SkipVerify: tc.InsecureSkipVerify, CAFiles: caFiles, Source: srcs[i], DialTimeout: 30 * time.Second}
		if rh.SkipVerify {
			rh.Warnings = append(rh.Warnings, verdict.Warning{Code: verdict.CodeTLSSkipVerify, Endpoint: u.Host,
				Message: fmt.Sprintf("TLS certificates of %s are not verified (%s): the pull works with any certificate, including an interceptor's.", u.Host, legacySkipWhy(c, u.Host, host, u.Scheme))})
		}
		p.Hosts = append(p.Hosts, rh)
		p.Endpoints = append(p.Endpoints, ep)
	}
	if c.Runtime.major < 2 {
		p.Warnings = append(p.Warnings, c.lintUnreadCertsD(host)...)
	}
	return nil
}

func legacySkipWhy(c *Config, epHost, host, scheme string) string {
	if t := c.reg.Configs[epHost].TLS; t != nil && t.InsecureSkipVerify {
		return "insecure_skip_verify = true at " + c.tlsFrom[epHost]
	}
	return "containerd skips verification for a localhost registry over http"
}

// lintUnreadCertsD warns when a containerd without config_path meets a
// certs.d directory for the registry: it looks configured, but the runtime
// never reads it.
func (c *Config) lintUnreadCertsD(registry string) []verdict.Warning {
	var out []verdict.Warning
	for _, d := range nodeview.DefaultHostsDirs {
		p := filepath.Join(d, registry)
		hp, err := nodeview.InRoot(c.root, p)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(hp); err == nil && fi.IsDir() {
			out = append(out, verdict.Warning{Code: verdict.CodeConfigCertsDUnread,
				Message: fmt.Sprintf("%s exists, but %s has no config_path set (its default is empty), so it never reads certs.d: the mirrors, CAs and skip_verify there are not applied; set config_path = %q in [plugins.%q.registry]", p, c.rtName(), d, pluginCRIv2)})
		}
	}
	return out
}

func loadPair(root, certFile, keyFile string) (tls.Certificate, error) {
	cert, _, err := nodeview.ReadInRoot(root, certFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	key, _, err := nodeview.ReadInRoot(root, keyFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(cert, key)
}

// addDefaultScheme gives an endpoint without a scheme https, or http for a
// localhost registry (the CRI plugin's addDefaultScheme).
func addDefaultScheme(e string) string {
	if strings.Contains(e, "://") {
		return e
	}
	u, err := url.Parse("dummy://" + e)
	if err != nil {
		return e
	}
	return defaultScheme(u.Host) + "://" + e
}

func defaultScheme(host string) string {
	if isLocalhost(host) {
		return "http"
	}
	return "https"
}

// isLocalhost is containerd's docker.IsLocalhost.
func isLocalhost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
