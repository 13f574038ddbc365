package netpath

import (
	"context"
	"crypto/tls"
	"net/netip"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/testpki"
)

func BenchmarkResolve(b *testing.B) {
	l := startLab(b, zone("registry.example. 60 IN A 10.0.0.5"), zone("registry.example. 60 IN A 10.0.0.5"))
	r := l.resolver(nil, "")
	for b.Loop() {
		if got := r.Resolve(context.Background(), "registry.example"); got.Err != nil {
			b.Fatal(got.Err)
		}
	}
}

func BenchmarkConnectHandshake(b *testing.B) {
	ca := testpki.MustCA(b, "bench CA")
	addr := netip.MustParseAddrPort(tlsServer(b, serverCert(b, ca, time.Now().Add(-time.Hour), time.Now().Add(time.Hour), "registry.example")))
	cfg := &tls.Config{RootCAs: ca.Pool()}
	for b.Loop() {
		cr := Connect(context.Background(), addr, time.Second)
		if cr.Err != nil {
			b.Fatal(cr.Err)
		}
		res := Handshake(context.Background(), cr.Conn, "registry.example", cfg, time.Second)
		if res.Err != nil {
			b.Fatal(res.Err)
		}
		res.Conn.Close()
	}
}
