package runtimecfg

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
	"github.com/distribution/reference"
)

// The rules of containers-registries.conf(5) and
// containers-registries.conf.d(5) as containers/image applies them
// (go.podman.io/image/v5 pkg/sysregistriesv2, system_registries_v2.go and
// shortnames.go), written here so that the node binary does not link that
// library (its reference grammar and storage packages cost about 2.7 ms of
// package init at every start). Each function names the upstream function
// it follows; the differential test (regconf_diff_test.go) runs the same
// files through the library.

// Values of a mirror's pull-from-mirror (sysregistriesv2 MirrorAll,
// MirrorByDigestOnly, MirrorByTagOnly).
const (
	pullFromMirrorAll    = "all"
	pullFromMirrorDigest = "digest-only"
	pullFromMirrorTag    = "tag-only"
)

// rcEndpoint is a [[registry]]'s own location or one [[registry.mirror]]
// (sysregistriesv2 Endpoint). from is the file:line of its table.
type rcEndpoint struct {
	Location       string `toml:"location,omitempty"`
	Insecure       bool   `toml:"insecure,omitempty"`
	PullFromMirror string `toml:"pull-from-mirror,omitempty"`
	// NamespaceProxy adds an "ns" query parameter to every request to
	// this endpoint (OCI distribution-spec registry proxying): a fact.
	NamespaceProxy string `toml:"namespace-proxy,omitempty"`
	from           string
}

// rcRegistry is one [[registry]] (sysregistriesv2 Registry). The layout,
// embedded endpoint included, is the library's: the TOML decoder matches
// keys to fields the same way for both.
type rcRegistry struct {
	Prefix string `toml:"prefix"`
	rcEndpoint
	Mirrors            []rcEndpoint `toml:"mirror,omitempty"`
	Blocked            bool         `toml:"blocked,omitempty"`
	MirrorByDigestOnly bool         `toml:"mirror-by-digest-only,omitempty"`
}

// rcV2 is the v2 format (sysregistriesv2 V2RegistriesConf).
type rcV2 struct {
	Registries                     []rcRegistry      `toml:"registry"`
	UnqualifiedSearchRegistries    []string          `toml:"unqualified-search-registries"`
	CredentialHelpers              []string          `toml:"credential-helpers"`
	ShortNameMode                  string            `toml:"short-name-mode"`
	AdditionalLayerStoreAuthHelper string            `toml:"additional-layer-store-auth-helper"`
	Aliases                        map[string]string `toml:"aliases"`
}

// rcV1 is the v1 format, which containers/image no longer accepts: a file
// that sets any of it is refused (sysregistriesv2 V1RegistriesConf).
type rcV1 struct {
	V1 struct {
		Search struct {
			Registries []string `toml:"registries"`
		} `toml:"search"`
		Insecure struct {
			Registries []string `toml:"registries"`
		} `toml:"insecure"`
		Block struct {
			Registries []string `toml:"registries"`
		} `toml:"block"`
	} `toml:"registries"`
}

// rcFile is one file as loadConfigFile decodes it: both formats at once.
type rcFile struct {
	rcV2
	rcV1
}

// errRegistries is an invalid configuration, with the library's wording
// (sysregistriesv2 InvalidRegistries).
type errRegistries struct{ s string }

func (e *errRegistries) Error() string { return e.s }

func invalidf(format string, a ...any) error { return &errRegistries{fmt.Sprintf(format, a...)} }

// rcParsed is one file after validation, or the merge of all files so far
// (sysregistriesv2 parsedConfig).
type rcParsed struct {
	registries  []rcRegistry // sorted by prefix, one per prefix
	search      []string     // nil when not set: an earlier file's list stays
	searchFrom  string
	helpers     []string
	helpersFrom string
	modeSet     string // "" when not set
	modeFrom    string
	alsHelper   string
	// aliases: name → value; "" resets the name (an earlier file's alias
	// no longer applies).
	aliases   map[string]string
	aliasFrom map[string]string
}

