package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/opencontainers/go-digest"
)

// Request kinds a Memo counts, as the registry would count them.
const (
	KindToken        = "token"
	KindManifestHead = "manifest_head"
	KindManifestGet  = "manifest_get"
	KindBlobHead     = "blob_head"
	KindBlobGet      = "blob_get"
	KindOther        = "other" // the /v2/ ping, anything else
)

// defaultTokenTTL is how long a token without expires_in lives: the
// distribution token spec's default of 60 seconds.
const defaultTokenTTL = 60 * time.Second

// tokenMargin is taken off a token's lifetime (a tenth of short ones), so
// a token is never sent in its last seconds.
const tokenMargin = 10 * time.Second

// Memo is what a long-running prober (the monitor agent) keeps between
// probes so that an unchanged pull path costs the registry one request: the
// bearer tokens until they expire, the manifests by digest (a manifest is
// immutable under its digest, and it was verified when kept), the hosts a
// pull touched (so a cheap probe can still walk them), the registries'
// Retry-After, and a count of the requests sent. Safe for concurrent use.
// A nil *Memo keeps nothing.
type Memo struct {
	// Now is the clock; the default is time.Now.
	Now func() time.Time
	// OnRequest, when set, is told every request sent: the session's host
	// (the registry or mirror of the plan) and its kind.
	OnRequest func(host, kind string)
	// OnThrottle, when set, is told every 429 or 503 answer and the time
	// before which no request may go to host.
	OnThrottle func(host string, until time.Time)
	// Scale multiplies every Retry-After (0 means 1): only a simulation
	// whose intervals are compressed sets it.
	Scale float64
	// OneRequest makes a probe that renews an expired token send that
	// token request only, not the manifest HEAD as well: the digest the
	// last probe resolved stands, and the next probe HEADs the manifest
	// with the new token. A change of the tag is then seen one probe
	// later, once per token lifetime; in exchange a probe of an unchanged
	// path costs the registry one request, tokens included. Never twice in
	// a row: when tokens live shorter than the time between probes, every
	// other probe HEADs the manifest as well.
	OneRequest bool

	mu        sync.Mutex
	tokens    map[string]memoToken
	challenge map[string]string // token key → the last challenge, to fetch a new token without a 401 first
	manifests map[digest.Digest]memoManifest
	hosts     map[string]map[string]string // plan host → "scheme://host:port" → role
	until     map[string]time.Time         // plan host → no request before
	resolves  map[string]memoResolve       // host, scope, identity and reference → the last resolve
}

type memoResolve struct {
	d       Descriptor
	skipped bool // the last probe kept d without a HEAD (OneRequest)
}

type memoToken struct {
	auth    string
	expires time.Time
}

type memoManifest struct {
	data []byte
	mt   string
}

// maxMemoManifests bounds the manifests kept (a few per target).
const maxMemoManifests = 64

func (m *Memo) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

func tokenKey(host, scope string, c *Credentials) string {
	id := "anonymous"
	if !c.Anonymous() {
		// The key tells identities apart without keeping the password.
		sum := sha256.Sum256([]byte(c.Username + "\x00" + c.Password))
		id = hex.EncodeToString(sum[:8])
	}
	return host + " " + scope + " " + id
}

