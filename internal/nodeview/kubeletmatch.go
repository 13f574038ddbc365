package nodeview

import (
	"strconv"

	"github.com/pullpath/pullpath/internal/keychain"
)

// MatchImage reports whether image (a repository without tag or digest,
// e.g. "myreg.azurecr.io/team/app") matches the matchImages entry glob: the
// kubelet's URLsMatchStr (plugin.go isImageAllowed), written once in
// internal/keychain.
func MatchImage(glob, image string) bool { return keychain.URLsMatch(glob, image) }

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
// (the plugin package's externalCredentialProviderKeyring): every answer
// is added, in provider order, to one keychain.Keyring (BasicDockerKeyring),
// and Lookup returns the entries of every matching key, keys in reverse
// lexical order and, under one key, the earlier provider's entry first.
// from is the index of the answer each entry came from.
func lookupMerged(auths []map[string]AuthConfig, image string) (keys []string, creds []AuthConfig, from []int) {
	ring := &keychain.Keyring{}
	for src, auth := range auths {
		m := make(map[string]keychain.Entry, len(auth))
		for k, a := range auth {
			m[k] = keychain.Entry{Username: a.Username, Password: a.Password}
		}
		ring.Add(keychain.Source{Kind: keychain.KindProvider, Name: strconv.Itoa(src)}, m)
	}
	for _, c := range ring.Lookup(image) {
		src, _ := strconv.Atoi(c.Source.Name)
		keys, creds, from = append(keys, c.Key), append(creds, AuthConfig{Username: c.Username, Password: c.Password}), append(from, src)
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
