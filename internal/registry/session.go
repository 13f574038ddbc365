package registry

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/opencontainers/go-digest"

	"github.com/pullpath/pullpath/internal/redact"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Media types containerd asks for when it resolves a reference
// (core/remotes/docker/resolver.go), in its order.
var manifestAccept = strings.Join([]string{
	"application/vnd.docker.distribution.manifest.v2+json",
	"application/vnd.docker.distribution.manifest.list.v2+json",
	"application/vnd.oci.image.manifest.v1+json",
	"application/vnd.oci.image.index.v1+json",
	"*/*",
}, ", ")

// maxManifest bounds the size of a manifest or index body (containerd uses 4 MiB for manifests).
const maxManifest = 4 << 20

// MaxRedirects is how many redirects a blob download may follow (Go's and containerd's limit).
const MaxRedirects = 10

// Credentials are the identity a pull presents. The zero value is anonymous.
type Credentials struct {
	Username string
	Password string // or a refresh/identity token when Username is empty
	Source   string // where they came from, for the report ("--username", "docker config FILE")
}

// Anonymous reports whether c carries no credentials.
func (c *Credentials) Anonymous() bool { return c == nil || (c.Username == "" && c.Password == "") }

// Describe names the identity without its secret.
func (c *Credentials) Describe() string {
	if c.Anonymous() {
		return "anonymous"
	}
	who := c.Username
	if who == "" {
		who = "<identity token>"
	}
	if c.Source != "" {
		return fmt.Sprintf("user %q (from %s)", who, c.Source)
	}
	return fmt.Sprintf("user %q", who)
}

// Host is one registry host to talk to, as containerd's hosts.toml would
// configure it.
type Host struct {
	Host      string // host[:port]
	Scheme    string // https | http
	Path      string // API root, "/v2" by default
	Role      verdict.Role
	Namespace string // the image's registry name; sent as ?ns= when Host is a mirror (isProxy)
	// Header holds the extra headers of every request to the host
	// (hosts.toml [header], config.toml registry.headers).
	Header http.Header
	// TokenHeader holds the extra headers of the token requests this
	// host's challenges draw (containerd 2.1+ sends the host's headers
	// there too: runtimecfg Config.Headers); nil sends none.
	TokenHeader http.Header
}

func (h Host) endpoint() string { return Endpoint(h.Scheme, h.Host) }

// Endpoint returns host:port with the scheme's default port filled in.
func Endpoint(scheme, host string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = strings.Trim(host, "[]")
	}
	return net.JoinHostPort(host, DefaultPort(scheme))
}

// DefaultPort is the port a registry URL of scheme means when it names
// none: 80 for http, 443 for everything else (a registry is https unless
// its hosts.toml says http).
func DefaultPort(scheme string) string {
	if scheme == "http" {
		return "80"
	}
	return "443"
}

// PortOf is u's port, or DefaultPort of its scheme when it names none.
func PortOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	return DefaultPort(u.Scheme)
}

// Descriptor identifies content in the registry.
type Descriptor struct {
	MediaType string
	Digest    digest.Digest
	Size      int64
}

// Session is one repository on one host with its authorization state.
type Session struct {
	Client *http.Client
	Host   Host
	Repo   string
	Creds  *Credentials
	// OnRole is told the role of every host before it is first dialled
	// (the token realm host, each blob redirect host).
	OnRole func(host string, role verdict.Role)
	// Timeout bounds each request's wait for response headers and each
	// stall of a body. The default is 5s.
	Timeout time.Duration
	// PlainHTTP reports whether hosts.toml declares a host plain-http, the
	// only case where credentials or tokens may go to it in cleartext. The
	// default allows only Host itself when its scheme is http.
	PlainHTTP func(host string) bool
	// OnWarning is told what works but should not (a foreign token realm).
	OnWarning func(verdict.Warning)
	// SmallMSS, when set, runs the path-MTU test of a stalled blob or
	// manifest download (progress.go). The default is no test.
	SmallMSS SmallMSSClient
	// Memo, when set, keeps tokens and manifests between sessions, counts
	// the requests and holds each host's Retry-After (memo.go).
	Memo *Memo
	// RangeChunk, when 512 or more, downloads blobs as containerd 2.1+
	// does with concurrent_layer_fetch_buffer set: Range requests of this
	// many bytes (rangefetch.go). The default is one plain GET per blob.
	RangeChunk int64

	mu         sync.Mutex
	authHeader string            // "Bearer ..." or "Basic ..." for Host only; never logged
	memoAuth   bool              // authHeader came from Memo
	hostAuth   map[string]string // tokens other hosts' own challenges issued, by host
	scope      string
	challenge  string // last challenge header, for evidence
	// headerRejected: Host answered 401 to a request whose Authorization
	// was Host.Header's (a hosts.toml [header]), before the session had
	// credentials of its own to answer with.
	headerRejected bool
}

