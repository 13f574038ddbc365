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
	byKey := map[string][]AuthConfig{}
	var index []string
	for loc, a := range auth {
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
		byKey[key] = append(byKey[key], a)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(index)))
	for _, k := range index {
		if MatchImage(k, image) {
			for _, a := range byKey[k] {
				keys, creds = append(keys, k), append(creds, a)
			}
		}
	}
	if len(creds) == 0 && isDefaultRegistry(image) {
		for _, a := range byKey["index.docker.io"] {
			keys, creds = append(keys, "index.docker.io"), append(creds, a)
		}
	}
	return keys, creds
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