// parseRCFile decodes and validates one registries.conf file as
// sysregistriesv2 loadConfigFile does. lines gives the file:line of
// [[registry]] tables and keys (walkTOML's indexed paths).
func parseRCFile(file string, data []byte, at func(indexed string) string) (*rcParsed, toml.MetaData, error) {
	var f rcFile
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		return nil, md, err
	}
	if !reflect.DeepEqual(f.rcV1, rcV1{}) {
		return nil, md, invalidf("registries.conf must be in v2 format but is in v1")
	}
	for i := range f.Registries {
		r := &f.Registries[i]
		r.from = at(fmt.Sprintf("registry[%d]", i))
		for j := range r.Mirrors {
			r.Mirrors[j].from = at(fmt.Sprintf("registry[%d].mirror[%d]", i, j))
		}
	}
	if err := f.postProcess(); err != nil {
		return nil, md, err
	}
	res := &rcParsed{registries: f.Registries, search: f.UnqualifiedSearchRegistries, helpers: f.CredentialHelpers,
		alsHelper: f.AdditionalLayerStoreAuthHelper}
	if f.UnqualifiedSearchRegistries != nil {
		res.searchFrom = at("unqualified-search-registries")
	}
	if m := f.ShortNameMode; m != "" {
		switch m {
		case "disabled", "enforcing", "permissive":
		default:
			return nil, md, fmt.Errorf("invalid short-name mode: %q", m)
		}
		res.modeSet = m
	}
	// Valid wildcarded prefixes must be *.example.com (checked after
	// postProcess, as loadConfigFile does).
	for _, r := range res.registries {
		if strings.HasPrefix(r.Prefix, "*.") && strings.ContainsAny(r.Prefix, "/@:") {
			return nil, md, invalidf("Wildcarded prefix should be in the format: *.example.com. Current prefix %q is incorrectly formatted", r.Prefix)
		}
	}
	if err := validateAliases(f.Aliases); err != nil {
		return nil, md, fmt.Errorf("validating short-name aliases: %w", err)
	}
	res.aliases, res.aliasFrom = map[string]string{}, map[string]string{}
	for name, v := range f.Aliases {
		res.aliases[name] = v
		res.aliasFrom[name] = at("aliases." + name)
	}
	return res, md, nil
}

// rcLocation trims trailing slashes and refuses a URI scheme
// (sysregistriesv2 parseLocation).
func rcLocation(input string) (string, error) {
	trimmed := strings.TrimRight(input, "/")
	if strings.HasPrefix(trimmed, "http://") || strings.HasPrefix(trimmed, "https://") {
		return "", invalidf("invalid location '%s': URI schemes are not supported", input)
	}
	return trimmed, nil
}