// HeaderRejected reports whether the host rejected the Authorization
// header of Host.Header (hosts.toml) during the session: containerd then
// answers the challenge with the pull's credentials, as the session does.
func (s *Session) HeaderRejected() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.headerRejected
}

func (s *Session) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return 5 * time.Second
}

func (s *Session) role(host string, r verdict.Role) {
	if s.OnRole != nil {
		s.OnRole(host, r)
	}
}

func (s *Session) url(kind, ref string) string {
	u := url.URL{Scheme: s.Host.Scheme, Host: s.Host.Host, Path: strings.TrimSuffix(s.Host.Path, "/") + "/" + s.Repo + "/" + kind + "/" + ref}
	if s.Host.Namespace != "" && isProxy(s.Host.Namespace, s.Host.Host) {
		u.RawQuery = url.Values{"ns": {s.Host.Namespace}}.Encode()
	}
	return u.String()
}

// isProxy is containerd's RegistryHost.isProxy
// (core/remotes/docker/registry.go), which decides whether a request
// carries ?ns=<the image's registry> (request.addNamespace, for resolve
// and fetch alike): when the host is not the registry itself, except
// registry-1.docker.io for docker.io, which is docker.io's own endpoint
// and not a mirror.
func isProxy(refHost, host string) bool {
	return refHost != host && (refHost != "docker.io" || host != "registry-1.docker.io")
}

// Scope is the token scope the session asks for.
func (s *Session) Scope() string { return "repository:" + s.Repo + ":pull" }

// Challenge is the last WWW-Authenticate header the registry sent.
func (s *Session) Challenge() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.challenge
}

func (s *Session) newRequest(ctx context.Context, method, u string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, verdict.Wrap(verdict.CodeConfigReference, s.Host.Role, s.Host.endpoint(), err)
	}
	foreign := req.URL.Host != s.Host.Host
	for k, vs := range s.Host.Header {
		// A host reached by redirect gets the hosts.toml headers as Go's
		// client forwards them on a redirect to another domain
		// (net/http shouldCopyHeaderOnRedirect): without Authorization,
		// WWW-Authenticate and cookies. This request goes there only when
		// the redirected one carried no Authorization (do), so the
		// header of the registry's hosts.toml never reaches another host.
		if foreign && sensitiveOnRedirect(k) {
			continue
		}
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	setUserAgent(req)
	if r, ok := ctx.Value(rangeKey{}).(string); ok {
		req.Header.Set("Range", r) // blobRanged
	}
	// The session's credentials go to its own host only; another host gets
	// only what its own challenge issued.
	s.mu.Lock()
	auth := s.authHeader
	if req.URL.Host != s.Host.Host {
		auth = s.hostAuth[req.URL.Host]
	}
	s.mu.Unlock()
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	return req, nil
}

// setUserAgent sets the probe's User-Agent unless a configured header set
// one (containerd, too, sets its own only when none is configured).
func setUserAgent(req *http.Request) {
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "pullpath (containerd-compatible)")
	}
}

