// Package testpki makes throw-away certificate authorities and
// certificates for tests and test rigs: a CA, server and client
// certificates signed by it, and the PEM files a kube-apiserver needs.
// Every key is a fresh ECDSA P-256 key and every serial a random one.
//
// It is for tests only: internal/depcheck fails if a shipped binary links
// it. The embedded lab (internal/lab) ships in `pullpath demo` and keeps
// its own PKI.
package testpki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	// PEM is the CA certificate in PEM form, for a trust store.
	PEM []byte
}

// NewCA creates a CA named name, valid from an hour ago for a day.
func NewCA(name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating CA key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("creating CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing CA certificate: %w", err)
	}
	return &CA{Cert: cert, Key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// MustCA is NewCA that fails the test on error.
func MustCA(t testing.TB, name string) *CA {
	t.Helper()
	ca, err := NewCA(name)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// Pool returns a pool holding only the CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Leaf describes a certificate to issue.
type Leaf struct {
	// Names are DNS names and IP addresses (an entry that parses as an
	// address is one); the first is the subject's common name.
	Names []string
	// IPs are more addresses.
	IPs []net.IP
	// NotBefore and NotAfter default to an hour ago and a day from now.
	NotBefore, NotAfter time.Time
	// Client makes the certificate good for client authentication too.
	Client bool
	// Serial is the serial number; nil is a random one.
	Serial *big.Int
}

// Issue issues a server certificate for names (DNS names or IP addresses),
// valid from an hour ago for a day.
func (ca *CA) Issue(names ...string) (tls.Certificate, error) {
	return ca.IssueLeaf(Leaf{Names: names})
}

// IssueLeaf issues the certificate l describes. The result holds the leaf
// alone as its chain, its key, and the parsed leaf.
func (ca *CA) IssueLeaf(l Leaf) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("generating key: %w", err)
	}
	serial := l.Serial
	if serial == nil {
		if serial, err = newSerial(); err != nil {
			return tls.Certificate{}, err
		}
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		NotBefore:    l.NotBefore,
		NotAfter:     l.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  append([]net.IP(nil), l.IPs...),
	}
	if tmpl.NotBefore.IsZero() {
		tmpl.NotBefore = now.Add(-time.Hour)
	}
	if tmpl.NotAfter.IsZero() {
		tmpl.NotAfter = now.Add(24 * time.Hour)
	}
	if l.Client {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	if len(l.Names) > 0 {
		tmpl.Subject.CommonName = l.Names[0]
	}
	for _, n := range l.Names {
		if a, err := netip.ParseAddr(n); err == nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, a.AsSlice())
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("issuing certificate for %v: %w", l.Names, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("parsing certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// MustIssue is IssueLeaf that fails the test on error.
func (ca *CA) MustIssue(t testing.TB, l Leaf) tls.Certificate {
	t.Helper()
	c, err := ca.IssueLeaf(l)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// CertPEM is the PEM of a certificate's chain, leaf first.
func CertPEM(c tls.Certificate) []byte {
	var out []byte
	for _, der := range c.Certificate {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	return out
}

// KeyPEM is the PEM of an ECDSA private key (SEC 1, "EC PRIVATE KEY"), such
// as a certificate's from Issue. Any other key is a mistake in the test: it
// panics.
func KeyPEM(key crypto.PrivateKey) []byte {
	k, ok := key.(*ecdsa.PrivateKey)
	if !ok {
		panic(fmt.Sprintf("testpki: %T is not an ECDSA key", key))
	}
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		panic(fmt.Sprintf("testpki: %v", err))
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
}

// APIServerFiles are the PEM files a kube-apiserver is started with.
type APIServerFiles struct{ CAFile, CertFile, KeyFile, SAKeyFile string }

// WriteAPIServer writes a control plane's PKI under dir: a CA (ca.crt), the
// API server's serving certificate for localhost, the in-cluster names and
// ips (apiserver.crt, apiserver.key) and a service-account signing key
// (sa.key), all fresh and readable by the owner only.
func WriteAPIServer(dir string, ips ...net.IP) (APIServerFiles, error) {
	ca, err := NewCA("pullpath-test-ca")
	if err != nil {
		return APIServerFiles{}, err
	}
	cert, err := ca.IssueLeaf(Leaf{
		Names: []string{"kube-apiserver", "localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPs:   ips,
	})
	if err != nil {
		return APIServerFiles{}, err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return APIServerFiles{}, err
	}
	f := APIServerFiles{
		CAFile: filepath.Join(dir, "ca.crt"), CertFile: filepath.Join(dir, "apiserver.crt"),
		KeyFile: filepath.Join(dir, "apiserver.key"), SAKeyFile: filepath.Join(dir, "sa.key"),
	}
	for _, w := range []struct {
		path string
		data []byte
	}{{f.CAFile, ca.PEM}, {f.CertFile, CertPEM(cert)}, {f.KeyFile, KeyPEM(cert.PrivateKey)}, {f.SAKeyFile, KeyPEM(saKey)}} {
		if err := os.WriteFile(w.path, w.data, 0o600); err != nil {
			return APIServerFiles{}, fmt.Errorf("writing %s: %w", w.path, err)
		}
	}
	return f, nil
}

func newSerial() (*big.Int, error) {
	s, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("generating serial: %w", err)
	}
	return s, nil
}
