package nodelab

import (
	"crypto/rand"
	"fmt"
	"net"

	"github.com/pullpath/pullpath/internal/testpki"
)

// pki is the control plane's throw-away PKI: a CA, the API server's serving
// certificate and the service-account signing key, as files under dir.
type pki struct{ caFile, certFile, keyFile, saKeyFile string }

func writePKI(dir string, ips ...net.IP) (pki, error) {
	f, err := testpki.WriteAPIServer(dir, ips...)
	return pki{caFile: f.CAFile, certFile: f.CertFile, keyFile: f.KeyFile, saKeyFile: f.SAKeyFile}, err
}

// randomToken returns a fresh bearer token.
func randomToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", b), nil
}