// sensitiveOnRedirect names the headers Go's client drops on a redirect
// to another domain (net/http client.go shouldCopyHeaderOnRedirect).
func sensitiveOnRedirect(k string) bool {
	switch http.CanonicalHeaderKey(k) {
	case "Authorization", "Www-Authenticate", "Cookie", "Cookie2", "Proxy-Authorization":
		return true
	}
	return false
}

// do sends a request, answering each host's 401 challenge once: the
// session's own host with the session's credentials, a host reached by
// redirect (a blob host) with an anonymous token from its own realm at most,
// retried on that host directly. The caller closes the body.
func (s *Session) do(ctx context.Context, method, u, accept string, manifest bool) (*http.Response, error) {
	target := u
	answered := map[string]bool{}
	if _, err := s.renewToken(ctx); err != nil {
		return nil, err
	}
	for {
		req, err := s.newRequest(ctx, method, target)
		if err != nil {
			return nil, err
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		role, ep := s.Host.Role, s.Host.endpoint()
		if req.URL.Host != s.Host.Host {
			role, ep = verdict.RoleBlob, Endpoint(req.URL.Scheme, req.URL.Host)
		}
		resp, err := s.roundTrip(req, role, ep)
		if err != nil {
			return nil, err
		}
		at := resp.Request.URL
		if resp.StatusCode != http.StatusUnauthorized || answered[at.Host] {
			return resp, nil
		}
		hdr := resp.Header.Get("WWW-Authenticate")
		if at.Host == s.Host.Host {
			// Answer a challenge once: a 401 to a request that already
			// carried credentials is the registry's final word
			// (insufficient_scope, bad token), as it is for containerd.
			s.mu.Lock()
			authorized, fromMemo := s.authHeader != "", s.memoAuth
			if fromMemo {
				// A kept token the registry no longer takes (revoked,
				// or its clock runs ahead): forget it and answer the
				// challenge as a first request would.
				s.authHeader, s.memoAuth, authorized = "", false, false
			}
			s.mu.Unlock()
			if fromMemo {
				s.Memo.dropToken(tokenKey(s.Host.Host, s.Scope(), s.Creds))
			}
			if authorized {
				return resp, nil
			}
			answered[at.Host] = true
			s.mu.Lock()
			s.challenge = hdr
			if h := resp.Request.Header.Get("Authorization"); h != "" && h == s.Host.Header.Get("Authorization") {
				// The hosts.toml header was refused: containerd's
				// authorizer answers the challenge with the pull's
				// credentials and retries (remotes/docker resolver.go
				// retryRequest, authorizer.go AddResponses).
				s.headerRejected = true
			}
			s.mu.Unlock()
			s.Memo.putChallenge(tokenKey(s.Host.Host, s.Scope(), s.Creds), hdr)
			drain(resp)
			if err := s.authorize(ctx, hdr); err != nil {
				return nil, err
			}
			continue
		}
		// A host reached by redirect challenges. When the request carried
		// the registry's token (Go forwards it to the same host and its
		// subdomains), the 401 is final.
		if resp.Request.Header.Get("Authorization") != "" {
			return resp, nil
		}
		answered[at.Host] = true
		drain(resp)
		s.mu.Lock()
		_, have := s.hostAuth[at.Host]
		s.mu.Unlock()
		if !have {
			if err := s.authorizeForeign(ctx, hdr, at); err != nil {
				return nil, err
			}
		}
		target = at.String()
	}
}

// renewToken fetches a token before the first request when the Memo's
// token expired but it holds the registry's challenge: a new token without
// the 401 that would only repeat it. renewed says a token was fetched.
func (s *Session) renewToken(ctx context.Context) (renewed bool, err error) {
	if s.Memo == nil {
		return false, nil
	}
	s.mu.Lock()
	have := s.authHeader != ""
	s.mu.Unlock()
	if have {
		return false, nil
	}
	key := tokenKey(s.Host.Host, s.Scope(), s.Creds)
	if a, ok := s.Memo.token(key); ok {
		s.mu.Lock()
		s.authHeader, s.memoAuth = a, true
		s.mu.Unlock()
		return false, nil
	}
	hdr := s.Memo.lastChallenge(key)
	if _, ok := Bearer(ParseChallenges(hdr)); !ok {
		return false, nil
	}
	s.mu.Lock()
	s.challenge = hdr
	s.mu.Unlock()
	if err := s.authorize(ctx, hdr); err != nil {
		return false, err
	}
	return true, nil
}

// roundTrip runs one request and turns transport failures into step errors.
// The transport's ResponseHeaderTimeout bounds the wait for headers.
func (s *Session) roundTrip(req *http.Request, role verdict.Role, endpoint string) (*http.Response, error) {
	if until, blocked := s.Memo.Blocked(s.Host.Host); blocked {
		return nil, verdict.Errorf(verdict.CodeRegistryRatelimit, role, endpoint, "not sent: %s asked for no request before %s (Retry-After)", s.Host.Host, until.UTC().Format(time.RFC3339))
	}
	req, cancel := withStall(req)
	resp, err := s.Client.Do(req)
	if s.Memo != nil {
		s.Memo.observe(s.Host.Host, req, resp, role == verdict.RoleAuth)
		if resp != nil {
			at := resp.Request.URL
			r := string(role)
			if at.Host != s.Host.Host && role != verdict.RoleAuth {
				r = string(verdict.RoleBlob)
			}
			s.Memo.NoteHost(s.Host.Host, endpointOf(at), r)
		}
	}
	if err != nil {
		defer cancel(nil)
		if cerr := req.Context().Err(); cerr != nil {
			return nil, contextError(cerr, role, endpoint)
		}
		return nil, transportError(err, role, endpoint, false)
	}
	s.watch(resp, cancel)
	return resp, nil
}

// contextError is the verdict when the probe's own context ended: the
// whole-run deadline (unknown.deadline) or a cancellation.
func contextError(err error, role verdict.Role, endpoint string) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return verdict.Wrap(verdict.CodeUnknownDeadline, role, endpoint, fmt.Errorf("the probe's deadline expired while waiting for %s", endpoint))
	}
	return verdict.Wrap(verdict.CodeUnknown, role, endpoint, fmt.Errorf("the probe was cancelled while waiting for %s: %w", endpoint, err))
}

