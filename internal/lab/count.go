package lab

import (
	"crypto/subtle"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The lab's HTTPS hosts, as Request.Host names them.
const (
	HostRegistry = "registry"
	HostAuth     = "auth"
	HostBlob     = "blob"
	HostMirror   = "mirror"
)

// listenerHosts names the listeners bindHTTPS opens, in its order.
var listenerHosts = []string{HostRegistry, HostAuth, HostBlob, HostMirror}

// NodeHeader is the request header the lab reads to tell clients apart in
// its request log: a node root's hosts.toml may set it ([header]), as an
// operator sets headers for a mirror, so that a simulation of many agents
// can attribute each request to its agent.
const NodeHeader = "X-Pullpath-Node"

// Request kinds of the lab's request log.
const (
	KindToken        = "token"
	KindManifestHead = "manifest_head"
	KindManifestGet  = "manifest_get"
	KindBlobHead     = "blob_head"
	KindBlobGet      = "blob_get"
	KindPing         = "ping"
	KindOther        = "other"
)

// Request is one request the lab served (the lab's own setup requests are
// not logged).
type Request struct {
	At     time.Time
	Host   string // registry, auth, blob or mirror
	Kind   string
	Node   string // the NodeHeader, when the client sent one
	Status int
	Bytes  int64 // response body bytes written
}

// counter logs every request to the HTTPS hosts and answers 429 for a host
// while it is throttled.
type counter struct {
	secret string

	mu        sync.Mutex
	log       []Request
	throttled map[string]throttle
}

type throttle struct {
	until      time.Time
	retryAfter string
}

func kindOf(host string, r *http.Request) string {
	if host == HostAuth {
		return KindToken
	}
	p, head := r.URL.Path, r.Method == http.MethodHead
	switch {
	case strings.Contains(p, "/manifests/") && head:
		return KindManifestHead
	case strings.Contains(p, "/manifests/"):
		return KindManifestGet
	case (strings.Contains(p, "/blobs/") || host == HostBlob) && head:
		return KindBlobHead
	case strings.Contains(p, "/blobs/") || host == HostBlob:
		return KindBlobGet
	case p == "/v2/" || p == "/v2":
		return KindPing
	}
	return KindOther
}

type countingWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *countingWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *countingWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Flush passes through to the server.
func (w *countingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (c *counter) wrap(host string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s := r.Header.Get(setupHeader); s != "" && subtle.ConstantTimeCompare([]byte(s), []byte(c.secret)) == 1 {
			next.ServeHTTP(w, r)
			return
		}
		rec := Request{At: time.Now(), Host: host, Kind: kindOf(host, r), Node: r.Header.Get(NodeHeader)}
		cw := &countingWriter{ResponseWriter: w}
		c.mu.Lock()
		t, throttled := c.throttled[host]
		c.mu.Unlock()
		if throttled && rec.At.Before(t.until) {
			cw.Header().Set("Retry-After", t.retryAfter)
			writeRegistryError(cw, http.StatusTooManyRequests, "TOOMANYREQUESTS", "the lab throttles this host")
		} else {
			next.ServeHTTP(cw, r)
		}
		rec.Status, rec.Bytes = cw.status, cw.bytes
		if rec.Status == 0 {
			rec.Status = http.StatusOK
		}
		c.mu.Lock()
		c.log = append(c.log, rec)
		c.mu.Unlock()
	})
}

// Requests returns the requests logged since the lab started or since the
// last ResetRequests.
func (l *Lab) Requests() []Request {
	l.counter.mu.Lock()
	defer l.counter.mu.Unlock()
	return append([]Request(nil), l.counter.log...)
}

// ResetRequests empties the request log.
func (l *Lab) ResetRequests() {
	l.counter.mu.Lock()
	l.counter.log = nil
	l.counter.mu.Unlock()
}

// Throttle makes host (HostRegistry, HostMirror, ...) answer every request
// with 429 Too Many Requests and Retry-After: retryAfter seconds until
// until, as a registry over its request budget does.
func (l *Lab) Throttle(host string, until time.Time, retryAfter int) {
	l.counter.mu.Lock()
	defer l.counter.mu.Unlock()
	if l.counter.throttled == nil {
		l.counter.throttled = map[string]throttle{}
	}
	l.counter.throttled[host] = throttle{until: until, retryAfter: strconv.Itoa(retryAfter)}
}
