package netpath

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/pullpath/pullpath/internal/verdict"
)

// DefaultDialTimeout is containerd's dial timeout (docker.DefaultHTTPTransport).
const DefaultDialTimeout = 30 * time.Second

// ConnResult is the outcome of one TCP connect.
type ConnResult struct {
	Addr netip.AddrPort
	// Conn is the open connection on success; the caller closes it.
	Conn net.Conn
	// Local is the local address of the connection, or, when the connect
	// failed, the source address the route lookup chose.
	Local string
	// Iface and Gateway are the egress interface and next hop of the
	// route the kernel chose for Addr ("" when directly connected, off
	// Linux, or when the lookup failed).
	Iface   string
	Gateway string
	// RouteErr is the route lookup's error, e.g. "network is unreachable".
	RouteErr string
	Duration time.Duration
	// Err is route.timeout, route.refused, route.unreachable or
	// route.reset (or unknown), wrapping Go's dial error.
	Err *verdict.Error
}

// Connect opens a TCP connection to addr from the current network
// namespace, with a deadline of timeout (DefaultDialTimeout when zero)
// capped by ctx, and records the route the kernel picks for it.
func Connect(ctx context.Context, addr netip.AddrPort, timeout time.Duration) ConnResult {
	return connect(ctx, addr, timeout, 0)
}

// connect is Connect with the socket's TCP_MAXSEG set to mss before the
// SYN is sent (0: the kernel's default).
func connect(ctx context.Context, addr netip.AddrPort, timeout time.Duration, mss int) ConnResult {
	res := ConnResult{Addr: addr}
	if timeout <= 0 {
		timeout = DefaultDialTimeout
	}
	rt := lookupRoute(addr.Addr())
	res.Iface, res.Gateway, res.RouteErr = rt.iface, rt.gateway, rt.err
	start := time.Now()
	d := net.Dialer{Timeout: timeout}
	if mss > 0 {
		d.Control = mssControl(mss)
	}
	conn, err := d.DialContext(ctx, "tcp", addr.String())
	res.Duration = time.Since(start)
	if err != nil {
		res.Local = rt.src
		res.Err = verdict.Wrap(ClassifyDialError(err), verdict.RoleNone, "", err)
		return res
	}
	res.Conn = conn
	res.Local = conn.LocalAddr().String()
	return res
}

// route is the kernel's route for one destination.
type route struct {
	iface, gateway, src, err string
}

// ClassifyDialError names the cause of a failed TCP connect:
// route.proxy (an HTTPS proxy could not be reached or refused the
// tunnel), route.timeout, route.refused, route.unreachable (ENETUNREACH,
// EHOSTUNREACH), route.reset, or "unknown" ("" for nil). Typed errors are
// checked first (*net.OpError, syscall.Errno), texts last.
func ClassifyDialError(err error) string {
	switch {
	case err == nil:
		return ""
	case isProxy(err):
		return verdict.CodeRouteProxy
	case isTimeout(err):
		return verdict.CodeRouteTimeout
	case isRefused(err):
		return verdict.CodeRouteRefused
	case isUnreachable(err):
		return verdict.CodeRouteUnreachable
	case isReset(err):
		return verdict.CodeRouteReset
	}
	return "unknown"
}

// isProxy reports a failure to reach or use an HTTP proxy: net/http
// reports it as an *net.OpError with Op "proxyconnect".
func isProxy(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "proxyconnect" {
		return true
	}
	return strings.Contains(err.Error(), "proxyconnect ")
}

// isTimeout reports a deadline: a net.Error that timed out,
// os.ErrDeadlineExceeded, context.DeadlineExceeded or ETIMEDOUT.
func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, syscall.ETIMEDOUT) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "i/o timeout") || strings.Contains(s, "handshake timeout") || strings.Contains(s, "deadline exceeded")
}

// isRefused reports ECONNREFUSED: a TCP RST to a SYN, or an ICMP port
// unreachable to a UDP query.
func isRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(err.Error(), "connection refused")
}

// isReset reports a connection cut: ECONNRESET, ECONNABORTED, EPIPE, or an
// EOF before any answer.
func isReset(err error) bool {
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "connection reset") || strings.Contains(s, "broken pipe")
}