// transportError classifies an error from http.Client.Do. Dial, DNS and TLS
// step errors arrive already typed from the dialer; what is left happened on
// an open connection.
func transportError(err error, role verdict.Role, endpoint string, inBody bool) error {
	if ve, ok := verdict.AsError(err); ok {
		return ve
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil && u.Host != "" {
			endpoint = Endpoint(u.Scheme, u.Host)
		}
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "stopped after") && strings.Contains(msg, "redirects"):
		return verdict.Wrap(verdict.CodeTransferRedirect, role, endpoint, RedactError(err))
	case strings.Contains(msg, "server gave HTTP response to HTTPS client"):
		return verdict.Wrap(verdict.CodeTLSPlainHTTP, role, endpoint, RedactError(err))
	case isNetTimeout(err):
		if role == verdict.RoleBlob || inBody {
			return verdict.Wrap(verdict.CodeTransferTimeout, role, endpoint, RedactError(err))
		}
		return verdict.Wrap(verdict.CodeRegistryUnavailable, role, endpoint, fmt.Errorf("no response in time: %w", RedactError(err)))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), strings.Contains(msg, "connection reset"), strings.Contains(msg, "broken pipe"):
		if role == verdict.RoleBlob || inBody {
			return verdict.Wrap(verdict.CodeTransferReset, role, endpoint, RedactError(err))
		}
		return verdict.Wrap(verdict.CodeRouteReset, role, endpoint, RedactError(err))
	}
	return verdict.Wrap(verdict.CodeRegistryProtocol, role, endpoint, RedactError(err))
}

func isNetTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// RedactError strips the query string of the URL in a *url.Error (signed
// blob URLs carry their credentials there) and passes the rest of the text
// through the redactor.
func RedactError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return redact.Error(&url.Error{Op: ue.Op, URL: RedactURL(ue.URL), Err: ue.Err})
	}
	return redact.Error(err)
}

