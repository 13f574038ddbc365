package nodeview

import (
	"net"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
)

// The kubelet's matching rules, from k8s.io/kubernetes
// pkg/credentialprovider/keyring.go (URLsMatch, BasicDockerKeyring) and
// pkg/credentialprovider/plugin/plugin.go (isImageAllowed): a pattern and
// an image are schemeless URLs; the ports must be equal, the hosts must have
// as many dot-separated labels, each label matches with filepath.Match
// (so '*' never crosses a dot), and the pattern's path must be a string
// prefix of the image's.

// parseSchemeless parses a schemeless URL as the kubelet does.
func parseSchemeless(s string) (*url.URL, error) {
	u, err := url.Parse("https://" + s)
	if err != nil {
		return nil, err
	}
	u.Scheme = ""
	return u, nil
}

func splitHostURL(u *url.URL) ([]string, string) {
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		host, port = u.Host, ""
	}
	return strings.Split(host, "."), port
}

// MatchImage reports whether image (a repository without tag or digest,
// e.g. "myreg.azurecr.io/team/app") matches the matchImages entry glob, by
// the kubelet's URLsMatchStr.
func MatchImage(glob, image string) bool {
	g, err := parseSchemeless(glob)
	if err != nil {
		return false
	}
	t, err := parseSchemeless(image)
	if err != nil {
		return false
	}
	gParts, gPort := splitHostURL(g)
	tParts, tPort := splitHostURL(t)
	if gPort != tPort || len(gParts) != len(tParts) || !strings.HasPrefix(t.Path, g.Path) {
		return false
	}
	for i := range gParts {
		if ok, err := filepath.Match(gParts[i], tParts[i]); err != nil || !ok {
			return false
		}
	}
	return true
}

// Matching returns the providers whose matchImages match image, in the
// config's order: the kubelet runs each of them and, where two return the
// same auth key, keeps the earlier one's.
func (c CredentialProviderConfig) Matching(image string) []CredentialProvider {
	var out []CredentialProvider
	for _, p := range c.Providers {
		for _, m := range p.MatchImages {
			if MatchImage(m, image) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// AuthConfig is one credential a provider returns.
type AuthConfig struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// LookupAuth returns the auth entries of a provider's response that the
// kubelet would use for image, in the order it tries them, with their keys.
// As the kubelet's keyring: a key's scheme is dropped, a /v1/ or /v2/ path
// prefix counts as no path, keys are tried in reverse lexical order (the
// more specific path first), and when nothing matches an image of Docker
// Hub takes the index.docker.io entry.
func LookupAuth(auth map[string]AuthConfig, image string) (keys []string, creds []AuthConfig) {
	keys, creds, _ = lookupMerged([]map[string]AuthConfig{auth}, image)
	return keys, creds
}

// lookupMerged is the kubelet's keyring over several providers' answers
// (credentialprovider providersDockerKeyring.Lookup, and the plugin
// package's externalCredentialProviderKeyring): every answer is added, in
// provider order, to one BasicDockerKeyring, and Lookup returns the
// entries of every matching key, keys in reverse lexical order and, under
// one key, the earlier provider's entry first. from is the index of the
// answer each entry came from.
func lookupMerged(auths []map[string]AuthConfig, image string) (keys []string, creds []AuthConfig, from []int) {
	type entry struct {
		a   AuthConfig
		src int
	}
	byKey := map[string][]entry{}
	var index []string
	for src, auth := range auths {
		locs := make([]string, 0, len(auth))
		for loc := range auth {
			locs = append(locs, loc)
		}
		sort.Strings(locs) // a map has no order; the kubelet's is random here
		for _, loc := range locs {
			v := loc
			if !strings.HasPrefix(v, "https://") && !strings.HasPrefix(v, "http://") {
				v = "https://" + v
			}
			u, err := url.Parse(v)
			if err != nil {
				continue
			}
			p := u.Path
			if strings.HasPrefix(p, "/v2/") || strings.HasPrefix(p, "/v1/") {
				p = p[3:]
			}
			key := u.Host
			if p != "" && p != "/" {
				key += p
			}
			if _, ok := byKey[key]; !ok {
				index = append(index, key)
			}
			byKey[key] = append(byKey[key], entry{auth[loc], src})
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(index)))
	add := func(k string) {
		for _, e := range byKey[k] {
			keys, creds, from = append(keys, k), append(creds, e.a), append(from, e.src)
		}
	}
	for _, k := range index {
		if MatchImage(k, image) {
			add(k)
		}
	}
	if len(creds) == 0 && isDefaultRegistry(image) {
		add("index.docker.io")
	}
	return keys, creds, from
}

// MergedCredential is one credential the kubelet would try for an image,
// from the answers of every matching provider.
type MergedCredential struct {
	Provider string
	Key      string
	Cred     AuthConfig
}

// MergeResults returns the credentials the kubelet tries for image, in its
// order, from the results of the providers it ran (nil results, those that
// failed, give nothing, as in the kubelet).
func MergeResults(results []*ProviderResult, image string) []MergedCredential {
	var auths []map[string]AuthConfig
	var names []string
	for _, r := range results {
		if r == nil || r.auth == nil {
			continue
		}
		auths, names = append(auths, r.auth), append(names, r.Provider)
	}
	keys, creds, from := lookupMerged(auths, image)
	out := make([]MergedCredential, len(creds))
	for i := range creds {
		out[i] = MergedCredential{Provider: names[from[i]], Key: keys[i], Cred: creds[i]}
	}
	return out
}

// isDefaultRegistry is the kubelet's isDefaultRegistryMatch.
func isDefaultRegistry(image string) bool {
	first, _, found := strings.Cut(image, "/")
	if first == "" {
		return false
	}
	if !found || first == "docker.io" || first == "index.docker.io" {
		return true
	}
	return !strings.ContainsAny(first, ".:")
}
