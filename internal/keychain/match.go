// Package keychain is the kubelet's keychain, written once: the registry
// credentials a node would present for an image, in the kubelet's order,
// and which host of the runtime's plan each of them reaches.
//
// It is modelled on go-containerregistry's pkg/authn (a small Keychain
// interface that composes) and pkg/authn/kubernetes (pull secrets read as
// the kubelet reads them), but follows the kubelet itself where the two
// differ: k8s.io/kubernetes pkg/credentialprovider/keyring.go
// (BasicDockerKeyring.Add and Lookup, URLsMatch, isDefaultRegistryMatch),
// pkg/credentialprovider/secrets (MakeDockerKeyring) and
// pkg/kubelet/images/image_manager.go (the union of the pull-secret, node
// and credential-provider keyrings). docs/credentials.md describes the rules
// with their sources.
package keychain

import (
	"net"
	"net/url"
	"path/filepath"
	"strings"
)

// The kubelet's matching rule, from k8s.io/kubernetes
// pkg/credentialprovider/keyring.go (URLsMatch, URLsMatchStr,
// ParseSchemelessURL, SplitURL) and pkg/credentialprovider/plugin/plugin.go
// (isImageAllowed, which uses the same function for matchImages): a pattern
// and an image are schemeless URLs; the ports must be equal (an absent port
// is its own value, so "host:443" never matches "host/..."), the hosts must
// have as many dot-separated labels, each label matches with
// filepath.Match (so '*' never crosses a dot), and the pattern's path must
// be a string prefix of the image's (so "reg/team" matches "reg/team-a/x"
// too: no '/' boundary).

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

// URLsMatch reports whether image (a repository without tag or digest, as
// the kubelet looks it up, e.g. "myreg.azurecr.io/team/app") matches glob (a
// keyring key with its scheme removed, or a matchImages entry), by the
// kubelet's URLsMatchStr. It is the only implementation of the rule in
// pullpath: the probe, diagnose, monitor and the credential-provider code
// all call it.
func URLsMatch(glob, image string) bool {
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

// ParseGlob reports whether a matchImages entry parses as the kubelet
// parses it (config validation: ParseSchemelessURL).
func ParseGlob(glob string) error {
	_, err := parseSchemeless(glob)
	return err
}

// normalizeKey is what BasicDockerKeyring.Add makes of a docker config key:
// https:// is assumed when there is no scheme, the scheme is dropped, and a
// /v1/ or /v2/ path prefix counts as no path. ok is false for a key that
// does not parse (the kubelet logs it and ignores it).
func normalizeKey(loc string) (key string, ok bool) {
	v := loc
	if !strings.HasPrefix(v, "https://") && !strings.HasPrefix(v, "http://") {
		v = "https://" + v
	}
	u, err := url.Parse(v)
	if err != nil {
		return "", false
	}
	p := u.Path
	if strings.HasPrefix(p, "/v2/") || strings.HasPrefix(p, "/v1/") {
		p = p[3:]
	}
	if p != "" && p != "/" {
		return u.Host + p, true
	}
	return u.Host, true
}

// isDefaultRegistry is the kubelet's isDefaultRegistryMatch: the image is
// on Docker Hub, whose credentials live under index.docker.io.
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

// DockerMatches reports whether docker's CLI and go-containerregistry
// (crane, authn.DefaultKeychain) would use the config key for image: they
// look a registry up by its host alone (docker's
// cli/config/configfile.GetAuthConfig after registry.ConvertToHostname;
// go-containerregistry pkg/authn keychain.go resolves by
// target.RegistryStr()), so a key's path is ignored and there is no glob.
// Docker Hub's credentials are under https://index.docker.io/v1/.
func DockerMatches(key, image string) bool {
	k := key
	k = strings.TrimPrefix(strings.TrimPrefix(k, "https://"), "http://")
	k, _, _ = strings.Cut(k, "/")
	host, _, _ := strings.Cut(image, "/")
	if isDefaultRegistry(image) {
		host = "index.docker.io"
	}
	if k == "docker.io" || k == "registry-1.docker.io" {
		k = "index.docker.io"
	}
	return strings.EqualFold(k, host)
}