// RedactURL removes the query string and user info of a URL: signed blob
// URLs carry their credentials there. A lone ?ns= of a mirror request stays.
func RedactURL(raw string) string { return redact.Query(raw) }

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
}

func (s *Session) statusError(resp *http.Response, role verdict.Role, endpoint string, manifest bool) error {
	codes, text := ReadErrorBody(resp.Body)
	resp.Body.Close()
	se := &StatusError{Method: resp.Request.Method, URL: RedactURL(resp.Request.URL.String()), Status: resp.Status, Code: resp.StatusCode, Codes: codes, Body: text, Header: resp.Header}
	cause := statusCause(se, s.Creds.Anonymous(), manifest)
	if s.HeaderRejected() && resp.Request.URL.Host == s.Host.Host && resp.StatusCode == http.StatusUnauthorized {
		if cause == verdict.CodeAuthNoCredentials {
			// The 401 stands after the header was refused and the
			// anonymous token that followed it.
			cause = verdict.CodeAuthHostsHeaderRejected
		}
		return verdict.Wrap(cause, role, endpoint, fmt.Errorf("%w (after %s had rejected the Authorization header of hosts.toml)", se, s.Host.Host))
	}
	if resp.Request.URL.Host != s.Host.Host && role == s.Host.Role {
		// The answer came from a redirect target.
		role = verdict.RoleBlob
		endpoint = Endpoint(resp.Request.URL.Scheme, resp.Request.URL.Host)
	}
	if role == verdict.RoleBlob && (cause == verdict.CodeAuthzDenied || cause == verdict.CodeAuthNoCredentials || cause == verdict.CodeAuthBadCredentials) {
		cause = verdict.CodeTransferStatus
	}
	return verdict.Wrap(cause, role, endpoint, se)
}

// Resolve is step 1 of a pull: HEAD the manifest of ref (a tag or digest)
// and return its descriptor. On 401 it fetches a token at the realm and
// tries once more. When the HEAD answer carries no digest, it GETs the
// manifest as containerd does.
//
// With a Memo that has OneRequest set, a call that has to renew the kept
// token sends the token request only: the digest the last call resolved
// stands for this one, and the next call HEADs the manifest with the new
// token (memo.go).
func (s *Session) Resolve(ctx context.Context, ref string) (Descriptor, error) {
	d, skipped, err := s.resolve(ctx, ref)
	if err == nil && !skipped {
		s.Memo.putResolved(s.resolvedKey(ref), d)
	}
	return d, err
}

func (s *Session) resolvedKey(ref string) string {
	return tokenKey(s.Host.Host, s.Scope(), s.Creds) + " " + ref
}

func (s *Session) resolve(ctx context.Context, ref string) (Descriptor, bool, error) {
	if s.Memo != nil && s.Memo.OneRequest {
		renewed, err := s.renewToken(ctx)
		if err != nil {
			return Descriptor{}, false, err
		}
		if renewed {
			if d, ok := s.Memo.skipResolve(s.resolvedKey(ref)); ok {
				return d, true, nil
			}
		}
	}
	u := s.url("manifests", ref)
	resp, err := s.do(ctx, http.MethodHead, u, manifestAccept, true)
	if err != nil {
		return Descriptor{}, false, err
	}
	if resp.StatusCode >= 300 {
		drain(resp)
		// A HEAD carries no body: GET for the registry's error codes.
		gresp, gerr := s.do(ctx, http.MethodGet, u, manifestAccept, true)
		if gerr != nil {
			return Descriptor{}, false, gerr
		}
		if gresp.StatusCode < 300 {
			// Registries that refuse HEAD but serve GET: use the GET.
			d, err := descriptorFrom(gresp, ref, true)
			return d, false, err
		}
		return Descriptor{}, false, s.statusError(gresp, s.Host.Role, s.Host.endpoint(), true)
	}
	drain(resp)
	d, err := descriptorFrom(resp, ref, false)
	if err == nil && d.Digest != "" {
		return d, false, nil
	}
	gresp, gerr := s.do(ctx, http.MethodGet, u, manifestAccept, true)
	if gerr != nil {
		return Descriptor{}, false, gerr
	}
	if gresp.StatusCode >= 300 {
		return Descriptor{}, false, s.statusError(gresp, s.Host.Role, s.Host.endpoint(), true)
	}
	d, err = descriptorFrom(gresp, ref, true)
	return d, false, err
}

