package runtimecfg

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/distribution/reference"

	"github.com/pullpath/pullpath/internal/keychain"
	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/verdict"
)

// CRIOFacts is what CRI-O's configuration says about one image beyond the
// endpoints: how a short name resolved, which [[registry]] matched, the
// mirrors not used for this reference, the credential files in CRI-O's
// order and what each endpoint receives, and the signature policy.
type CRIOFacts struct {
	// Image is the reference as the kubelet passes it.
	Image string `json:"image"`
	// Candidates are the fully qualified names CRI-O tries, in order
	// (one unless a short name resolved to several).
	Candidates []string `json:"candidates"`
	// ShortName says how a short name was resolved ("" for a qualified
	// name).
	ShortName string `json:"short_name,omitempty"`
	// Registry is the [[registry]] prefix that matched, with its source.
	Registry       string `json:"matched_registry,omitempty"`
	RegistrySource string `json:"matched_registry_source,omitempty"`
	// Skipped are mirrors containers/image does not use for this
	// reference, with why.
	Skipped []string `json:"skipped,omitempty"`
	// AuthFiles are the credential sources in CRI-O's order.
	AuthFiles []string `json:"auth_files"`
	// Credentials are what each endpoint is presented when the request
	// carries no credential (source file and key, never a secret).
	Credentials []keychain.Routed `json:"credentials,omitempty"`
	// Policy is the signature policy requirement that applies.
	Policy *PolicyFact `json:"policy,omitempty"`
	// Namespace is what the pod's namespace changes: the namespaced auth
	// file and signature policy (crio_namespace.go).
	Namespace *CRIONamespace `json:"namespace,omitempty"`

	// authFile is the pull's auth file as read (crioAuthFile), never
	// serialised.
	authFile     map[string]keychain.Entry
	authFileName string
}

// AuthFallbacks are containers/image's node credentials for the pull: the
// auth file CRI-O hands it (keychain.Route with keychain.ContainersImage).
func (f *CRIOFacts) AuthFallbacks() keychain.Fallbacks {
	return keychain.Fallbacks{AuthFile: f.authFile, AuthFileName: f.authFileName}
}

// crioDialTimeout is containers/image's connect timeout
// (pkg/tlsclientconfig NewTransport: net.Dialer Timeout 30s).
const crioDialTimeout = 30 * time.Second

// parseImageName parses the name the kubelet passes as containers/image's
// pkg/shortnames parseUnnormalizedShortName does: a name whose first
// component is not a domain (no "." or ":", not "localhost") is short and
// kept as written; any other is normalised (docker.io/alpine is
// docker.io/library/alpine).
func parseImageName(image string) (short bool, named reference.Named, err error) {
	ref, err := reference.Parse(image)
	if err := noIPv6(ref, err); err != nil {
		return false, nil, fmt.Errorf("cannot parse input: %q: %w", image, err)
	}
	n, ok := ref.(reference.Named)
	if !ok {
		return true, nil, fmt.Errorf("%q is not a named reference", image)
	}
	if d := reference.Domain(n); strings.ContainsAny(d, ".:") || d == "localhost" {
		n, err = parseNormalizedNamed(image)
		if err != nil {
			return false, nil, fmt.Errorf("cannot normalize input: %q: %w", image, err)
		}
		return false, n, nil
	}
	return true, n, nil
}

