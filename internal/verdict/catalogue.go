package verdict

import (
	"sort"
	"strings"
)

// Cause describes one cause code: its layer, its owner when that differs from
// the layer's default, a one-sentence summary and the next steps. In the
// texts, {endpoint} is replaced by the failing host:port (or "the endpoint")
// and {role} by the role phrase ("the registry API host", "the token service",
// "the blob host", "the mirror").
//
// A warning (Kind KindWarning) is in the same catalogue: something that
// works today but will break or mislead later. It never makes a verdict;
// its layer is the step it concerns and its owner who acts on it.
type Cause struct {
	Code    string
	Kind    Kind
	Layer   Layer
	Owner   Owner
	Summary string
	Next    []string
}

// Kind tells a cause from a warning in the catalogue.
type Kind string

// The kinds of catalogue entries. The zero Kind is a cause.
const (
	KindCause   Kind = ""
	KindWarning Kind = "warning"
)

// Sentences shared by many causes: credentials never fix a network, DNS or TLS
// failure, and the evidence that counts is the node's, not a pod's or a laptop's.
const (
	credsIrrelevant = "Credentials are irrelevant to this failure: an imagePullSecret installs no route, changes no resolver and makes no certificate trusted."
	nodeView        = "Test from the node itself (its network namespace, /etc/resolv.conf, /etc/hosts, /etc/containerd/certs.d and trust store), e.g. `pullpath probe` on the node or `pullpath diagnose --probe`; a pod or a laptop proves nothing about the pull."
	everyHost       = "Allow and route every hostname the registry hands out during the pull: the registry API host, its token realm and every blob/CDN host it redirects layer downloads to."
)

var catalogue = map[string]Cause{}

// register adds entries to the catalogue. Two entries with one code are a
// mistake (the second would silently replace the first), so it panics.
func register(cs ...Cause) {
	for _, c := range cs {
		if _, dup := catalogue[c.Code]; dup {
			panic("verdict: code " + c.Code + " registered twice")
		}
		catalogue[c.Code] = c
	}
}

// The catalogue in pull order: each layer's causes and warnings are in
// catalogue_<layer>.go. A file of its own may add entries with its own
// init() calling register; a code registered twice panics at start-up.
func init() {
	for _, entries := range [][]Cause{
		configEntries, dnsEntries, routeEntries, tlsEntries, authEntries, authzEntries,
		manifestEntries, transferEntries, registryEntries, runtimeEntries, unknownEntries,
	} {
		register(entries...)
	}
}

// warning is a catalogue entry of kind warning: what works today but will
// break or mislead. A report lists warnings under warnings; none of them is
// a verdict. A cause code can be a warning too (a kubelet credential
// provider that fails beside one that works), and then its cause entry
// documents it.
func warning(code string, layer Layer, owner Owner, summary string, next ...string) Cause {
	return Cause{Code: code, Kind: KindWarning, Layer: layer, Owner: owner, Summary: summary, Next: next}
}

// Lookup returns the catalogue entry of a cause or warning code.
func Lookup(code string) (Cause, bool) {
	c, ok := catalogue[code]
	return c, ok
}

// Causes returns every registered cause (not the warnings), sorted by
// layer rank then code.
func Causes() []Cause { return entries(KindCause) }

// Warnings returns every registered warning code, sorted by layer rank
// then code.
func Warnings() []Cause { return entries(KindWarning) }

func entries(k Kind) []Cause {
	out := make([]Cause, 0, len(catalogue))
	for _, c := range catalogue {
		if c.Kind == k {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Layer.Rank() != out[j].Layer.Rank() {
			return out[i].Layer.Rank() < out[j].Layer.Rank()
		}
		return out[i].Code < out[j].Code
	})
	return out
}

// LayerOf is the layer of a cause code: from the catalogue, else from the
// code's prefix before the first dot, else unknown.
func LayerOf(code string) Layer {
	if c, ok := catalogue[code]; ok {
		return c.Layer
	}
	prefix, _, _ := strings.Cut(code, ".")
	if l := Layer(prefix); l.Rank() > 0 {
		return l
	}
	return LayerUnknown
}

// OwnerOf is who fixes a cause: the catalogue's owner, else the layer's.
func OwnerOf(code string) Owner {
	if c, ok := catalogue[code]; ok && c.Owner != OwnerNone {
		return c.Owner
	}
	return DefaultOwner(LayerOf(code))
}

// RolePhrase names a role in a sentence.
func RolePhrase(r Role) string {
	switch r {
	case RoleRegistry:
		return "the registry API host"
	case RoleAuth:
		return "the token service"
	case RoleBlob:
		return "the blob host"
	case RoleMirror:
		return "the mirror"
	case RoleProxy:
		return "the proxy"
	}
	return "the endpoint"
}

// Description is a filled-in summary and next steps for a cause.
type Description struct {
	Summary string
	Next    []string
}

// Describe fills in the summary and next steps of a cause for a role and
// endpoint. Unknown codes fall back to their layer's generic text.
func Describe(code string, role Role, endpoint string) Description {
	c, ok := catalogue[code]
	if !ok {
		c = catalogue["unknown"]
		c.Summary = "The pull failed at the " + string(LayerOf(code)) + " step."
	}
	ep := endpoint
	if ep == "" {
		ep = "the endpoint"
	}
	fill := func(s string) string {
		if strings.IndexByte(s, '{') < 0 {
			return s
		}
		return strings.ReplaceAll(strings.ReplaceAll(s, "{endpoint}", ep), "{role}", RolePhrase(role))
	}
	d := Description{Summary: upperFirst(fill(c.Summary)), Next: make([]string, 0, len(c.Next)+1)}
	for _, n := range c.Next {
		d.Next = append(d.Next, fill(n))
	}
	if role == RoleBlob && (c.Layer == LayerDNS || c.Layer == LayerRoute || c.Layer == LayerTLS) && code != "route.mtu" { // the blob host is reachable for small packets
		d.Next = append([]string{"Only the manifest endpoint is reachable: the registry answered but the blob host it redirects layer downloads to is not. " + everyHost}, d.Next...)
	}
	return d
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	if s[0] >= 'a' && s[0] <= 'z' {
		return string(s[0]-'a'+'A') + s[1:]
	}
	return s
}