func descriptorFrom(resp *http.Response, ref string, body bool) (Descriptor, error) {
	d := Descriptor{MediaType: resp.Header.Get("Content-Type")}
	if dg, err := digest.Parse(resp.Header.Get("Docker-Content-Digest")); err == nil {
		d.Digest = dg
	} else if dg, err := digest.Parse(ref); err == nil {
		d.Digest = dg
	}
	if n, err := strconv.ParseInt(resp.Header.Get("Content-Length"), 10, 64); err == nil {
		d.Size = n
	}
	if body {
		defer resp.Body.Close()
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxManifest+1))
		if ve, ok := verdict.AsError(err); ok {
			return d, ve
		}
		if err != nil {
			return d, verdict.Wrap(verdict.CodeRegistryProtocol, verdict.RoleRegistry, Endpoint(resp.Request.URL.Scheme, resp.Request.URL.Host), err)
		}
		if len(data) > maxManifest {
			return d, verdict.Errorf(verdict.CodeManifestInvalid, verdict.RoleRegistry, Endpoint(resp.Request.URL.Scheme, resp.Request.URL.Host), "manifest larger than %d bytes", maxManifest)
		}
		if d.Digest == "" {
			d.Digest = digest.FromBytes(data)
		}
		d.Size = int64(len(data))
	}
	return d, nil
}

// Manifest is step 3: GET the manifest or index d and verify its digest.
func (s *Session) Manifest(ctx context.Context, d Descriptor) ([]byte, string, error) {
	if data, mt, ok := s.Memo.manifest(d.Digest); ok {
		return data, mt, nil
	}
	resp, err := s.do(ctx, http.MethodGet, s.url("manifests", d.Digest.String()), manifestAccept, true)
	if err != nil {
		return nil, "", err
	}
	if resp.StatusCode >= 300 {
		return nil, "", s.statusError(resp, s.Host.Role, s.Host.endpoint(), true)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxManifest+1))
	if err != nil {
		return nil, "", s.manifestMTU(ctx, d, transportError(err, s.Host.Role, s.Host.endpoint(), true), int64(len(data)))
	}
	if len(data) > maxManifest {
		return nil, "", verdict.Errorf(verdict.CodeManifestInvalid, s.Host.Role, s.Host.endpoint(), "manifest %s larger than %d bytes", d.Digest, maxManifest)
	}
	if d.Digest != "" && d.Digest.Validate() == nil {
		if got := d.Digest.Algorithm().FromBytes(data); got != d.Digest {
			return nil, "", verdict.Errorf(verdict.CodeTransferDigest, s.Host.Role, s.Host.endpoint(), "manifest %s: got digest %s", d.Digest, got)
		}
	}
	mt := resp.Header.Get("Content-Type")
	if m := sniffMediaType(data); m != "" {
		mt = m
	}
	if d.Digest != "" && d.Digest.Validate() == nil {
		s.Memo.putManifest(d.Digest, data, mt)
	}
	return data, mt, nil
}

func sniffMediaType(data []byte) string {
	var probe struct {
		MediaType string            `json:"mediaType"`
		Manifests []json.RawMessage `json:"manifests"`
		Layers    []json.RawMessage `json:"layers"`
	}
	if json.Unmarshal(data, &probe) != nil {
		return ""
	}
	if probe.MediaType != "" {
		return probe.MediaType
	}
	if probe.Manifests != nil {
		return "application/vnd.oci.image.index.v1+json"
	}
	if probe.Layers != nil {
		return "application/vnd.oci.image.manifest.v1+json"
	}
	return ""
}

