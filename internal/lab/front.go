package lab

import (
	"crypto/subtle"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// setupHeader marks the lab's own setup requests (the pusher); the front
// lets them through every fault. Its value is a random secret per lab.
const setupHeader = "X-Pullpath-Lab-Setup"

// front is the small handler in front of the registry that injects the
// faults chosen by repository prefix (the first path segment after /v2/):
//
//   - broken/*: every request is answered 503 UNAVAILABLE, like a registry
//     whose backend is down (server-error);
//   - ratelimited/*: once the client presents a token, 429 TOOMANYREQUESTS,
//     like Docker Hub's pull limit (ratelimit);
//   - denied/*: once the client presents a token, 403 DENIED, like a
//     registry whose policy refuses an identity the token service knows
//     (authz-denied);
//   - authdown/*: the 401 challenge's realm points at authdown.lab.test,
//     which resolves to the dead address (auth-host-down);
//   - blobnx/*, blobdead/*: the 307 blob redirect points at nxblob.lab.test
//     (not in DNS) or deadblob.lab.test (the dead address) instead of the
//     blob host (blob-nxdomain, blob-refused).
//
// Everything else goes to the registry unchanged.
type front struct {
	next   http.Handler
	secret string
	// hostFor maps a short name ("authdown") to "authdown.lab.test[:port]".
	hostFor func(short string) string
}

func repoPrefix(p string) string {
	rest, ok := strings.CutPrefix(p, "/v2/")
	if !ok {
		return ""
	}
	prefix, _, _ := strings.Cut(rest, "/")
	return prefix
}

func hasBearer(r *http.Request) bool {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	return ok && tok != "" && strings.EqualFold(scheme, "bearer")
}

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s := r.Header.Get(setupHeader); s != "" && subtle.ConstantTimeCompare([]byte(s), []byte(f.secret)) == 1 {
		f.next.ServeHTTP(w, r)
		return
	}
	r.Header.Del(setupHeader)
	switch repoPrefix(r.URL.Path) {
	case "broken":
		w.Header().Set("Retry-After", "30")
		writeRegistryError(w, http.StatusServiceUnavailable, "UNAVAILABLE", "service unavailable")
		return
	case "ratelimited":
		if hasBearer(r) {
			w.Header().Set("Retry-After", "3600")
			writeRegistryError(w, http.StatusTooManyRequests, "TOOMANYREQUESTS",
				"You have reached your pull rate limit. You may increase the limit by authenticating and upgrading.")
			return
		}
	case "denied":
		if hasBearer(r) {
			writeRegistryError(w, http.StatusForbidden, "DENIED", "requested access to the resource is denied")
			return
		}
	case "authdown":
		f.next.ServeHTTP(&rewriter{ResponseWriter: w, edit: func(h http.Header) {
			if c := h.Get("WWW-Authenticate"); c != "" {
				h.Set("WWW-Authenticate", replaceRealmHost(c, f.hostFor("authdown")))
			}
		}}, r)
		return
	case "blobnx", "blobdead":
		target := f.hostFor("nxblob")
		if repoPrefix(r.URL.Path) == "blobdead" {
			target = f.hostFor("deadblob")
		}
		f.next.ServeHTTP(&rewriter{ResponseWriter: w, edit: func(h http.Header) {
			if loc := h.Get("Location"); loc != "" && strings.Contains(r.URL.Path, "/blobs/") {
				if u, err := url.Parse(loc); err == nil && u.IsAbs() {
					u.Host = target
					h.Set("Location", u.String())
				}
			}
		}}, r)
		return
	}
	f.next.ServeHTTP(w, r)
}

// replaceRealmHost swaps the host of realm="https://host/..." in a challenge.
func replaceRealmHost(challenge, host string) string {
	const key = `realm="`
	i := strings.Index(challenge, key)
	if i < 0 {
		return challenge
	}
	start := i + len(key)
	end := strings.IndexByte(challenge[start:], '"')
	if end < 0 {
		return challenge
	}
	u, err := url.Parse(challenge[start : start+end])
	if err != nil {
		return challenge
	}
	u.Host = host
	return challenge[:start] + u.String() + challenge[start+end:]
}

// rewriter edits the response headers just before they are written.
type rewriter struct {
	http.ResponseWriter
	edit  func(http.Header)
	wrote bool
}

func (rw *rewriter) WriteHeader(code int) {
	if !rw.wrote {
		rw.wrote = true
		rw.edit(rw.Header())
	}
	rw.ResponseWriter.WriteHeader(code)
}

func (rw *rewriter) Write(b []byte) (int, error) {
	if !rw.wrote {
		rw.WriteHeader(http.StatusOK)
	}
	return rw.ResponseWriter.Write(b)
}

func (rw *rewriter) Unwrap() http.ResponseWriter { return rw.ResponseWriter }

// blobHost is the separate blob host: it serves the bytes the registry's
// filesystem storage holds, at the paths the redirect storage middleware
// hands out (/docker/registry/v2/blobs/sha256/<2>/<hex>/data), like an
// object store behind a CDN. Blobs whose digest is in corrupt are served
// with one byte flipped (same length), so the client's digest check fails
// (blob-corrupt).
type blobHost struct {
	root string // the filesystem driver's rootdirectory

	mu      sync.Mutex
	corrupt map[string]bool // hex digest → flip a byte
}

const blobPrefix = "/docker/registry/v2/blobs/"

func (b *blobHost) setCorrupt(hex string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.corrupt == nil {
		b.corrupt = map[string]bool{}
	}
	b.corrupt[hex] = true
}

func (b *blobHost) isCorrupt(hex string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.corrupt[hex]
}

func (b *blobHost) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	p := path.Clean(r.URL.Path)
	if !strings.HasPrefix(p, blobPrefix) || path.Base(p) != "data" {
		http.NotFound(w, r)
		return
	}
	// .../blobs/sha256/ab/<hex>/data
	parts := strings.Split(strings.TrimPrefix(p, blobPrefix), "/")
	if len(parts) != 4 {
		http.NotFound(w, r)
		return
	}
	hex := parts[2]
	f, err := os.Open(filepath.Join(b.root, filepath.FromSlash(p)))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		http.NotFound(w, r)
		return
	}
	var content io.ReadSeeker = f
	if b.isCorrupt(hex) {
		content = &flipper{rs: f, at: fi.Size() / 2}
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("ETag", `"`+hex+`"`)
	http.ServeContent(w, r, "", time.Time{}, content)
}

// flipper reads rs with the byte at offset at inverted.
type flipper struct {
	rs  io.ReadSeeker
	at  int64
	off int64
}

func (f *flipper) Read(p []byte) (int, error) {
	n, err := f.rs.Read(p)
	if f.at >= f.off && f.at < f.off+int64(n) {
		p[f.at-f.off] ^= 0xff
	}
	f.off += int64(n)
	return n, err
}

func (f *flipper) Seek(offset int64, whence int) (int64, error) {
	n, err := f.rs.Seek(offset, whence)
	if err == nil {
		f.off = n
	}
	return n, err
}

var (
	_ http.Handler = (*front)(nil)
	_ http.Handler = (*blobHost)(nil)
)