// postProcess validates and normalises one file's registries
// (sysregistriesv2 V2RegistriesConf.postProcessRegistries): locations
// and prefixes trimmed, a missing prefix is the location, the checks in
// the library's order, the same location with conflicting insecure or
// blocked refused, search registries must be host[:port], and of several
// [[registry]] with one prefix the first wins; the result is sorted by
// prefix.
func (c *rcFile) postProcess() error {
	group := map[string][]*rcRegistry{}
	key := func(r *rcRegistry) string {
		if r.Location == "" {
			return r.Prefix
		}
		return r.Location
	}
	for i := range c.Registries {
		r := &c.Registries[i]
		var err error
		if r.Location, err = rcLocation(r.Location); err != nil {
			return err
		}
		if r.Prefix == "" {
			if r.Location == "" {
				return invalidf("invalid condition: both location and prefix are unset")
			}
			r.Prefix = r.Location
		} else {
			if r.Prefix, err = rcLocation(r.Prefix); err != nil {
				return err
			}
			if !strings.HasPrefix(r.Prefix, "*.") && r.Location == "" {
				return invalidf("invalid condition: location is unset and prefix is not in the format: *.example.com")
			}
		}
		if r.PullFromMirror != "" {
			return fmt.Errorf("pull-from-mirror must not be set for a non-mirror registry %q", r.Prefix)
		}
		for j := range r.Mirrors {
			m := &r.Mirrors[j]
			if m.Location, err = rcLocation(m.Location); err != nil {
				return err
			}
			if m.Location == "" {
				return invalidf("invalid condition: mirror location is unset")
			}
			if r.MirrorByDigestOnly && m.PullFromMirror != "" {
				return invalidf("cannot set mirror usage mirror-by-digest-only for the registry (%q) and pull-from-mirror for per-mirror (%q) at the same time", r.Prefix, m.Location)
			}
			switch m.PullFromMirror {
			case "", pullFromMirrorAll, pullFromMirrorDigest, pullFromMirrorTag:
			default:
				return invalidf("unsupported pull-from-mirror value %q for mirror %q", m.PullFromMirror, m.Location)
			}
		}
		group[key(r)] = append(group[key(r)], r)
	}
	for i := range c.Registries {
		r := &c.Registries[i]
		for _, o := range group[key(r)] {
			if r.Insecure != o.Insecure {
				return invalidf("registry '%s' is defined multiple times with conflicting 'insecure' setting", r.Location)
			}
			if r.Blocked != o.Blocked {
				return invalidf("registry '%s' is defined multiple times with conflicting 'blocked' setting", r.Location)
			}
		}
	}
	for i, s := range c.UnqualifiedSearchRegistries {
		reg, err := rcLocation(s)
		if err != nil {
			return err
		}
		if !isDomain(reg) {
			return invalidf("Invalid unqualified-search-registries entry %#v", reg)
		}
		c.UnqualifiedSearchRegistries[i] = reg
	}
	seen := map[string]bool{}
	var out []rcRegistry
	for _, r := range c.Registries {
		if !seen[r.Prefix] {
			seen[r.Prefix] = true
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b rcRegistry) int { return strings.Compare(a.Prefix, b.Prefix) })
	c.Registries = out
	return nil
}

// isDomain is containers/image's anchored reference.DomainRegexp:
// host[:port], a host being dot-separated components of letters, digits
// and inner dashes. distribution/reference's DomainRegexp also admits a
// bracketed IPv6 address, which containers/image's grammar does not.
func isDomain(s string) bool {
	if strings.Contains(s, "[") {
		return false
	}
	return anchoredDomain().MatchString(s)
}

// anchoredDomain is compiled on first use: a package-level regexp would
// be compiled at every start of the node binary.
var anchoredDomain = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("^(?:" + reference.DomainRegexp.String() + ")$")
})

// merge applies a later file over the configuration so far
// (sysregistriesv2 parsedConfig.updateWithConfigurationFrom): a
// [[registry]] replaces the one with the same prefix, the search list,
// credential helpers, mode and helper replace when the file sets them,
// and aliases are merged name by name.
func (c *rcParsed) merge(u *rcParsed) {
	byPrefix := map[string]rcRegistry{}
	for _, r := range c.registries {
		byPrefix[r.Prefix] = r
	}
	for _, r := range u.registries {
		byPrefix[r.Prefix] = r
	}
	c.registries = c.registries[:0:0]
	for _, p := range sortedKeys(byPrefix) {
		c.registries = append(c.registries, byPrefix[p])
	}
	if u.search != nil {
		c.search, c.searchFrom = u.search, u.searchFrom
	}
	if u.helpers != nil {
		c.helpers, c.helpersFrom = u.helpers, u.helpersFrom
	}
	if u.modeSet != "" {
		c.modeSet, c.modeFrom = u.modeSet, u.modeFrom
	}
	if u.alsHelper != "" {
		c.alsHelper = u.alsHelper
	}
	if c.aliases == nil {
		c.aliases, c.aliasFrom = map[string]string{}, map[string]string{}
	}
	for n, v := range u.aliases {
		c.aliases[n], c.aliasFrom[n] = v, u.aliasFrom[n]
	}
}

