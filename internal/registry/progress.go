package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pullpath/pullpath/internal/netpath"
	"github.com/pullpath/pullpath/internal/verdict"
)

// MinProgressBytes is the minimum-progress rule of every response body: at
// least this many bytes must arrive in every progress window (twice the
// session's step timeout, 10 s by default), or the body is stopped as
// transfer.stall (transfer.timeout when not a byte arrived: silence, as
// the connection's idle timeout would say). 1 KiB in 10 s is 100 bytes/s: no link that can pull an
// image is that slow, and a trickle of a byte a second, which resets any
// idle timer on every byte, is stopped within one window.
const MinProgressBytes = 1 << 10

// progressWindow is the window of the minimum-progress rule.
func (s *Session) progressWindow() time.Duration { return 2 * s.timeout() }

// bodyCap is the most a manifest, token or error body may take in all
// (six step timeouts, 30 s by default): they are small, so a body that is
// still arriving after that is held, not slow. Blob bodies have no cap;
// the minimum-progress rule bounds them.
func (s *Session) bodyCap() time.Duration { return 6 * s.timeout() }

// withStall gives req a context that the body's watchdog can cancel, so a
// stalled body ends its connection at once instead of waiting on it.
func withStall(req *http.Request) (*http.Request, context.CancelCauseFunc) {
	ctx, cancel := context.WithCancelCause(req.Context())
	return req.WithContext(ctx), cancel
}

// watch puts the minimum-progress rule on resp's body: a watchdog checks
// every progress window that at least MinProgressBytes arrived (and, for
// anything but a blob, that the whole body took no longer than bodyCap);
// when not, it cancels the request and the body's Read returns a
// transfer.stall *verdict.Error for the host that sent it. Closing the body
// or reading it to the end stops the watchdog.
func (s *Session) watch(resp *http.Response, cancel context.CancelCauseFunc) {
	role, endpoint := s.Host.Role, s.Host.endpoint()
	u := resp.Request.URL
	if u.Host != s.Host.Host {
		role, endpoint = s.roleOfHost(u.Host), Endpoint(u.Scheme, u.Host)
	}
	what := "the answer to " + resp.Request.Method + " " + redactedPath(u.String())
	var total time.Duration
	if !strings.Contains(u.Path, "/blobs/") || resp.StatusCode >= 300 {
		total = s.bodyCap()
	}
	w := &watchedBody{body: resp.Body, cancel: cancel, done: make(chan struct{})}
	w.lastByte.Store(time.Now().UnixNano())
	resp.Body = w
	go w.run(s.progressWindow(), total, func(cause string, got int64, why string) *verdict.Error {
		return verdict.Errorf(cause, role, endpoint, "%s %s (%d bytes in all)", what, why, got)
	})
}

// roleOfHost is the role of a host a response came from: the token realm
// host named by the challenge is auth, any other host a redirect target.
func (s *Session) roleOfHost(host string) verdict.Role {
	s.mu.Lock()
	ch := s.challenge
	s.mu.Unlock()
	if b, ok := Bearer(ParseChallenges(ch)); ok {
		if strings.Contains(b.Params["realm"], "://"+host+"/") || strings.HasSuffix(b.Params["realm"], "://"+host) {
			return verdict.RoleAuth
		}
	}
	return verdict.RoleBlob
}

func redactedPath(raw string) string {
	p := RedactURL(raw)
	if i := strings.Index(p, "://"); i >= 0 {
		if j := strings.IndexByte(p[i+3:], '/'); j >= 0 {
			return p[i+3+j:]
		}
	}
	return p
}

// watchedBody is a response body under the minimum-progress rule.
type watchedBody struct {
	body   io.ReadCloser
	cancel context.CancelCauseFunc
	n      atomic.Int64
	// lastByte is when the last byte arrived (Unix nanoseconds).
	lastByte atomic.Int64
	stall    atomic.Pointer[verdict.Error]
	done     chan struct{}
	once     sync.Once
}

func (w *watchedBody) Read(p []byte) (int, error) {
	n, err := w.body.Read(p)
	if n > 0 {
		w.n.Add(int64(n))
		w.lastByte.Store(time.Now().UnixNano())
	}
	if err != nil {
		if e := w.stall.Load(); e != nil {
			return n, e
		}
		if errors.Is(err, io.EOF) {
			w.stop()
		}
	}
	return n, err
}

func (w *watchedBody) Close() error {
	w.stop()
	err := w.body.Close()
	w.cancel(nil)
	return err
}

func (w *watchedBody) stop() { w.once.Do(func() { close(w.done) }) }

// run is the watchdog: it checks the bytes of every window, and the whole
// body's time against total (0: no cap), until the body ends.
func (w *watchedBody) run(window, total time.Duration, stalled func(cause string, got int64, why string) *verdict.Error) {
	tick := time.NewTicker(window)
	defer tick.Stop()
	var capC <-chan time.Time
	if total > 0 {
		tm := time.NewTimer(total)
		defer tm.Stop()
		capC = tm.C
	}
	var last int64
	for {
		select {
		case <-w.done:
			return
		case <-capC:
			got := w.n.Load()
			w.fail(stalled(verdict.CodeTransferStall, got, fmt.Sprintf("was still arriving after %s, the most a manifest, token or error body may take", total)))
			return
		case <-tick.C:
			got := w.n.Load()
			if got == last || time.Since(time.Unix(0, w.lastByte.Load())) > window/2 {
				// Silence, not a trickle: the idle timeout's cause.
				w.fail(stalled(verdict.CodeTransferTimeout, got, fmt.Sprintf("went silent: no byte in the last %s", window/2)))
				return
			}
			if got-last < MinProgressBytes {
				w.fail(stalled(verdict.CodeTransferStall, got, fmt.Sprintf("brought %d bytes in %s, below the minimum progress of %d bytes per %s", got-last, window, MinProgressBytes, window)))
				return
			}
			last = got
		}
	}
}

