package probe

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/pullpath/pullpath/internal/nodeview"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pullpath/pullpath/internal/netpath"
	"github.com/pullpath/pullpath/internal/registry"
	"github.com/pullpath/pullpath/internal/verdict"
)

// tracer dials every host of the pull through the node's view (netpath:
// dns → route → tls) and records each host's steps the first time it is
// dialled, so hosts are traced as they are discovered: the registry, each
// mirror, the token realm, every blob redirect host.
type tracer struct {
	resolver *netpath.Resolver
	timeout  time.Duration
	proxy    nodeview.Proxy

	mu       sync.Mutex
	eps      map[string]*Endpoint // key host:port
	order    []string
	roles    map[string]verdict.Role // key host or host:port as in URLs
	dns      map[string]*dnsEntry
	warnings []verdict.Warning
	seenWarn map[string]bool
	claimed  map[string]bool     // endpoint key + step name: recorded once
	mtu      map[string]*mtuTest // endpoint: its path-MTU test (mtu.go)

	// curves are the key-exchange groups the node's containerd offers in
	// its ClientHello (nodeview.RuntimeBinary.ClientHelloCurves), nil for
	// this binary's defaults; helloNote says which, on each tls step.
	curves    []tls.CurveID
	helloNote string

	// hdrAuth is the Authorization header hosts.toml sets for a host (by
	// host as in URLs), to tell it from the pull's own in the facts.
	hdrAuth map[string]string
}

// setHeaderAuth records the Authorization header hosts.toml sets for host.
func (t *tracer) setHeaderAuth(host, v string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.hdrAuth == nil {
		t.hdrAuth = map[string]string{}
	}
	t.hdrAuth[host] = v
}

// authorizationFact names what a request's Authorization carried, never
// its value: "" for none.
func (t *tracer) authorizationFact(req *http.Request) string {
	v := req.Header.Get("Authorization")
	if v == "" {
		return ""
	}
	t.mu.Lock()
	h, ok := t.hdrAuth[req.URL.Host]
	t.mu.Unlock()
	if ok && h == v {
		return "hosts.toml header"
	}
	scheme, _, _ := strings.Cut(v, " ")
	switch strings.ToLower(scheme) {
	case "basic":
		return "basic credentials"
	case "bearer":
		return "bearer token"
	}
	return "other scheme"
}

type dnsEntry struct {
	once sync.Once
	res  netpath.DNSResult
}

func newTracer(r *netpath.Resolver, timeout time.Duration) *tracer {
	return &tracer{resolver: r, timeout: timeout, eps: map[string]*Endpoint{}, roles: map[string]verdict.Role{}, dns: map[string]*dnsEntry{}, seenWarn: map[string]bool{}, claimed: map[string]bool{}}
}

// setRole records the role of a host before it is dialled. The first role
// given wins (the registry stays the registry when it also serves blobs).
func (t *tracer) setRole(host string, r verdict.Role) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.roles[host]; !ok {
		t.roles[host] = r
	}
}

func (t *tracer) roleOf(host, port string) verdict.Role {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r, ok := t.roles[net.JoinHostPort(host, port)]; ok {
		return r
	}
	if r, ok := t.roles[host]; ok {
		return r
	}
	return verdict.RoleBlob // only redirects reach hosts nobody named
}

func (t *tracer) endpoint(host string, port int, role verdict.Role) *Endpoint {
	key := net.JoinHostPort(host, strconv.Itoa(port))
	t.mu.Lock()
	defer t.mu.Unlock()
	ep, ok := t.eps[key]
	if !ok {
		ep = &Endpoint{Host: host, Port: port, Role: role, Steps: []Step{}}
		t.eps[key] = ep
		t.order = append(t.order, key)
	}
	return ep
}

func (t *tracer) addStep(ep *Endpoint, s Step) {
	t.mu.Lock()
	ep.Steps = append(ep.Steps, s)
	t.mu.Unlock()
}

// claim reports whether the caller is the first to record step name of ep;
// parallel dials to one host record their successful steps once.
func (t *tracer) claim(ep *Endpoint, name string) bool {
	k := net.JoinHostPort(ep.Host, strconv.Itoa(ep.Port)) + " " + name
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.claimed[k] {
		return false
	}
	t.claimed[k] = true
	return true
}