// rcMatch is the length of ref's match with prefix, -1 when it does not
// match (sysregistriesv2 refMatchingPrefix): the prefix, then the end of
// ref or one of ':', '/', '@' (so "example.com" also matches
// "example.com:5000", as upstream notes). A wildcard prefix "*.example.com"
// matches the first occurrence of ".example.com" in ref's host part
// (refMatchingSubdomainPrefix).
func rcMatch(ref, prefix string) int {
	switch {
	case strings.HasPrefix(prefix, "*."):
		i := strings.Index(ref, prefix[1:])
		if i == -1 || strings.Contains(ref[:i], "/") {
			return -1
		}
		i += len(prefix) - 1
		if i == len(ref) {
			return i
		}
		switch ref[i] {
		case ':', '/', '@':
			return i
		}
		return -1
	case len(ref) < len(prefix):
		return -1
	case len(ref) == len(prefix):
		if ref == prefix {
			return len(prefix)
		}
		return -1
	default:
		if !strings.HasPrefix(ref, prefix) {
			return -1
		}
		switch ref[len(prefix)] {
		case ':', '/', '@':
			return len(prefix)
		}
		return -1
	}
}

// findRegistry is the [[registry]] with the longest prefix matching name
// (a repository name with its host), the first of equal length in prefix
// order; nil when none matches (sysregistriesv2 findRegistryWithParsedConfig).
func (c *rcParsed) findRegistry(name string) *rcRegistry {
	var best *rcRegistry
	n := 0
	for i := range c.registries {
		r := &c.registries[i]
		if rcMatch(name, r.Prefix) != -1 && len(r.Prefix) > n {
			best, n = r, len(r.Prefix)
		}
	}
	return best
}

// rcSource is one place a pull goes to: the endpoint and the reference
// rewritten for it (sysregistriesv2 PullSource).
type rcSource struct {
	endpoint rcEndpoint
	ref      reference.Named
	mirror   bool
}

// pullSources are the sources for ref in order (sysregistriesv2
// Registry.PullSourcesFromReference): the mirrors, those that
// mirror-by-digest-only or their pull-from-mirror leave out for this
// reference skipped, then the registry's own location.
func (r *rcRegistry) pullSources(ref reference.Named) ([]rcSource, error) {
	_, digested := ref.(reference.Canonical)
	var out []rcSource
	add := func(e rcEndpoint, mirror bool) error {
		rw, err := r.rewrite(e, ref)
		if err != nil {
			return err
		}
		out = append(out, rcSource{endpoint: e, ref: rw, mirror: mirror})
		return nil
	}
	for _, m := range r.Mirrors {
		if !r.mirrorUsed(m, digested) {
			continue
		}
		if err := add(m, true); err != nil {
			return nil, err
		}
	}
	if err := add(r.rcEndpoint, false); err != nil {
		return nil, err
	}
	return out, nil
}

// mirrorUsed says whether a mirror serves a reference by digest (or by
// tag when !digested).
func (r *rcRegistry) mirrorUsed(m rcEndpoint, digested bool) bool {
	if r.MirrorByDigestOnly {
		return digested
	}
	switch m.PullFromMirror {
	case pullFromMirrorDigest:
		return digested
	case pullFromMirrorTag:
		return !digested
	}
	return true
}

// rewrite replaces the matched prefix of ref by the endpoint's location
// (sysregistriesv2 Endpoint.rewriteReference); an empty location (a
// wildcard prefix) keeps ref.
func (r *rcRegistry) rewrite(e rcEndpoint, ref reference.Named) (reference.Named, error) {
	s := ref.String()
	n := rcMatch(s, r.Prefix)
	if n == -1 {
		return nil, fmt.Errorf("invalid prefix '%v' for reference '%v'", r.Prefix, s)
	}
	if e.Location == "" {
		if !strings.HasPrefix(r.Prefix, "*.") {
			return nil, fmt.Errorf("invalid prefix '%v' for empty location, should be in the format: *.example.com", r.Prefix)
		}
		return ref, nil
	}
	rw, err := parseNamed(e.Location + s[n:])
	if err != nil {
		return nil, fmt.Errorf("rewriting reference: %w", err)
	}
	return rw, nil
}