func (w *watchedBody) fail(e *verdict.Error) {
	w.stall.Store(e)
	w.cancel(e)
}

// SmallMSSClient returns an HTTP client whose every connection is dialled
// with a small TCP MSS (netpath.ConnectSmallMSS), for the path-MTU test of
// a stalled blob or manifest; nil when the test cannot run (no TCP_MAXSEG on this
// system, or the host is reached through a proxy).
type SmallMSSClient func() *http.Client

// mtuFollowUp is how many bytes past the point where the default download
// stalled the small-MSS download must bring to count as getting through.
const mtuFollowUp = 1 << 20

// blobMTU is the path-MTU test of a blob download that stalled
// after its response began (transfer.timeout or transfer.stall): one fresh
// GET of the same blob through s.SmallMSS. If it brings the whole blob, or
// mtuFollowUp bytes more than the default download did, the verdict is
// route.mtu for the host that stalled; if it stalls too, the first verdict
// stays and says that a small MSS did not help. Any other failure keeps
// the first verdict unchanged. The fresh GET is not a retry of the pull:
// its only use is the diagnosis, and the trace shows it as such.
func (s *Session) blobMTU(ctx context.Context, d Descriptor, first error, got int64) error {
	return s.refetchMTU(ctx, "blob", d, s.url("blobs", d.Digest.String()), first, got)
}

// manifestMTU is blobMTU for a manifest or index whose body stalled.
func (s *Session) manifestMTU(ctx context.Context, d Descriptor, first error, got int64) error {
	return s.refetchMTU(ctx, "manifest", d, s.url("manifests", d.Digest.String()), first, got)
}

// refetchMTU is the path-MTU test of the download of d from u (what names
// it) that stalled after got bytes.
func (s *Session) refetchMTU(ctx context.Context, what string, d Descriptor, u string, first error, got int64) error {
	ve, ok := verdict.AsError(first)
	if !ok || s.SmallMSS == nil || (ve.Cause != verdict.CodeTransferTimeout && ve.Cause != verdict.CodeTransferStall) {
		return first
	}
	c := s.SmallMSS()
	if c == nil {
		return first
	}
	start := time.Now()
	want := got + mtuFollowUp
	if d.Size > 0 && d.Size < want {
		want = d.Size
	}
	n, err := s.fetchPrefix(ctx, c, u, want)
	took := time.Since(start).Round(time.Millisecond)
	// Only bytes count: the small-MSS download must bring more than the
	// default one did, and all it was asked for (when the size is known),
	// before it is called through.
	if err == nil && n > got && (n >= want || d.Size <= 0) {
		return &verdict.Error{Layer: verdict.LayerOf(verdict.CodeRouteMTU), Cause: verdict.CodeRouteMTU, Role: ve.Role, Endpoint: ve.Endpoint, Err: first,
			Detail: fmt.Sprintf("a %s download stalled after %d bytes with the default MSS; a fresh GET of %s with TCP_MAXSEG %d brought %d bytes in %s", what, got, d.Digest, netpath.SmallMSS, n, took)}
	}
	if err == nil {
		err = verdict.Errorf(verdict.CodeTransferStall, ve.Role, ve.Endpoint, "the body ended after %d of %d bytes", n, want)
	}
	if sv, ok := verdict.AsError(err); !ok || (sv.Cause != verdict.CodeTransferTimeout && sv.Cause != verdict.CodeTransferStall && sv.Cause != verdict.CodeTLSTimeout) {
		return first
	}
	out := *ve
	note := fmt.Sprintf("a fresh GET with TCP_MAXSEG %d stalled too (%d bytes in %s), so a small MSS did not help: not a path-MTU black hole", netpath.SmallMSS, n, took)
	if out.Detail != "" {
		note = out.Detail + "; " + note
	}
	out.Detail = note
	return &out
}

// fetchPrefix GETs u with client c (following redirects, under the
// minimum-progress rule) and reads until want bytes or the end of the body.
func (s *Session) fetchPrefix(ctx context.Context, c *http.Client, u string, want int64) (int64, error) {
	req, err := s.newRequest(ctx, http.MethodGet, u)
	if err != nil {
		return 0, err
	}
	req, cancel := withStall(req)
	resp, err := c.Do(req)
	if err != nil {
		defer cancel(nil)
		if cerr := ctx.Err(); cerr != nil {
			return 0, contextError(cerr, s.Host.Role, s.Host.endpoint())
		}
		return 0, transportError(err, s.Host.Role, s.Host.endpoint(), false)
	}
	s.watch(resp, cancel)
	defer resp.Body.Close()
	role, ep := s.Host.Role, s.Host.endpoint()
	if resp.Request.URL.Host != s.Host.Host {
		role, ep = verdict.RoleBlob, Endpoint(resp.Request.URL.Scheme, resp.Request.URL.Host)
	}
	if resp.StatusCode >= 300 {
		return 0, s.statusError(resp, role, ep, false)
	}
	buf := bufPool.Get().(*[]byte)
	n, err := io.CopyBuffer(io.Discard, io.LimitReader(resp.Body, want), *buf)
	bufPool.Put(buf)
	if err != nil {
		return n, transportError(err, role, ep, true)
	}
	return n, nil
}
