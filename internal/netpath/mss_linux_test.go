//go:build linux

package netpath

import (
	"context"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"
)

// socketMSS reads TCP_MAXSEG of a connected socket: the largest segment
// this end sends, bounded by the MSS the peer advertised in its SYN.
func socketMSS(t *testing.T, c net.Conn) int {
	t.Helper()
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var mss int
	var serr error
	if err := rc.Control(func(fd uintptr) {
		mss, serr = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG)
	}); err != nil {
		t.Fatal(err)
	}
	if serr != nil {
		t.Fatalf("getsockopt TCP_MAXSEG: %v", serr)
	}
	return mss
}

// TestConnectSmallMSS checks the dialer option where it matters: the
// server's end of a connection dialled with ConnectSmallMSS sends segments
// of at most SmallMSS bytes (the SYN advertised it), while a default
// connection on loopback allows far larger ones.
func TestConnectSmallMSS(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := netip.MustParseAddrPort(ln.Addr().String())
	accepted := make(chan net.Conn, 2)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	tests := []struct {
		name  string
		small bool
	}{{"default", false}, {"small", true}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			var res ConnResult
			if tt.small {
				res = ConnectSmallMSS(ctx, addr, 2*time.Second, SmallMSS)
			} else {
				res = Connect(ctx, addr, 2*time.Second)
			}
			if res.Err != nil {
				t.Fatalf("connect %s: %v", addr, res.Err)
			}
			defer res.Conn.Close()
			srv := <-accepted
			defer srv.Close()
			client, server := socketMSS(t, res.Conn), socketMSS(t, srv)
			t.Logf("TCP_MAXSEG client %d, server %d", client, server)
			if tt.small {
				if server > SmallMSS || client > SmallMSS {
					t.Errorf("TCP_MAXSEG with ConnectSmallMSS = client %d, server %d; want both <= %d", client, server, SmallMSS)
				}
			} else if server <= SmallMSS {
				t.Errorf("TCP_MAXSEG of a default loopback connection = %d at the server; want > %d (loopback MTU 65536)", server, SmallMSS)
			}
		})
	}
}