func (t *tracer) hasStep(ep *Endpoint, name string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range ep.Steps {
		if s.Name == name && s.Status != StatusSkipped {
			return true
		}
	}
	return false
}

func (t *tracer) warn(ws ...verdict.Warning) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, w := range ws {
		k := w.Code + " " + w.Endpoint
		if !t.seenWarn[k] {
			t.seenWarn[k] = true
			t.warnings = append(t.warnings, w)
		}
	}
}

// endpoints returns the recorded endpoints in discovery order.
func (t *tracer) endpoints() []Endpoint {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Endpoint, 0, len(t.order))
	for _, k := range t.order {
		ep := *t.eps[k]
		ep.Steps = append([]Step(nil), ep.Steps...)
		out = append(out, ep)
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// resolve looks a host up once per probe and records the dns step on ep.
func (t *tracer) resolve(ctx context.Context, host string, ep *Endpoint, endpoint string, role verdict.Role) (netpath.DNSResult, error) {
	t.mu.Lock()
	e, ok := t.dns[host]
	if !ok {
		e = &dnsEntry{}
		t.dns[host] = e
	}
	t.mu.Unlock()
	e.once.Do(func() { e.res = t.resolver.Resolve(ctx, host) })
	res := e.res
	if t.claim(ep, "dns") {
		st := Step{Name: "dns", Target: host, Millis: ms(res.Duration), Facts: dnsFacts(res)}
		for i := range res.Warnings {
			if res.Warnings[i].Endpoint == "" {
				res.Warnings[i].Endpoint = endpoint
			}
		}
		t.warn(res.Warnings...)
		if res.Err != nil {
			st.Status, st.Cause, st.Detail = StatusFailed, res.Err.Cause, res.Err.Error()
		} else {
			st.Status = StatusOK
			st.Detail = describeDNS(res)
			if len(res.Warnings) > 0 {
				st.Status = StatusWarning
			}
		}
		t.addStep(ep, st)
	}
	if res.Err != nil {
		e2 := *res.Err
		e2.Role, e2.Endpoint = role, endpoint
		return res, &e2
	}
	return res, nil
}

func describeDNS(res netpath.DNSResult) string {
	addrs := make([]string, 0, len(res.Addrs))
	for _, a := range res.Addrs {
		addrs = append(addrs, a.String())
	}
	s := "→ " + strings.Join(addrs, ", ")
	if len(res.CNAMEs) > 0 {
		s = "CNAME " + strings.Join(res.CNAMEs, " → ") + " " + s
	}
	switch res.Source {
	case "hosts":
		s += " from /etc/hosts"
	case "literal":
		s = "IP literal " + strings.Join(addrs, ", ")
	default:
		for _, a := range res.Answers {
			if a.Err == "" && a.Rcode == "NOERROR" {
				s += " via " + a.Server
				break
			}
		}
	}
	return s
}

func dnsFacts(res netpath.DNSResult) map[string]any {
	f := map[string]any{"source": res.Source}
	if len(res.CNAMEs) > 0 {
		f["cname_chain"] = res.CNAMEs
	}
	if len(res.Answers) > 0 {
		f["answers"] = res.Answers
	}
	return f
}

// dial is the DialContext of one plan host's transport. tlsCfg is nil for
// plain http. A host the node's proxy environment sends through a proxy is
// reached through a CONNECT tunnel, as containerd's transport does.
func (t *tracer) dial(ctx context.Context, addr string, tlsCfg *tls.Config) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, verdict.Wrap(verdict.CodeConfigReference, verdict.RoleNone, addr, err)
	}
	port, _ := strconv.Atoi(portStr)
	role := t.roleOf(host, portStr)
	ep := t.endpoint(host, port, role)
	endpoint := net.JoinHostPort(host, portStr)

	if t.proxy.Set() {
		scheme := "http"
		if tlsCfg != nil {
			scheme = "https"
		}
		pu, err := t.proxy.For(&url.URL{Scheme: scheme, Host: addr})
		if err != nil {
			return nil, verdict.Errorf(verdict.CodeRouteProxy, role, endpoint, "the proxy setting of containerd's environment is not a URL: %v", err)
		}
		if pu != nil {
			return t.dialViaProxy(ctx, pu, host, ep, endpoint, role, tlsCfg)
		}
	}

	conn, err := t.connect(ctx, host, port, ep, endpoint, role)
	if err != nil {
		if tlsCfg != nil {
			t.skip(ep, "tls", blockedBy(err))
		}
		return nil, err
	}
	if tlsCfg == nil {
		return conn, nil
	}
	return t.handshake(ctx, conn, host, ep, endpoint, role, tlsCfg, true)
}

