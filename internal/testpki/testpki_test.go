package testpki

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"testing"
	"time"
)

func TestIssueVerifies(t *testing.T) {
	ca := MustCA(t, "test CA")
	other := MustCA(t, "other CA")
	c, err := ca.Issue("reg.test", "198.18.0.5")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"reg.test", "198.18.0.5"} {
		if _, err := c.Leaf.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: name}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := c.Leaf.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: "other.test"}); err == nil {
		t.Error("the leaf verified for a name it does not hold")
	}
	if _, err := c.Leaf.Verify(x509.VerifyOptions{Roots: other.Pool(), DNSName: "reg.test"}); err == nil {
		t.Error("the leaf verified under another CA")
	}
	if c.Leaf.Subject.CommonName != "reg.test" || c.Leaf.SerialNumber.Cmp(ca.Cert.SerialNumber) == 0 {
		t.Errorf("subject %q, serial %v (CA's %v)", c.Leaf.Subject.CommonName, c.Leaf.SerialNumber, ca.Cert.SerialNumber)
	}
	// A client certificate verifies for client authentication; a server one does not.
	cl := ca.MustIssue(t, Leaf{Names: []string{"client"}, Client: true})
	if _, err := cl.Leaf.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client certificate: %v", err)
	}
	if _, err := c.Leaf.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("a server certificate verified for client authentication")
	}
}

func TestIssueValidity(t *testing.T) {
	ca := MustCA(t, "test CA")
	past := time.Now().Add(-2 * time.Hour)
	c := ca.MustIssue(t, Leaf{Names: []string{"old.test"}, NotBefore: past.Add(-time.Hour), NotAfter: past})
	if !c.Leaf.NotAfter.Equal(past.Truncate(time.Second)) {
		t.Errorf("NotAfter %v, want %v", c.Leaf.NotAfter, past)
	}
	if _, err := c.Leaf.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: "old.test"}); err == nil {
		t.Error("an expired certificate verified")
	}
}

func TestPEMRoundTrip(t *testing.T) {
	ca := MustCA(t, "test CA")
	c := ca.MustIssue(t, Leaf{Names: []string{"reg.test"}})
	if _, err := tls.X509KeyPair(CertPEM(c), KeyPEM(c.PrivateKey)); err != nil {
		t.Errorf("certificate and key PEM do not pair: %v", err)
	}
	if b, _ := pem.Decode(ca.PEM); b == nil || b.Type != "CERTIFICATE" {
		t.Errorf("CA PEM: %q", ca.PEM)
	}
}

func TestWriteAPIServer(t *testing.T) {
	dir := t.TempDir()
	f, err := WriteAPIServer(dir, net.IPv4(127, 0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(f.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("ca.crt holds no certificate")
	}
	for _, name := range []string{"localhost", "kubernetes.default.svc", "127.0.0.1"} {
		if _, err := pair.Leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: name}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	sa, err := os.ReadFile(f.SAKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := pem.Decode(sa); b == nil || b.Type != "EC PRIVATE KEY" {
		t.Errorf("sa.key: %q", sa)
	}
	if st, err := os.Stat(f.KeyFile); err != nil {
		t.Error(err)
	} else if st.Mode().Perm() != 0o600 {
		t.Errorf("apiserver.key mode %v, want 0600", st.Mode().Perm())
	}
}
