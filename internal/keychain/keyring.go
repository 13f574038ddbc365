package keychain

import (
	"sort"
	"strings"
)

// Source kinds: where a credential came from.
const (
	KindPodSecret      = "pod pull secret"
	KindServiceAccount = "service account pull secret"
	KindNodeConfig     = "node docker config"
	KindProvider       = "kubelet credential provider"
	KindGiven          = "credentials given"
)

// Source names where a credential came from, never the credential.
type Source struct {
	Kind string `json:"kind"`
	// Name is the secret's name, the file's path or the provider's name.
	Name string `json:"name"`
}

func (s Source) String() string {
	if s.Name == "" {
		return s.Kind
	}
	return s.Kind + " " + s.Name
}

// Entry is one auths entry of a docker config (or of a provider's answer).
type Entry struct {
	Username string
	Password string
}

// Credential is one credential the kubelet would try: a CRI AuthConfig
// with where it came from.
type Credential struct {
	Source Source `json:"source"`
	// Key is the auths key it is stored under, as written.
	Key string `json:"key"`
	// ServerAddress is the CRI AuthConfig.server_address the kubelet sets:
	// always empty, because BasicDockerKeyring.Add builds the AuthConfig
	// from the entry's username, password and email only, and
	// kuberuntime_image.go PullImage copies ServerAddress from it.
	// Captured on the node tier (test/nodelab TestKubeletCredentialRows,
	// a CRI proxy recording the real kubelet's PullImage requests).
	ServerAddress string `json:"server_address"`
	Username      string `json:"-"`
	Password      string `json:"-"`
}

// Name identifies the credential without its secret.
func (c Credential) Name() string {
	return c.Source.String() + ", key " + quote(c.Key)
}

func quote(s string) string { return `"` + s + `"` }

// Anonymous reports whether c holds nothing to present.
func (c Credential) Anonymous() bool { return c.Username == "" && c.Password == "" }

// Keychain is anything that holds credentials for images.
type Keychain interface {
	// Lookup returns the credentials for image (a repository without tag
	// or digest, e.g. "docker.io/library/nginx"), in the order the kubelet
	// tries them.
	Lookup(image string) []Credential
	// Keys lists every key held, for the report (no secret in a key).
	Keys() []Credential
}

// Keyring is the kubelet's BasicDockerKeyring: every Add goes into one
// index of normalised keys, sorted in reverse so that the more specific
// path comes first; under one key, the entries in the order added.
type Keyring struct {
	index []string
	creds map[string][]Credential
	all   []Credential
}

// Add adds a docker config's auths from src, as BasicDockerKeyring.Add: a
// key that does not parse is ignored, as the kubelet ignores it.
func (k *Keyring) Add(src Source, auths map[string]Entry) {
	if k.creds == nil {
		k.creds = map[string][]Credential{}
	}
	locs := make([]string, 0, len(auths))
	for loc := range auths {
		locs = append(locs, loc)
	}
	// A map has no order; the kubelet ranges over it at random. Sorting
	// makes one source's duplicates deterministic.
	sort.Strings(locs)
	for _, loc := range locs {
		key, ok := normalizeKey(loc)
		if !ok {
			continue
		}
		e := auths[loc]
		c := Credential{Source: src, Key: loc, Username: e.Username, Password: e.Password}
		if _, seen := k.creds[key]; !seen {
			k.index = append(k.index, key)
		}
		k.creds[key] = append(k.creds[key], c)
		k.all = append(k.all, c)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(k.index)))
}

// Lookup is BasicDockerKeyring.Lookup: every key that URLsMatch the image,
// in the index's order; when none does and the image is on Docker Hub, the
// index.docker.io entries.
func (k *Keyring) Lookup(image string) []Credential {
	var out []Credential
	for _, key := range k.index {
		if URLsMatch(key, image) {
			out = append(out, k.creds[key]...)
		}
	}
	if len(out) == 0 && isDefaultRegistry(image) {
		out = append(out, k.creds["index.docker.io"]...)
	}
	return out
}

// Keys returns every credential added, in the order added.
func (k *Keyring) Keys() []Credential { return k.all }

// Union is the kubelet's UnionDockerKeyring: the credentials of every
// keychain, one after the other.
type Union []Keychain

// Lookup concatenates the members' answers in order.
func (u Union) Lookup(image string) []Credential {
	var out []Credential
	for _, k := range u {
		if k != nil {
			out = append(out, k.Lookup(image)...)
		}
	}
	return out
}

// Keys concatenates the members' keys.
func (u Union) Keys() []Credential {
	var out []Credential
	for _, k := range u {
		if k != nil {
			out = append(out, k.Keys()...)
		}
	}
	return out
}

// Repository is the name the kubelet looks an image up by
// (parsers.ParseImageName: the normalised repository without tag or
// digest, e.g. "docker.io/library/nginx").
func Repository(domain, path string) string {
	return strings.TrimSuffix(domain, "/") + "/" + path
}
