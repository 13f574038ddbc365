// Package minireg serves a small TLS registry (go-containerregistry's
// in-memory registry) with a throw-away CA, for tests of the netlab harness
// and of the CRI client that need a real registry inside a lab namespace but
// none of the embedded lab's faults.
package minireg

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// CA is a throw-away certificate authority.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// PEM is the CA certificate in PEM form, for a trust store.
	PEM []byte
}

// NewCA creates a CA valid for one day.
func NewCA() (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "pullpath minireg CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("creating CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing CA certificate: %w", err)
	}
	return &CA{cert: cert, key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// Pool returns a pool holding only the CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// Issue issues a server certificate for names (DNS names or IP addresses).
func (ca *CA) Issue(names ...string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("generating key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: names[0]},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, n := range names {
		if a, err := netip.ParseAddr(n); err == nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, a.AsSlice())
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("issuing certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

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