// The reference grammar: distribution/reference (linked anyway), less
// the bracketed IPv6 host containers/image's fork of it does not accept.
var errIPv6Host = errors.New("invalid reference format")

func noIPv6(ref reference.Reference, err error) error {
	if err != nil {
		return err
	}
	if n, ok := ref.(reference.Named); ok && strings.HasPrefix(reference.Domain(n), "[") {
		return errIPv6Host
	}
	return nil
}

// parseNormalizedNamed is reference.ParseNormalizedNamed of containers/image.
func parseNormalizedNamed(s string) (reference.Named, error) {
	n, err := reference.ParseNormalizedNamed(s)
	if err := noIPv6(n, err); err != nil {
		return nil, err
	}
	return n, nil
}

// parseNamed is reference.ParseNamed of containers/image: the name must
// already be in its canonical form.
func parseNamed(s string) (reference.Named, error) {
	n, err := reference.ParseNamed(s)
	if err := noIPv6(n, err); err != nil {
		return nil, err
	}
	return n, nil
}

// validateAliases checks every alias of one file, reporting all bad ones
// (sysregistriesv2 newShortNameAliasCache): the name a short name without
// tag or digest, the value "" (a reset) or a name with a registry and
// without tag or digest.
func validateAliases(aliases map[string]string) error {
	var errs []string
	for _, name := range sortedKeys(aliases) {
		if err := validateShortName(name); err != nil {
			errs = append(errs, err.Error())
		}
		if v := aliases[name]; v != "" {
			if _, err := parseAliasValue(v); err != nil {
				errs = append(errs, err.Error())
			}
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

// validateShortName is sysregistriesv2 validateShortName: an alias's name.
func validateShortName(name string) error {
	ref, err := reference.Parse(name)
	if err := noIPv6(ref, err); err != nil {
		return fmt.Errorf("cannot parse short name: %q: %w", name, err)
	}
	if _, ok := ref.(reference.Digested); ok {
		return fmt.Errorf("invalid short name %q: must not contain digest", name)
	}
	if _, ok := ref.(reference.Tagged); ok {
		return fmt.Errorf("invalid short name %q: must not contain tag", name)
	}
	n, ok := ref.(reference.Named)
	if !ok {
		return fmt.Errorf("invalid short name %q: no name", name)
	}
	if d := reference.Domain(n); strings.ContainsAny(d, ".:") || d == "localhost" {
		return fmt.Errorf("invalid short name %q: must not contain registry", name)
	}
	return nil
}

// parseAliasValue is sysregistriesv2 parseShortNameValue: an alias's
// value, normalised (docker.io/alpine is docker.io/library/alpine).
func parseAliasValue(alias string) (reference.Named, error) {
	ref, err := reference.Parse(alias)
	if err := noIPv6(ref, err); err != nil {
		return nil, fmt.Errorf("parsing alias %q: %w", alias, err)
	}
	if _, ok := ref.(reference.Digested); ok {
		return nil, fmt.Errorf("invalid alias %q: must not contain digest", alias)
	}
	if _, ok := ref.(reference.Tagged); ok {
		return nil, fmt.Errorf("invalid alias %q: must not contain tag", alias)
	}
	n, ok := ref.(reference.Named)
	if !ok {
		return nil, fmt.Errorf("invalid alias %q: must contain registry and repository", alias)
	}
	if d := reference.Domain(n); !strings.ContainsAny(d, ".:") && d != "localhost" {
		return nil, fmt.Errorf("invalid alias %q: must contain registry and repository", alias)
	}
	return parseNormalizedNamed(alias)
}