// resolveShortName resolves a short name as containers/image's
// pkg/shortnames Resolve does in CRI-O (which has no TTY): an alias
// (short-name-aliases.conf, then registries.conf), with the name's tag or
// digest; else the unqualified-search-registries, all of them in order,
// except that short-name-mode "enforcing" refuses a list of more than one
// (CRI-O reports "short name mode is enforcing, but image name %s returns
// ambiguous list", internal/storage CandidatesForPotentiallyShortImageName).
func (c *Config) resolveShortName(image string, short reference.Named) ([]reference.Named, string, error) {
	rc := c.crio.reg
	name := reference.TrimNamed(short).String()
	alias, from, ok, err := rc.alias(name)
	if err != nil {
		return nil, "", verdict.Errorf(verdict.CodeConfigRegistriesConf, verdict.RoleNone, "", "short name %q: %v: containers/image cannot resolve any short name", image, err)
	}
	if ok {
		ref, err := parseAliasValue(alias)
		if err == nil {
			if t, tagged := short.(reference.Tagged); tagged {
				ref, err = reference.WithTag(ref, t.Tag())
			}
		}
		if err == nil {
			if d, digested := short.(reference.Digested); digested {
				ref, err = reference.WithDigest(ref, d.Digest())
			}
		}
		if err != nil {
			return nil, "", verdict.Errorf(verdict.CodeConfigRegistriesConf, verdict.RoleNone, "", "%s: alias %q = %q: %v", from, name, alias, err)
		}
		return []reference.Named{reference.TagNameOnly(ref)}, fmt.Sprintf("alias %q = %q (%s)", name, alias, from), nil
	}
	if len(rc.search) == 0 {
		return nil, "", verdict.Errorf(verdict.CodeConfigShortName, verdict.RoleNone, "",
			"%q is a short name, it has no alias and registries.conf sets no unqualified-search-registries: containers/image refuses it (\"did not resolve to an alias and no unqualified-search registries are defined\"); use the fully qualified name", image)
	}
	var out []reference.Named
	for _, reg := range rc.search {
		ref, err := parseNormalizedNamed(reg + "/" + image)
		if err != nil {
			return nil, "", verdict.Errorf(verdict.CodeConfigRegistriesConf, verdict.RoleNone, "", "%s: creating reference with unqualified-search registry %q: %v", rc.searchFrom, reg, err)
		}
		out = append(out, reference.TagNameOnly(ref))
	}
	mode, modeFrom := c.crioShortNameMode()
	if mode == "enforcing" && len(rc.search) > 1 {
		return nil, "", verdict.Errorf(verdict.CodeConfigShortName, verdict.RoleNone, "",
			"short name mode is enforcing, but image name %s returns ambiguous list: %q is a short name and CRI-O's short name mode is enforcing (%s) with %d unqualified-search-registries (%s, %s); CRI-O cannot prompt, so it refuses the pull before any network step; use the fully qualified name or an alias",
			image, image, modeFrom, len(rc.search), strings.Join(rc.search, ", "), rc.searchFrom)
	}
	return out, fmt.Sprintf("short name, unqualified-search-registries %s (%s), short name mode %s (%s)", strings.Join(rc.search, ", "), rc.searchFrom, mode, modeFrom), nil
}

// crioShortNameMode is the short-name mode CRI-O hands containers/image,
// which replaces registries.conf's short-name-mode: since 1.34 crio.conf's
// [crio.image] short_name_mode, "enforcing" unless it says "disabled"
// (pkg/config/config.go SetSystemContext); before 1.34 always "disabled",
// every unqualified-search registry in order (internal/storage/image.go
// CandidatesForPotentiallyShortImageName). An unknown version is taken as
// the newer rule.
func (c *Config) crioShortNameMode() (string, string) {
	ignored := ""
	if rc := c.crio.reg; rc != nil && rc.conf.modeSet != "" {
		ignored = fmt.Sprintf("; registries.conf's short-name-mode = %q (%s) is not used by CRI-O", rc.conf.modeSet, rc.conf.modeFrom)
	}
	if v, before := c.crioBefore(1, 34); before {
		return "disabled", fmt.Sprintf("CRI-O %s resolves every short name with the mode disabled%s", v, ignored)
	}
	if c.crio.image.ShortNameMode == "disabled" {
		return "disabled", "crio.image.short_name_mode at " + c.crio.from["short_name_mode"] + ignored
	}
	if c.crio.image.ShortNameMode == "enforcing" {
		return "enforcing", "crio.image.short_name_mode at " + c.crio.from["short_name_mode"] + ignored
	}
	return "enforcing", "default of CRI-O 1.34+ (crio.image.short_name_mode not set)" + ignored
}

