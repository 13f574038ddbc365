package netpath

import (
	"crypto/tls"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/testpki"
)

// serverCert issues a TLS server certificate for names valid between
// notBefore and notAfter, with serial 0xbeef, sent with its CA (a chain of
// two).
func serverCert(t testing.TB, ca *testpki.CA, notBefore, notAfter time.Time, names ...string) tls.Certificate {
	t.Helper()
	c := ca.MustIssue(t, testpki.Leaf{Names: names, NotBefore: notBefore, NotAfter: notAfter, Serial: big.NewInt(0xbeef)})
	c.Certificate = append(c.Certificate, ca.Cert.Raw)
	return c
}

// tlsServer serves TLS with cert on loopback, completing handshakes and
// then holding the connection until the test ends.
func tlsServer(t testing.TB, cert tls.Certificate) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.(*tls.Conn).Handshake()
				buf := make([]byte, 1)
				_, _ = c.Read(buf)
			}()
		}
	}()
	return ln.Addr().String()
}

// silentServer accepts TCP and never says anything.
func silentServer(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	return ln.Addr().String()
}
