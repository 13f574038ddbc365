package netpath

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

func TestConnect(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()

	tests := []struct {
		name      string
		addr      string
		wantCause string
	}{
		{"open", ln.Addr().String(), ""},
		{"refused", closedAddr, "route.refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Connect(context.Background(), netip.MustParseAddrPort(tt.addr), 2*time.Second)
			if got.Conn != nil {
				defer got.Conn.Close()
			}
			cause := ""
			if got.Err != nil {
				cause = got.Err.Cause
			}
			if cause != tt.wantCause {
				t.Fatalf("Connect(%s) cause = %q, want %q (err %v)", tt.addr, cause, tt.wantCause, got.Err)
			}
			if (got.Conn != nil) != (tt.wantCause == "") {
				t.Errorf("Connect(%s) conn = %v, want one only on success", tt.addr, got.Conn)
			}
			if runtime.GOOS == "linux" {
				if got.Iface != "lo" || got.Local == "" {
					t.Errorf("Connect(%s) iface = %q local = %q, want lo and a local address (route error %q)", tt.addr, got.Iface, got.Local, got.RouteErr)
				}
			}
			if tt.wantCause == "route.refused" && (got.Err.Err == nil || !errors.Is(got.Err, syscall.ECONNREFUSED)) {
				t.Errorf("Connect(%s) error %v does not wrap ECONNREFUSED", tt.addr, got.Err)
			}
		})
	}
}

// TestConnectTimeout fills the accept queue of a listener that never
// accepts: Linux then drops further SYNs, so a connect times out.
func TestConnectTimeout(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("relies on Linux dropping SYNs to a full accept queue")
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(sa.(*syscall.SockaddrInet4).Port))
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for i := 0; i < 8; i++ {
		got := Connect(context.Background(), addr, 300*time.Millisecond)
		if got.Err == nil {
			held = append(held, got.Conn)
			continue
		}
		if got.Err.Cause != "route.timeout" {
			t.Fatalf("Connect to a full backlog = %v, want route.timeout", got.Err)
		}
		return
	}
	t.Skip("the kernel accepted every connection; no timeout to observe")
}

func TestClassifyDialError(t *testing.T) {
	op := func(errno syscall.Errno) error {
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", errno)}
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"refused", op(syscall.ECONNREFUSED), "route.refused"},
		{"host unreachable", op(syscall.EHOSTUNREACH), "route.unreachable"},
		{"network unreachable", op(syscall.ENETUNREACH), "route.unreachable"},
		{"reset", op(syscall.ECONNRESET), "route.reset"},
		{"etimedout", op(syscall.ETIMEDOUT), "route.timeout"},
		{"dial timeout", &net.OpError{Op: "dial", Net: "tcp", Err: timeoutErr{}}, "route.timeout"},
		{"context deadline", fmt.Errorf("dialing: %w", context.DeadlineExceeded), "route.timeout"},
		{"proxy", &net.OpError{Op: "proxyconnect", Net: "tcp", Err: op(syscall.ECONNREFUSED)}, "route.proxy"},
		{"text: proxy", errors.New("proxyconnect tcp: dial tcp 10.0.0.1:3128: connect: connection refused"), "route.proxy"},
		{"text: no route", errors.New("dial tcp 10.0.0.5:443: connect: no route to host"), "route.unreachable"},
		{"text: timeout", errors.New("dial tcp 10.0.0.5:443: i/o timeout"), "route.timeout"},
		{"text: reset", errors.New("read tcp 1.2.3.4:5->6.7.8.9:443: read: connection reset by peer"), "route.reset"},
		{"eof", io.EOF, "route.reset"},
		{"unknown", errors.New("something else"), "unknown"},
		{"canceled", context.Canceled, "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ClassifyDialError(tt.err); got != tt.want {
				t.Errorf("ClassifyDialError(%v) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}

func TestRoutePredicates(t *testing.T) {
	tests := []struct {
		name string
		pred func(error) bool
		yes  []error
		no   []error
	}{
		{"isTimeout", isTimeout, []error{timeoutErr{}, os.ErrDeadlineExceeded, context.DeadlineExceeded, syscall.ETIMEDOUT}, []error{syscall.ECONNREFUSED, errors.New("x")}},
		{"isRefused", isRefused, []error{syscall.ECONNREFUSED, errors.New("read udp: connection refused")}, []error{syscall.ECONNRESET, timeoutErr{}}},
		{"isUnreachable", isUnreachable, []error{syscall.EHOSTUNREACH, syscall.ENETUNREACH, errors.New("connect: network is unreachable")}, []error{syscall.ECONNREFUSED}},
		{"isReset", isReset, []error{syscall.ECONNRESET, syscall.EPIPE, io.ErrUnexpectedEOF}, []error{syscall.ECONNREFUSED, timeoutErr{}}},
		{"isProxy", isProxy, []error{&net.OpError{Op: "proxyconnect", Err: errors.New("x")}}, []error{&net.OpError{Op: "dial", Err: errors.New("x")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkPredicate(t, tt.name, tt.pred, tt.yes, tt.no) })
	}
}

// checkPredicate asserts pred holds for every error of yes and for none of no.
func checkPredicate(t *testing.T, name string, pred func(error) bool, yes, no []error) {
	t.Helper()
	for _, e := range yes {
		if !pred(e) {
			t.Errorf("%s(%v) = false, want true", name, e)
		}
	}
	for _, e := range no {
		if pred(e) {
			t.Errorf("%s(%v) = true, want false", name, e)
		}
	}
}
