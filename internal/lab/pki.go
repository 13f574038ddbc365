package lab

import (
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
	"time"
)

// authority is a certificate authority the lab generates at start.
type authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newSerial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
}

// newAuthority creates a self-signed ECDSA P-256 CA named cn.
func newAuthority(cn string, now time.Time) (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating %s key: %w", cn, err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, fmt.Errorf("generating serial: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: cn, Organization: []string{"pullpath lab"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(2 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("signing %s: %w", cn, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", cn, err)
	}
	return &authority{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// leafSpec describes a server certificate.
type leafSpec struct {
	names     []string
	ips       []net.IP
	notBefore time.Time
	notAfter  time.Time
}

// issue signs a server certificate for spec.
func (a *authority) issue(spec leafSpec) (*tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating leaf key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, fmt.Errorf("generating serial: %w", err)
	}
	cn := ""
	if len(spec.names) > 0 {
		cn = spec.names[0]
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"pullpath lab"}},
		DNSNames:     spec.names,
		IPAddresses:  spec.ips,
		NotBefore:    spec.notBefore,
		NotAfter:     spec.notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return nil, fmt.Errorf("signing leaf for %v: %w", spec.names, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing leaf: %w", err)
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// certStore picks the server certificate by SNI: the fault names get their
// faulty certificate, every other name (and a hello without SNI) the lab's
// main certificate, whose SANs list every name that must pass TLS.
type certStore struct {
	main   *tls.Certificate
	byName map[string]*tls.Certificate
}

func (s *certStore) get(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c, ok := s.byName[hello.ServerName]; ok {
		return c, nil
	}
	return s.main, nil
}

func (s *certStore) tlsConfig() *tls.Config {
	return &tls.Config{GetCertificate: s.get, MinVersion: tls.VersionTLS12}
}