// crioPlan is CRI-O's plan for image: every candidate's pull sources in
// containers/image's order (docker/docker_image_src.go newImageSource:
// the matching [[registry]]'s mirrors in order, filtered by
// mirror-by-digest-only / pull-from-mirror, then the primary location).
func (c *Config) crioPlan(_ context.Context, view *nodeview.View, image string) (*Plan, error) {
	rc := c.crio.reg
	facts := &CRIOFacts{Image: image, Candidates: []string{}}
	p := &Plan{Mode: ModeRegistriesConf, Endpoints: []Endpoint{}, CRIO: facts}
	facts.Namespace, p.Warnings = c.crioNamespace(image, p.Warnings)
	facts.AuthFiles = c.crioAuthFiles(facts.Namespace)
	short, named, err := parseImageName(image)
	if err != nil {
		return p, verdict.Errorf(verdict.CodeConfigRegistriesConf, verdict.RoleNone, "", "%q is not a reference: %v", image, err)
	}
	cands := []reference.Named{reference.TagNameOnly(named)}
	if short {
		var how string
		cands, how, err = c.resolveShortName(image, named)
		facts.ShortName = how
		if err != nil {
			return p, err
		}
	}
	for _, ref := range cands {
		facts.Candidates = append(facts.Candidates, ref.String())
	}
	p.Registry = reference.Domain(cands[0])
	for _, ref := range cands {
		reg := rc.conf.findRegistry(ref.Name())
		type src struct {
			ref      reference.Named
			insecure bool
			mirror   bool
			source   string
		}
		var srcs []src
		if reg == nil {
			srcs = []src{{ref: ref, source: "default (no [[registry]] matches " + ref.Name() + ")"}}
		} else {
			prefix := reg.Prefix
			if facts.Registry == "" {
				facts.Registry, facts.RegistrySource = prefix, reg.from
			}
			if reg.Blocked {
				return p, verdict.Errorf(verdict.CodeConfigRegistryBlocked, verdict.RoleNone, "",
					"%s: [[registry]] prefix %q has blocked = true: containers/image refuses to pull %s (\"registry %s is blocked\") before any network step", reg.from, prefix, ref.String(), reg.Location)
			}
			sources, err := reg.pullSources(ref)
			if err != nil {
				return p, verdict.Errorf(verdict.CodeConfigRegistriesConf, verdict.RoleNone, "", "%s: rewriting %s for [[registry]] %q: %v", reg.from, ref.String(), prefix, err)
			}
			for _, s := range sources {
				srcs = append(srcs, src{ref: s.ref, insecure: s.endpoint.Insecure, mirror: s.mirror, source: s.endpoint.from})
			}
			_, digested := ref.(reference.Canonical)
			for _, m := range reg.Mirrors {
				if reg.mirrorUsed(m, digested) {
					continue
				}
				why := "pull-from-mirror = \"" + m.PullFromMirror + "\""
				if reg.MirrorByDigestOnly {
					why = "mirror-by-digest-only = true on its [[registry]] (" + reg.from + ")"
				}
				code := verdict.CodeConfigMirrorDigestOnly
				msg := fmt.Sprintf("mirror %s (%s) is used for references by digest only (%s): containers/image skips it for %s, a reference by tag, and goes to the next source", m.Location, m.from, why, ref.String())
				if digested {
					code = verdict.CodeConfigMirrorTagOnly
					msg = fmt.Sprintf("mirror %s (%s) is used for references by tag only (%s): containers/image skips it for %s, a reference by digest", m.Location, m.from, why, ref.String())
				}
				facts.Skipped = append(facts.Skipped, m.Location+": "+why)
				p.Warnings = append(p.Warnings, verdict.Warning{Code: code, Endpoint: m.Location, Message: msg})
			}
		}
		for _, s := range srcs {
			host := reference.Domain(s.ref)
			dial := host
			if dial == "docker.io" {
				// docker/docker_client.go: docker.io is served by
				// registry-1.docker.io.
				dial = "registry-1.docker.io"
			}
			insecure := s.insecure
			insecureWhy := ""
			if insecure {
				insecureWhy = "insecure = true at " + s.source
			}
			if from, ok := c.crio.crioInsecure(reference.Domain(ref)); ok && !insecure {
				insecure, insecureWhy = true, "crio.image.insecure_registries at "+from
			}
			rh, ep, err := c.crioEndpoint(view, dial, reference.Path(s.ref), s.mirror, insecure, insecureWhy, s.source)
			if err != nil {
				return p, err
			}
			p.Hosts = append(p.Hosts, rh)
			p.Endpoints = append(p.Endpoints, ep)
		}
	}
	for i := range p.Endpoints {
		p.Endpoints[i].Order = i + 1
	}
	if dir := c.crioCertsDirOf(p.Registry); dir != "" {
		p.HostsDir = dir
	}
	facts.Policy, p.Warnings = c.crioPolicy(cands[0], facts.Namespace, p.Warnings)
	if facts.Credentials, err = c.crioRoutes(p, cands[0], facts.Namespace); err != nil {
		return p, err
	}
	return p, nil
}

