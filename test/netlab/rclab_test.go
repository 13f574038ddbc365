package netlab_test

import (
	"context"
	"net"
	"testing"

	"github.com/pullpath/pullpath/test/netlab"
	"github.com/pullpath/pullpath/test/netlab/minireg"
)

// rcLab is the lab of the runtime-configuration tiers (TestRuntimeConfigRows,
// TestCRIORows): mirror.netlab.test and registry.netlab.test serve over TLS
// with certificates of ca, every accepted connection is logged, and the
// lab's DNS answers for them and for dead.netlab.test, whose address
// refuses connections.
type rcLab struct {
	n   *netlab.Net
	ca  *minireg.CA
	log *acceptLog
}

func newRCLab(t *testing.T) *rcLab {
	t.Helper()
	n := newNet(t)
	a := n.Addrs
	ca, err := minireg.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	l := &rcLab{n: n, ca: ca, log: &acceptLog{}}
	serve := func(host string, addr string) {
		cert, err := ca.Issue(host)
		if err != nil {
			t.Fatal(err)
		}
		ln, err := n.Listen("tcp", addr+":443")
		if err != nil {
			t.Fatal(err)
		}
		srv := minireg.Serve(loggedListener{ln, host, l.log}, cert)
		t.Cleanup(func() { srv.Close() })
	}
	serve(rcMirror, a.Mirror.String())
	serve(rcRegistry, a.Registry.String())
	serveZone(t, n, a.DNS.String(), map[string]string{
		rcDead + ".": a.Dead.String(), rcMirror + ".": a.Mirror.String(), rcRegistry + ".": a.Registry.String(),
	})
	return l
}

// push uploads a random two-layer image as ref to the lab server at addr
// and returns its digest.
func (l *rcLab) push(ctx context.Context, t *testing.T, ref, addr string) string {
	t.Helper()
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		return l.n.Registry.DialContext(ctx, network, addr+":443")
	}
	img, err := minireg.PushRandom(ctx, ref, 2, 4096, dial, l.ca.Pool())
	if err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}