// BlobResult is what happened to one blob download.
type BlobResult struct {
	Host     string // the host that served the bytes, after redirects
	Bytes    int64
	Verified bool
	Duration time.Duration
	// Ranges counts the Range requests of a ranged download (RangeChunk);
	// RangeIgnored is true when the host answered the first one with the
	// whole body (containerd then uses that one request).
	Ranges       int
	RangeIgnored bool
}

// Progress is told how many bytes arrived.
type Progress func(n int64)

// Blob is step 4: GET the blob d, follow redirects to blob hosts (each host
// dialled with its own dns/route/tls steps, role blob), and stream the body
// through its digest and a size check without keeping it. With headOnly it
// sends a HEAD and checks status and size only.
func (s *Session) Blob(ctx context.Context, d Descriptor, headOnly bool, progress Progress) (BlobResult, error) {
	if !headOnly && s.RangeChunk >= 512 {
		return s.blobRanged(ctx, d, progress)
	}
	method := http.MethodGet
	if headOnly {
		method = http.MethodHead
	}
	start := time.Now()
	res := BlobResult{Host: s.Host.Host}
	resp, err := s.do(ctx, method, s.url("blobs", d.Digest.String()), "", false)
	if err != nil {
		return res, err
	}
	res.Host = resp.Request.URL.Host
	servedRole, servedEP := s.Host.Role, s.Host.endpoint()
	if resp.Request.URL.Host != s.Host.Host {
		servedRole, servedEP = verdict.RoleBlob, Endpoint(resp.Request.URL.Scheme, resp.Request.URL.Host)
	}
	if resp.StatusCode >= 300 {
		return res, s.statusError(resp, s.Host.Role, s.Host.endpoint(), false)
	}
	defer resp.Body.Close()
	if headOnly {
		if n, err := strconv.ParseInt(resp.Header.Get("Content-Length"), 10, 64); err == nil && d.Size > 0 && n != d.Size {
			return res, verdict.Errorf(verdict.CodeTransferSize, servedRole, servedEP, "blob %s: HEAD says %d bytes, manifest says %d", d.Digest, n, d.Size)
		}
		res.Duration = time.Since(start)
		return res, nil
	}
	if err := d.Digest.Validate(); err != nil {
		return res, verdict.Wrap(verdict.CodeManifestInvalid, s.Host.Role, s.Host.endpoint(), err)
	}
	var h hash.Hash
	if d.Digest.Algorithm() == digest.SHA256 {
		h = sha256.New()
	} else {
		h = d.Digest.Algorithm().Hash()
	}
	body := &progressReader{r: resp.Body, progress: progress}
	limit := d.Size + 1
	if d.Size <= 0 {
		limit = 1 << 40
	}
	buf := bufPool.Get().(*[]byte)
	n, err := io.CopyBuffer(h, io.LimitReader(body, limit), *buf)
	bufPool.Put(buf)
	res.Bytes = n
	res.Duration = time.Since(start)
	if err != nil {
		return res, s.blobMTU(ctx, d, transportError(err, servedRole, servedEP, true), n)
	}
	if d.Size > 0 && n != d.Size {
		return res, verdict.Errorf(verdict.CodeTransferSize, servedRole, servedEP, "blob %s: got %d bytes, want %d", d.Digest, n, d.Size)
	}
	if got := digest.NewDigestFromBytes(d.Digest.Algorithm(), h.Sum(nil)); got != d.Digest {
		return res, verdict.Errorf(verdict.CodeTransferDigest, servedRole, servedEP, "blob %s: content has digest %s", d.Digest, got)
	}
	res.Verified = true
	return res, nil
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// progressReader reports bytes as they arrive. Stalls are caught by the
// connection's idle read deadline, set by the dialer.
type progressReader struct {
	r        io.Reader
	progress Progress
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 && p.progress != nil {
		p.progress(int64(n))
	}
	return n, err
}