// crioEndpoint builds one source: https (containers/image always tries
// https first), with the certs.d directory's CAs and client pair; an
// insecure source skips verification and falls back to http
// (docker/docker_client.go detectProperties).
func (c *Config) crioEndpoint(view *nodeview.View, host, repo string, mirror, insecure bool, insecureWhy, source string) (nodeview.RegistryHost, Endpoint, error) {
	role := verdict.RoleRegistry
	if mirror {
		role = verdict.RoleMirror
	}
	tc := &tls.Config{RootCAs: view.Roots.Clone(), InsecureSkipVerify: insecure}
	ep := Endpoint{Host: host, Scheme: "https", Path: "/v2", Role: role, Capabilities: []string{"pull", "resolve"},
		Repository: repo, DialTimeout: crioDialTimeout.String(), Source: source,
		TLS: TLS{SkipVerify: insecure, HTTPFallback: insecure}}
	dir, caFiles, err := c.crioCerts(host, tc)
	if err != nil {
		return nodeview.RegistryHost{}, ep, err
	}
	for _, f := range caFiles {
		ep.TLS.CAFiles = append(ep.TLS.CAFiles, c.nodePath(f))
	}
	ep.TLS.ClientCerts = clientNames(tc)
	rh := nodeview.RegistryHost{Host: host, Scheme: "https", Path: "/v2", Capabilities: ep.Capabilities, Mirror: mirror,
		TLS: tc, SkipVerify: insecure, CAFiles: caFiles, Source: source, Dir: dir, HTTPFallback: insecure,
		DialTimeout: crioDialTimeout, Repo: repo, NoNamespace: true}
	if insecure {
		// The endpoint as the probe's tracer names it, so that its own
		// skip-verify warning for the handshake folds into this one.
		at := host
		if _, _, err := net.SplitHostPort(host); err != nil {
			at = net.JoinHostPort(host, "443")
		}
		rh.Warnings = append(rh.Warnings, verdict.Warning{Code: verdict.CodeTLSSkipVerify, Endpoint: at,
			Message: fmt.Sprintf("TLS certificates of %s are not verified and plain http is tried when https fails (%s): the pull works with any certificate, including an interceptor's.", host, insecureWhy)})
	}
	return rh, ep, nil
}

// crioCertsDirs are the per-host certificate directories containers/image
// reads, first existing one wins (containers-certs.d(5);
// docker/docker_client.go dockerCertDir).
var crioCertsDirs = []string{"/etc/containers/certs.d", "/etc/docker/certs.d"}

// crioCertsDirOf returns the node path of the certs.d directory used for
// host, "" when none exists.
func (c *Config) crioCertsDirOf(host string) string {
	for _, d := range crioCertsDirs {
		p := path.Join(d, host)
		if hp, err := nodeview.InRoot(c.root, p); err == nil {
			if names, err := readDirNames(hp); err == nil && names != nil {
				return p
			}
		}
	}
	return ""
}

// crioCerts loads host's certs.d directory into tc as containers/image's
// pkg/tlsclientconfig SetupCertificates does: *.crt are CAs added to the
// system pool, *.cert needs the *.key of the same name and the other way
// round (a pair missing its half fails every pull from that host).
func (c *Config) crioCerts(host string, tc *tls.Config) (string, []string, error) {
	dir := c.crioCertsDirOf(host)
	if dir == "" {
		return "", nil, nil
	}
	hd, _ := nodeview.InRoot(c.root, dir)
	names, _ := readDirNames(hd)
	slices.Sort(names)
	var cas []string
	for _, n := range names {
		full := path.Join(dir, n)
		switch {
		case strings.HasSuffix(n, ".crt"):
			data, hp, err := nodeview.ReadInRoot(c.root, full)
			if err != nil {
				return dir, cas, verdict.Wrap(verdict.CodeConfigCAFile, verdict.RoleNone, host, fmt.Errorf("%s: %w", full, err))
			}
			if !tc.RootCAs.AppendCertsFromPEM(data) {
				return dir, cas, verdict.Errorf(verdict.CodeConfigCAFile, verdict.RoleNone, host, "%s holds no PEM certificate: containers/image fails every pull from %s", full, host)
			}
			cas = append(cas, hp)
		case strings.HasSuffix(n, ".cert"):
			key := strings.TrimSuffix(n, ".cert") + ".key"
			if !slices.Contains(names, key) {
				return dir, cas, verdict.Errorf(verdict.CodeConfigCAFile, verdict.RoleNone, host, "%s: missing key %s for client certificate %s: containers/image fails every pull from %s (CA certificates need the extension .crt)", dir, key, n, host)
			}
			cert, err := loadPair(c.root, full, path.Join(dir, key))
			if err != nil {
				return dir, cas, verdict.Wrap(verdict.CodeConfigCAFile, verdict.RoleNone, host, fmt.Errorf("%s: %w", full, err))
			}
			tc.Certificates = append(tc.Certificates, cert)
		case strings.HasSuffix(n, ".key"):
			cert := strings.TrimSuffix(n, ".key") + ".cert"
			if !slices.Contains(names, cert) {
				return dir, cas, verdict.Errorf(verdict.CodeConfigCAFile, verdict.RoleNone, host, "%s: missing client certificate %s for key %s: containers/image fails every pull from %s", dir, cert, n, host)
			}
		}
	}
	return dir, cas, nil
}

