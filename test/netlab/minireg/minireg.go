// Package minireg serves a small TLS registry (go-containerregistry's
// in-memory registry) with a throw-away CA, for tests of the netlab harness
// and of the CRI client that need a real registry inside a lab namespace but
// none of the embedded lab's faults.
package minireg

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/pullpath/pullpath/internal/testpki"
)

// CA is a throw-away certificate authority: NewCA's, and its Issue, Pool
// and PEM, are internal/testpki's.
type CA = testpki.CA

// NewCA creates a CA valid for one day.
func NewCA() (*CA, error) { return testpki.NewCA("pullpath minireg CA") }

// Server is a running registry.
type Server struct {
	srv *http.Server
}

// Serve serves an empty in-memory registry over TLS on ln with cert.
func Serve(ln net.Listener, cert tls.Certificate) *Server {
	return ServeHandler(ln, cert, registry.New(registry.Logger(log.New(io.Discard, "", 0))))
}

// ServeHandler serves h (a registry, or one wrapped in an auth gate) over
// TLS on ln with cert.
func ServeHandler(ln net.Listener, cert tls.Certificate, h http.Handler) *Server {
	s := &Server{srv: &http.Server{
		Handler:           h,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}},
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}}
	go s.srv.ServeTLS(ln, "", "")
	return s
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// PushRandom pushes a small random image (layers layers of size bytes each)
// to ref, dialing with dial and trusting pool, and returns it.
func PushRandom(ctx context.Context, ref string, layers int, size int64, dial func(ctx context.Context, network, addr string) (net.Conn, error), pool *x509.CertPool) (v1.Image, error) {
	return PushRandomAuth(ctx, ref, layers, size, dial, pool, "", "")
}

// PushRandomAuth is PushRandom with Basic credentials (none when user is
// empty).
func PushRandomAuth(ctx context.Context, ref string, layers int, size int64, dial func(ctx context.Context, network, addr string) (net.Conn, error), pool *x509.CertPool, user, pass string) (v1.Image, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", ref, err)
	}
	img, err := random.Image(size, int64(layers))
	if err != nil {
		return nil, fmt.Errorf("making random image: %w", err)
	}
	tr := &http.Transport{DialContext: dial, TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	opts := []remote.Option{remote.WithContext(ctx), remote.WithTransport(tr)}
	if user != "" {
		opts = append(opts, remote.WithAuth(&authn.Basic{Username: user, Password: pass}))
	}
	if err := remote.Write(r, img, opts...); err != nil {
		return nil, fmt.Errorf("pushing %s: %w", ref, err)
	}
	return img, nil
}
