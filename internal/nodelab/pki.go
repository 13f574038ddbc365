package nodelab

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the control plane's throw-away PKI: a CA, the API server's serving
// certificate and the service-account signing key, as files under dir.
type pki struct{ caFile, certFile, keyFile, saKeyFile string }

func writePKI(dir string, ips ...net.IP) (pki, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return pki{}, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pullpath-nodelab-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return pki{}, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return pki{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return pki{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses: ips,
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return pki{}, err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return pki{}, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return pki{}, err
	}
	saDER, err := x509.MarshalECPrivateKey(saKey)
	if err != nil {
		return pki{}, err
	}
	p := pki{
		caFile: filepath.Join(dir, "ca.crt"), certFile: filepath.Join(dir, "apiserver.crt"),
		keyFile: filepath.Join(dir, "apiserver.key"), saKeyFile: filepath.Join(dir, "sa.key"),
	}
	for _, f := range []struct {
		path, typ string
		der       []byte
	}{{p.caFile, "CERTIFICATE", caDER}, {p.certFile, "CERTIFICATE", der}, {p.keyFile, "EC PRIVATE KEY", keyDER}, {p.saKeyFile, "EC PRIVATE KEY", saDER}} {
		if err := os.WriteFile(f.path, pem.EncodeToMemory(&pem.Block{Type: f.typ, Bytes: f.der}), 0o600); err != nil {
			return pki{}, fmt.Errorf("writing %s: %w", f.path, err)
		}
	}
	return p, nil
}

// randomToken returns a fresh bearer token.
func randomToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", b), nil
}