func blockedBy(err error) string {
	if ve, ok := verdict.AsError(err); ok {
		return string(ve.Layer)
	}
	return "an earlier step"
}

// connect is steps 1 and 2 for one host: dns, then a TCP connection to
// every address in parallel; the first that connects wins, in the
// resolver's order.
func (t *tracer) connect(ctx context.Context, host string, port int, ep *Endpoint, endpoint string, role verdict.Role) (net.Conn, error) {
	res, err := t.resolve(ctx, host, ep, endpoint, role)
	if err != nil {
		t.skip(ep, "route", "dns")
		return nil, err
	}
	firstRoute := t.claim(ep, "route")
	results := make([]netpath.ConnResult, len(res.Addrs))
	var wg sync.WaitGroup
	for i, a := range res.Addrs {
		wg.Add(1)
		go func(i int, a netip.Addr) {
			defer wg.Done()
			results[i] = netpath.Connect(ctx, netip.AddrPortFrom(a, uint16(port)), t.timeout)
		}(i, a)
	}
	wg.Wait()
	var conn net.Conn
	var routeErr *verdict.Error
	for _, r := range results {
		failed := r.Err != nil
		if (firstRoute && !failed) || (failed && t.claim(ep, "route-failed "+r.Addr.String())) {
			st := Step{Name: "route", Target: fmt.Sprintf("%s -> %s", host, r.Addr), Millis: ms(r.Duration), Status: StatusOK,
				Facts: map[string]any{"local": r.Local, "iface": r.Iface, "gateway": r.Gateway}}
			st.Detail = routeDetail(r)
			if failed {
				st.Status, st.Cause, st.Detail = StatusFailed, r.Err.Cause, r.Err.Error()
			}
			t.addStep(ep, st)
		}
		if failed {
			if routeErr == nil {
				e := *r.Err
				e.Role, e.Endpoint = role, endpoint
				routeErr = &e
			}
			continue
		}
		if conn == nil {
			conn = r.Conn
		} else {
			r.Conn.Close()
		}
	}
	if conn == nil {
		if routeErr == nil {
			routeErr = verdict.Errorf(verdict.CodeDNSNoAddress, role, endpoint, "no address to connect to")
		}
		return nil, routeErr
	}
	return &idleConn{Conn: conn, idle: 2 * t.timeout}, nil
}

// handshake is step 3: TLS with the node's trust store for this host.
//
// direct says conn is a TCP connection to host itself (not a tunnel through
// a proxy): only then does a handshake timeout get the path-MTU test
// (mtu.go).
func (t *tracer) handshake(ctx context.Context, conn net.Conn, host string, ep *Endpoint, endpoint string, role verdict.Role, tlsCfg *tls.Config, direct bool) (net.Conn, error) {
	cfg := tlsCfg.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	if t.curves != nil {
		cfg.CurvePreferences = t.curves
	}
	firstTLS := t.claim(ep, "tls")
	tr := netpath.Handshake(ctx, conn, cfg.ServerName, cfg, t.timeout)
	for i := range tr.Warnings {
		if tr.Warnings[i].Endpoint == "" {
			tr.Warnings[i].Endpoint = endpoint
		}
	}
	t.warn(tr.Warnings...)
	if (firstTLS && tr.Err == nil) || (tr.Err != nil && t.claim(ep, "tls-failed")) {
		st := Step{Name: "tls", Target: fmt.Sprintf("%s -> %s", cfg.ServerName, conn.RemoteAddr()), Millis: ms(tr.Duration), Status: StatusOK}
		if len(tr.Chain) > 0 {
			st.Facts = map[string]any{"chain": tr.Chain, "version": tr.Version}
			c := tr.Chain[0]
			st.Detail = fmt.Sprintf("%s, issuer %s, valid until %s", tr.Version, c.Issuer, c.NotAfter.Format("2006-01-02"))
		}
		if t.helloNote != "" {
			if st.Facts == nil {
				st.Facts = map[string]any{}
			}
			st.Facts["client_hello"] = t.helloNote
		}
		if tr.Err != nil {
			st.Status, st.Cause, st.Detail = StatusFailed, tr.Err.Cause, tr.Err.Error()
		}
		t.addStep(ep, st)
	}
	if tr.Err != nil {
		conn.Close()
		e := *tr.Err
		e.Role, e.Endpoint = role, endpoint
		if direct && e.Cause == verdict.CodeTLSTimeout {
			return nil, t.mtuHandshake(ctx, conn.RemoteAddr(), host, ep, endpoint, role, cfg, &e)
		}
		return nil, &e
	}
	return tr.Conn, nil
}

