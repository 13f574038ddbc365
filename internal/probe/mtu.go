package probe

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"

	"github.com/pullpath/pullpath/internal/netpath"
	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/registry"
	"github.com/pullpath/pullpath/internal/verdict"
)

// The path-MTU test. A path-MTU black hole lets the TCP
// handshake and small packets through and loses every large one: the TLS
// server's certificate flight, a large manifest, blob data. From the node it
// looks like a handshake timeout or a stalled download. When a step times out
// on a connection that did connect, the probe redials that step once with
// TCP_MAXSEG set to netpath.SmallMSS before connect: the SYN advertises the
// small MSS, so the server sends small segments. If that gets through where
// the default did not, the verdict is route.mtu; if not, the first verdict
// stays and says a small MSS did not help. The redial is an "mtu" step of the
// endpoint (and its requests are http steps marked "(TCP_MAXSEG 536)"), so it
// never hides the first failure, which keeps its own failed step. It costs
// one connect plus at most one step timeout.
//
// Each endpoint is tested once per probe; parallel dials that time out
// together share the outcome. A host reached through a proxy is not tested
// (the small MSS would only apply to the hop to the proxy), nor is any host
// on a system without TCP_MAXSEG (netpath.MSSSupported), where the trace
// says so.

// mtuTest is the outcome of one endpoint's path-MTU test of its handshake.
type mtuTest struct {
	once sync.Once
	err  error
}

// mtuHandshake runs the path-MTU test after the handshake with endpoint
// timed out (first, tls.timeout) on a connection to remote: a fresh connect
// to the same address with a small MSS and the same handshake.
func (t *tracer) mtuHandshake(ctx context.Context, remote net.Addr, host string, ep *Endpoint, endpoint string, role verdict.Role, cfg *tls.Config, first *verdict.Error) error {
	ap, err := netip.ParseAddrPort(remote.String())
	if err != nil {
		return first
	}
	t.mu.Lock()
	if t.mtu == nil {
		t.mtu = map[string]*mtuTest{}
	}
	m, ok := t.mtu[endpoint]
	if !ok {
		m = &mtuTest{}
		t.mtu[endpoint] = m
	}
	t.mu.Unlock()
	m.once.Do(func() {
		why := "redialled once after the TLS handshake timed out"
		if !netpath.MSSSupported {
			t.addStep(ep, Step{Name: "mtu", Target: host, Status: StatusSkipped, Detail: why + ": not tested, this system cannot set TCP_MAXSEG before connect"})
			out := *first
			out.Detail = joinDetail(out.Detail, "the path-MTU test did not run (no TCP_MAXSEG on this system)")
			m.err = &out
			return
		}
		conn, serr := t.smallMSSDial(ctx, host, netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), ep, endpoint, role, cfg, why)
		if serr == nil {
			conn.Close()
			m.err = &verdict.Error{Layer: verdict.LayerOf(verdict.CodeRouteMTU), Cause: verdict.CodeRouteMTU, Role: role, Endpoint: endpoint, Err: first,
				Detail: fmt.Sprintf("the TLS handshake timed out with the default MSS and completed when redialled with TCP_MAXSEG %d", netpath.SmallMSS)}
			return
		}
		out := *first
		out.Detail = joinDetail(out.Detail, fmt.Sprintf("a redial with TCP_MAXSEG %d failed too (%s), so a small MSS did not help: not a path-MTU black hole", netpath.SmallMSS, serr.Cause))
		m.err = &out
	})
	return m.err
}

func joinDetail(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// smallMSSDial connects to ap with a small MSS and, with cfg, runs the TLS
// handshake over it, recording one "mtu" step on ep that starts with why.
func (t *tracer) smallMSSDial(ctx context.Context, host string, ap netip.AddrPort, ep *Endpoint, endpoint string, role verdict.Role, cfg *tls.Config, why string) (net.Conn, *verdict.Error) {
	st := Step{Name: "mtu", Target: fmt.Sprintf("%s -> %s TCP_MAXSEG %d", host, ap, netpath.SmallMSS)}
	cr := netpath.ConnectSmallMSS(ctx, ap, t.timeout, netpath.SmallMSS)
	st.Millis = ms(cr.Duration)
	if cr.Err != nil {
		e := *cr.Err
		e.Role, e.Endpoint = role, endpoint
		st.Status, st.Cause, st.Detail = StatusFailed, e.Cause, why+": the connect with a small MSS failed: "+e.Error()
		t.addStep(ep, st)
		return nil, &e
	}
	var conn net.Conn = &idleConn{Conn: cr.Conn, idle: 2 * t.timeout}
	if cfg == nil {
		st.Status, st.Detail = StatusOK, why+": connected with a small MSS"
		t.addStep(ep, st)
		return conn, nil
	}
	c := cfg.Clone()
	if c.ServerName == "" {
		c.ServerName = host
	}
	tr := netpath.Handshake(ctx, conn, c.ServerName, c, t.timeout)
	st.Millis += ms(tr.Duration)
	if tr.Err != nil {
		e := *tr.Err
		e.Role, e.Endpoint = role, endpoint
		st.Status, st.Cause, st.Detail = StatusFailed, e.Cause, why+": with a small MSS too: "+e.Error()
		t.addStep(ep, st)
		return nil, &e
	}
	st.Status, st.Detail = StatusOK, fmt.Sprintf("%s: with a small MSS the TLS handshake completed in %.0fms", why, ms(tr.Duration))
	t.addStep(ep, st)
	return tr.Conn, nil
}

// dialSmallMSS is the dialer of the path-MTU test's HTTP client (a stalled
// blob download fetched once more): the host's cached dns answer, its first
// address, a small MSS.
func (t *tracer) dialSmallMSS(ctx context.Context, addr string, tlsCfg *tls.Config) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, verdict.Wrap(verdict.CodeConfigReference, verdict.RoleNone, addr, err)
	}
	port, _ := strconv.Atoi(portStr)
	role := t.roleOf(host, portStr)
	ep := t.endpoint(host, port, role)
	endpoint := net.JoinHostPort(host, portStr)
	res, err := t.resolve(ctx, host, ep, endpoint, role)
	if err != nil {
		return nil, err
	}
	if len(res.Addrs) == 0 {
		return nil, verdict.Errorf(verdict.CodeDNSNoAddress, role, endpoint, "no address to connect to")
	}
	conn, verr := t.smallMSSDial(ctx, host, netip.AddrPortFrom(res.Addrs[0], uint16(port)), ep, endpoint, role, tlsCfg,
		"dialled for the path-MTU test of a stalled download")
	if verr != nil {
		return nil, verr
	}
	return conn, nil
}

// smallMSSClient is the registry session's path-MTU test client for plan
// host h: nil (no test) through a proxy or where TCP_MAXSEG is missing.
func (p *prober) smallMSSClient(h nodeview.RegistryHost, plain func(host string) bool) registry.SmallMSSClient {
	return func() *http.Client {
		if !netpath.MSSSupported || p.tr.proxy.Set() {
			return nil
		}
		return p.clientMSS(h, plain, true)
	}
}
