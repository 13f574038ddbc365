package netlab_test

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

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
	// private is private.netlab.test (on the Auth address): a registry
	// behind Basic authentication with its own users, logging who pulled.
	private *minireg.Gate
	// bearer is bearer.netlab.test (on the Blob address): a registry
	// behind token authentication, its realm on the same server, logging
	// the rcMark header of every request.
	bearer *minireg.Bearer
}

// rcBearer is the token-authenticated registry; rcMark the header whose
// values it logs.
const (
	rcBearer = "bearer.netlab.test"
	rcMark   = "X-Pullpath-Mark"
)

// The private registry's users: the namespaced auth file's user, and the
// lab's pusher (not logged). global_auth_file's user is not one of them.
const (
	rcPrivate     = "private.netlab.test"
	rcNSUser      = "ns-user"
	rcPusher      = "pusher"
	rcPusherPass  = "pusher-pass"
	rcNSUserPass  = "ns-user-pass"
	rcGlobalUser  = "global-user"
	rcGlobalPass  = "global-pass"
	rcPrivateRepo = "team/app"
)

func newRCLab(t *testing.T) *rcLab {
	t.Helper()
	n := newNet(t)
	a := n.Addrs
	ca, err := minireg.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	l := &rcLab{n: n, ca: ca, log: &acceptLog{}}
	l.private = &minireg.Gate{Inner: registry.New(registry.Logger(log.New(io.Discard, "", 0))), Realm: rcPrivate, Quiet: rcPusher,
		Users: map[string]string{rcNSUser: rcNSUserPass, rcPusher: rcPusherPass}}
	serve := func(host string, addr string, h http.Handler) {
		cert, err := ca.Issue(host)
		if err != nil {
			t.Fatal(err)
		}
		ln, err := n.Listen("tcp", addr+":443")
		if err != nil {
			t.Fatal(err)
		}
		var srv *minireg.Server
		if h == nil {
			srv = minireg.Serve(loggedListener{ln, host, l.log}, cert)
		} else {
			srv = minireg.ServeHandler(loggedListener{ln, host, l.log}, cert, h)
		}
		t.Cleanup(func() { srv.Close() })
	}
	serve(rcMirror, a.Mirror.String(), nil)
	serve(rcRegistry, a.Registry.String(), nil)
	serve(rcPrivate, a.Auth.String(), l.private)
	l.bearer = &minireg.Bearer{Inner: registry.New(registry.Logger(log.New(io.Discard, "", 0))), Host: rcBearer, Mark: rcMark}
	serve(rcBearer, a.Blob.String(), l.bearer)
	serveZone(t, n, a.DNS.String(), map[string]string{
		rcDead + ".": a.Dead.String(), rcMirror + ".": a.Mirror.String(), rcRegistry + ".": a.Registry.String(), rcPrivate + ".": a.Auth.String(),
		rcBearer + ".": a.Blob.String(),
	})
	return l
}

// pushPrivate uploads a random two-layer image as ref to the private
// registry, as its pusher.
func (l *rcLab) pushPrivate(ctx context.Context, t *testing.T, ref string) {
	t.Helper()
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		return l.n.Registry.DialContext(ctx, network, l.n.Addrs.Auth.String()+":443")
	}
	if _, err := minireg.PushRandomAuth(ctx, ref, 2, 4096, dial, l.ca.Pool(), rcPusher, rcPusherPass); err != nil {
		t.Fatal(err)
	}
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