// dialViaProxy reaches host through the proxy pu the way Go's transport
// (and so containerd's) does for HTTPS: dns and route to the proxy (role
// proxy), CONNECT host:port, then TLS with the registry host end to end.
// The node does not resolve host itself: the proxy does. Any failure on
// the way is route.proxy for host, with the proxy's own step in the trace.
func (t *tracer) dialViaProxy(ctx context.Context, pu *url.URL, host string, ep *Endpoint, endpoint string, role verdict.Role, tlsCfg *tls.Config) (net.Conn, error) {
	pport := pu.Port()
	if pport == "" {
		pport = "80"
		if pu.Scheme == "https" {
			pport = "443"
		}
	}
	pp, _ := strconv.Atoi(pport)
	phost := pu.Hostname()
	pendpoint := net.JoinHostPort(phost, pport)
	pep := t.endpoint(phost, pp, verdict.RoleProxy)
	shown := registry.RedactURL(pu.String())
	if t.claim(ep, "dns") {
		t.addStep(ep, Step{Name: "dns", Target: host, Status: StatusSkipped, Detail: "resolved by the proxy " + shown + ", not by the node"})
	}
	proxyErr := func(format string, args ...any) error {
		// The failing hop is the proxy: role proxy, its endpoint; the
		// detail names the host the tunnel was for.
		e := verdict.Errorf(verdict.CodeRouteProxy, verdict.RoleProxy, pendpoint, "proxy %s, for %s: %s", shown, endpoint, fmt.Sprintf(format, args...))
		if t.claim(ep, "route-failed proxy") {
			t.addStep(ep, Step{Name: "route", Target: fmt.Sprintf("%s -> via proxy %s", host, pendpoint), Status: StatusFailed, Cause: e.Cause, Detail: e.Detail})
		}
		return e
	}

	conn, err := t.connect(ctx, phost, pp, pep, pendpoint, verdict.RoleProxy)
	if err != nil {
		if tlsCfg != nil {
			t.skip(ep, "tls", "route")
		}
		return nil, proxyErr("%v", err)
	}
	if pu.Scheme == "https" {
		pcfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if tlsCfg != nil {
			pcfg = tlsCfg.Clone()
		}
		pcfg.ServerName = phost
		if conn, err = t.handshake(ctx, conn, phost, pep, pendpoint, verdict.RoleProxy, pcfg, false); err != nil {
			return nil, proxyErr("%v", err)
		}
	}

	// CONNECT host:port, with the proxy's credentials when its URL has them.
	target := net.JoinHostPort(host, strconv.Itoa(ep.Port))
	req := &http.Request{Method: http.MethodConnect, URL: &url.URL{Opaque: target}, Host: target, Header: http.Header{}}
	if pu.User != nil {
		pass, _ := pu.User.Password()
		req.Header.Set("Proxy-Authorization", "Basic "+registry.BasicAuth(pu.User.Username(), pass))
	}
	start := time.Now()
	_ = conn.SetDeadline(time.Now().Add(t.timeout))
	var resp *http.Response
	err = req.Write(conn)
	if err == nil {
		resp, err = http.ReadResponse(bufio.NewReader(conn), req)
	}
	_ = conn.SetDeadline(time.Time{})
	st := Step{Name: "http", Target: "CONNECT " + target, Millis: ms(time.Since(start)), Status: StatusOK}
	switch {
	case err != nil:
		st.Status, st.Cause, st.Detail = StatusFailed, verdict.CodeRouteProxy, err.Error()
	case resp.StatusCode != http.StatusOK:
		st.Status, st.Cause, st.Detail = StatusFailed, verdict.CodeRouteProxy, resp.Status
	default:
		st.Detail = resp.Status
	}
	t.addStep(pep, st)
	if err != nil {
		conn.Close()
		return nil, proxyErr("CONNECT %s: %v", target, err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		conn.Close()
		return nil, proxyErr("refused the tunnel to %s: %s", target, resp.Status)
	}
	if t.claim(ep, "route") {
		t.addStep(ep, Step{Name: "route", Target: fmt.Sprintf("%s -> via proxy %s", host, pendpoint), Status: StatusOK, Millis: ms(time.Since(start)), Detail: "CONNECT tunnel through the proxy"})
	}
	if tlsCfg == nil {
		return conn, nil
	}
	return t.handshake(ctx, conn, host, ep, endpoint, role, tlsCfg, false)
}

func routeDetail(r netpath.ConnResult) string {
	var parts []string
	if r.Iface != "" {
		parts = append(parts, "via "+r.Iface)
	}
	if r.Gateway != "" {
		parts = append(parts, "gw "+r.Gateway)
	}
	if r.Local != "" {
		parts = append(parts, "from "+r.Local)
	}
	return strings.Join(parts, " ")
}

func (t *tracer) skip(ep *Endpoint, name, blockedBy string) {
	if t.hasStep(ep, name) || !t.claim(ep, "skip "+name) {
		return
	}
	t.addStep(ep, Step{Name: name, Target: ep.Host, Status: StatusSkipped, Detail: "blocked by " + blockedBy})
}

// idleConn fails a read that waits longer than idle: a stalled download
// becomes a timeout instead of a hang. Setting the deadline per read is a
// timer update, not a syscall.
type idleConn struct {
	net.Conn
	idle time.Duration
}

func (c *idleConn) Read(p []byte) (int, error) {
	_ = c.Conn.SetReadDeadline(time.Now().Add(c.idle))
	return c.Conn.Read(p)
}

// recorder is an http.RoundTripper that keeps every exchange as an http step
// of its host: method, redacted path, status, duration, challenge, redirect.
type recorder struct {
	inner http.RoundTripper
	t     *tracer
	// note follows every target this recorder records (the path-MTU
	// test's " (TCP_MAXSEG 536)").
	note string
}

var _ http.RoundTripper = (*recorder)(nil)

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := r.inner.RoundTrip(req)
	host, port := req.URL.Hostname(), registry.PortOf(req.URL)
	p, _ := strconv.Atoi(port)
	ep := r.t.endpoint(host, p, r.t.roleOf(host, port))
	path := registry.RedactURL(req.URL.String())
	if u := strings.Index(path, req.URL.Host); u >= 0 {
		path = path[u+len(req.URL.Host):]
	}
	st := Step{Name: "http", Target: req.Method + " " + path + r.note, Millis: ms(time.Since(start))}
	if err != nil {
		if _, ok := verdict.AsError(err); ok {
			// The dialer already recorded the failing step.
			return nil, err
		}
		st.Status, st.Detail = StatusFailed, registry.RedactError(err).Error()
		if errors.Is(err, context.Canceled) {
			st.Status, st.Detail = StatusSkipped, cancelledDetail(req.Context())
		}
		r.t.addStep(ep, st)
		return nil, err
	}
	st.Detail = resp.Status
	st.Status = StatusOK
	if resp.StatusCode >= 400 && (resp.StatusCode != http.StatusUnauthorized || req.Header.Get("Authorization") != "") {
		st.Status = StatusFailed
	}
	facts := map[string]any{"status": resp.StatusCode}
	if a := r.t.authorizationFact(req); a != "" {
		facts["authorization"] = a
	}
	if c := resp.Header.Get("WWW-Authenticate"); c != "" {
		facts["challenge"] = c
	}
	if loc := resp.Header.Get("Location"); loc != "" {
		facts["redirect"] = registry.RedactURL(loc)
		st.Detail += " → " + registry.RedactURL(loc)
	}
	st.Facts = facts
	r.t.addStep(ep, st)
	return resp, nil
}