// crioAuthFiles lists CRI-O's credential sources for a pull, in order
// (server/image_pull.go pullImage): the CRI request's credential (the
// kubelet's pull secret or credential provider) becomes the
// SystemContext's DockerAuthConfig, which containers/image uses before any
// file; otherwise, with the pod's namespace, the file
// <namespaced_auth_dir>/<namespace>-<sha256 of the image name>.json when it
// exists (prepareTempAuthFile makes it the AuthFilePath); otherwise
// global_auth_file (the SystemContext's AuthFilePath); when that is empty,
// containers/image's default files of root (pkg/docker/config:
// ${XDG_RUNTIME_DIR}/containers/auth.json, then ~/.docker/config.json).
func (c *Config) crioAuthFiles(ns *CRIONamespace) []string {
	st := c.crio
	out := []string{"the CRI request's credential (kubelet: pull secret or credential provider); dropped for a mirror on another domain (docker_image_src.go newImageSource)"}
	dir, why := c.crioNamespacedAuthDir()
	switch {
	case dir == "":
		out = append(out, why)
	case ns == nil || ns.Name == "":
		out = append(out, dir+"/<namespace>-<sha256 of image name>.json ("+why+"), when the credential provider wrote one for the pod's namespace: not read, the namespace is unknown")
	case ns.AuthFile == "":
		out = append(out, dir+"/"+ns.Name+"-<sha256 of image name>.json ("+why+"): no file name (see namespace.note)")
	case ns.AuthFileUsed:
		out = append(out, ns.AuthFile+" ("+why+"): present, so it replaces every file below for this pull")
	default:
		out = append(out, ns.AuthFile+" ("+why+"): absent")
	}
	if f := st.image.GlobalAuthFile; f != "" {
		out = append(out, f+" (global_auth_file, "+st.from["global_auth_file"]+")")
	} else {
		out = append(out, strings.Join(crioDefaultAuthFiles, ", then ")+" (containers/image defaults for root; global_auth_file is not set)")
	}
	return out
}

// crioDefaultAuthFiles are containers/image's auth files for root when
// no AuthFilePath is set (pkg/docker/config getPathToAuth and the legacy
// docker files). containers/image looks a key up in each in turn; the
// routes below read the first file that exists only.
var crioDefaultAuthFiles = []string{"/run/containers/0/auth.json", "/root/.config/containers/auth.json", "/root/.docker/config.json"}

// crioRoutes names what each endpoint receives when the request carries
// no credential: the key for that endpoint of the pull's auth file
// (crioAuthFile: the namespaced file, else global_auth_file, else the
// defaults), by internal/keychain Route's containers/image rule. The
// credential's secret fields are never serialised; the probe presents
// them (CRIOCredential). An auth file containers/image cannot read is the
// returned config verdict.
func (c *Config) crioRoutes(p *Plan, ref reference.Named, ns *CRIONamespace) ([]keychain.Routed, error) {
	var fb keychain.Fallbacks
	m, name, err := c.crioAuthFile(ns)
	if err != nil {
		return nil, err
	}
	fb.AuthFile, fb.AuthFileName = m, name
	p.CRIO.authFile, p.CRIO.authFileName = m, name
	var out []keychain.Routed
	for _, e := range p.Endpoints {
		host := keychain.PlanHost{Host: e.Host, Mirror: e.Role == verdict.RoleMirror}
		out = append(out, keychain.Route(keychain.ContainersImage, reference.Domain(ref), e.Repository, []keychain.Host{host}, nil, fb)...)
	}
	return out, nil
}

// CRIOCredential is what containers/image presents host (a plan endpoint)
// from the pull's auth file when the CRI request carries no credential;
// nil when it asks anonymously or the plan is not CRI-O's.
func (p *Plan) CRIOCredential(host string) *keychain.Credential {
	if p == nil || p.CRIO == nil {
		return nil
	}
	for _, r := range p.CRIO.Credentials {
		if r.Host == host && r.Credential != nil && !r.Credential.Anonymous() {
			return r.Credential
		}
	}
	return nil
}

// PlanImage is the runtime's plan for an image as the kubelet names it:
// CRI-O's (registries.conf, which may rewrite the name) on a CRI-O node,
// else containerd's for the registry refHost.
func (c *Config) PlanImage(ctx context.Context, view *nodeview.View, image, refHost string, byDigest bool) (*Plan, error) {
	if c.crio == nil {
		return c.Plan(ctx, view, refHost, byDigest)
	}
	if c.fatal != nil {
		return nil, c.fatal
	}
	return c.crioPlan(ctx, view, image)
}