func (m *Memo) token(key string) (string, bool) {
	if m == nil {
		return "", false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tokens[key]
	if !ok || !m.now().Before(t.expires) {
		delete(m.tokens, key)
		return "", false
	}
	return t.auth, true
}

func (m *Memo) putToken(key, auth string, ttl time.Duration) {
	if m == nil {
		return
	}
	if ttl <= 0 {
		ttl = defaultTokenTTL
	}
	ttl -= min(tokenMargin, ttl/10)
	// A random part of up to a quarter more: agents started together
	// (a rollout) renew their tokens in different rounds, not all at once.
	if q := int64(ttl / 4); q > 0 {
		ttl -= time.Duration(rand.Int64N(q))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tokens == nil {
		m.tokens = map[string]memoToken{}
	}
	m.tokens[key] = memoToken{auth: auth, expires: m.now().Add(ttl)}
}

func (m *Memo) putChallenge(key, hdr string) {
	if m == nil || hdr == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.challenge == nil {
		m.challenge = map[string]string{}
	}
	m.challenge[key] = hdr
}

func (m *Memo) lastChallenge(key string) string {
	if m == nil {
		return ""
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.challenge[key]
}

func (m *Memo) dropToken(key string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	delete(m.tokens, key)
	m.mu.Unlock()
}

func (m *Memo) manifest(d digest.Digest) ([]byte, string, bool) {
	if m == nil || d == "" {
		return nil, "", false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.manifests[d]
	return e.data, e.mt, ok
}

func (m *Memo) putManifest(d digest.Digest, data []byte, mt string) {
	if m == nil || d == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.manifests == nil || len(m.manifests) >= maxMemoManifests {
		m.manifests = map[digest.Digest]memoManifest{}
	}
	m.manifests[d] = memoManifest{data: data, mt: mt}
}

// skipResolve returns the descriptor the last resolve of key found, for a
// probe that leaves the manifest HEAD out (OneRequest), unless the last
// probe left it out already.
func (m *Memo) skipResolve(key string) (Descriptor, bool) {
	if m == nil {
		return Descriptor{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.resolves[key]
	if !ok || r.skipped || r.d.Digest == "" {
		return Descriptor{}, false
	}
	r.skipped = true
	m.resolves[key] = r
	return r.d, true
}

func (m *Memo) putResolved(key string, d Descriptor) {
	if m == nil || d.Digest == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.resolves == nil || len(m.resolves) >= maxMemoManifests {
		m.resolves = map[string]memoResolve{}
	}
	m.resolves[key] = memoResolve{d: d}
}

// Blocked returns the time before which no request may go to host (a
// registry's Retry-After), and whether that time is still ahead.
func (m *Memo) Blocked(host string) (time.Time, bool) {
	if m == nil {
		return time.Time{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	u, ok := m.until[host]
	if !ok {
		return time.Time{}, false
	}
	if !m.now().Before(u) {
		delete(m.until, host)
		return time.Time{}, false
	}
	return u, true
}

// Hosts returns the endpoints ("https://host:port") a pull from planHost
// touched (the token realm and blob hosts too), with their roles.
func (m *Memo) Hosts(planHost string) map[string]string {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]string{}
	for k, v := range m.hosts[planHost] {
		out[k] = v
	}
	return out
}

// AllHosts is Hosts for every plan host.
func (m *Memo) AllHosts() map[string]map[string]string {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]map[string]string{}
	for p, hs := range m.hosts {
		out[p] = map[string]string{}
		for k, v := range hs {
			out[p][k] = v
		}
	}
	return out
}

// NoteHost records that a pull from planHost touched endpoint (its role).
func (m *Memo) NoteHost(planHost, endpoint, role string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hosts == nil {
		m.hosts = map[string]map[string]string{}
	}
	if m.hosts[planHost] == nil {
		m.hosts[planHost] = map[string]string{}
	}
	m.hosts[planHost][endpoint] = role
}

// observe counts one request and keeps a 429's or 503's Retry-After.
func (m *Memo) observe(planHost string, req *http.Request, resp *http.Response, token bool) {
	if m == nil {
		return
	}
	kind := requestKind(req, token)
	if m.OnRequest != nil {
		m.OnRequest(planHost, kind)
	}
	if resp == nil || (resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable) {
		return
	}
	until := m.now()
	if d, ok := retryAfter(resp.Header.Get("Retry-After"), until); ok {
		if m.Scale > 0 {
			d = time.Duration(float64(d) * m.Scale)
		}
		until = until.Add(d)
	}
	m.mu.Lock()
	if m.until == nil {
		m.until = map[string]time.Time{}
	}
	if until.After(m.until[planHost]) {
		m.until[planHost] = until
	}
	m.mu.Unlock()
	if m.OnThrottle != nil {
		m.OnThrottle(planHost, until)
	}
}

// retryAfter reads a Retry-After header: delay-seconds or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(v); err == nil {
		if n < 0 {
			return 0, false
		}
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

func requestKind(req *http.Request, token bool) string {
	if token {
		return KindToken
	}
	p := req.URL.Path
	head := req.Method == http.MethodHead
	switch {
	case strings.Contains(p, "/manifests/") && head:
		return KindManifestHead
	case strings.Contains(p, "/manifests/"):
		return KindManifestGet
	case strings.Contains(p, "/blobs/") && head:
		return KindBlobHead
	case strings.Contains(p, "/blobs/"):
		return KindBlobGet
	}
	return KindOther
}

// Kinds are the request kinds in the order they are printed.
var Kinds = []string{KindToken, KindManifestHead, KindManifestGet, KindBlobHead, KindBlobGet, KindOther}

// endpointOf is "scheme://host:port" of u, with the default port spelled.
func endpointOf(u *url.URL) string {
	return u.Scheme + "://" + u.Hostname() + ":" + PortOf(u)
}

// SortedHosts is Hosts' keys in order.
func SortedHosts(h map[string]string) []string {
	out := make([]string, 0, len(h))
	for k := range h {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
