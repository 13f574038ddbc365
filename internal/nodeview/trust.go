package nodeview

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pullpath/pullpath/internal/verdict"
)

// TrustFiles are the bundle files Go's crypto/x509 tries on Linux, in order;
// the first one that reads is used (GOROOT/src/crypto/x509/root_linux.go).
var TrustFiles = []string{
	"/etc/ssl/certs/ca-certificates.crt",                // Debian/Ubuntu/Gentoo etc.
	"/etc/pki/tls/certs/ca-bundle.crt",                  // Fedora/RHEL 6
	"/etc/ssl/ca-bundle.pem",                            // OpenSUSE
	"/etc/pki/tls/cacert.pem",                           // OpenELEC
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", // CentOS/RHEL 7
	"/etc/ssl/cert.pem",                                 // Alpine Linux
}

// TrustDirs are the directories Go reads in full after the bundle; a symlink
// to a file in the same directory is skipped as a duplicate.
var TrustDirs = []string{"/etc/ssl/certs", "/etc/pki/tls/certs"}

// trustStore is the node's trust store as Go's system pool would load it on
// the node (without SSL_CERT_FILE/SSL_CERT_DIR, which live in the runtime's
// environment, not its filesystem).
type trustStore struct {
	pool     *x509.CertPool
	files    []string // node paths that contributed certificates
	count    int
	problems []*verdict.Error
	fatal    *verdict.Error
}

func loadTrust(root string) trustStore {
	ts := trustStore{pool: x509.NewCertPool()}
	bundle := ""
	for _, f := range TrustFiles {
		data, hp, err := readInRoot(root, f)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				ts.problems = append(ts.problems, verdict.Wrap(verdict.CodeConfigCAFile, verdict.RoleNone, "", fmt.Errorf("reading trust bundle %s: %w", hp, err)))
			}
			continue
		}
		bundle = f
		n := appendPEM(ts.pool, data)
		ts.count += n
		ts.files = append(ts.files, f)
		if n == 0 {
			ts.fatal = verdict.Errorf(verdict.CodeConfigCAFile, verdict.RoleNone, "", "the node trust bundle %s holds no certificate: the node trusts no public CA", hp)
		}
		break
	}
	for _, d := range TrustDirs {
		hd, err := inRoot(root, d)
		if err != nil {
			continue
		}
		ents, err := os.ReadDir(hd)
		if err != nil {
			continue
		}
		for _, e := range ents {
			np := filepath.Join(d, e.Name())
			if np == bundle {
				continue // already read; Go reads it twice, to the same effect
			}
			if e.Type()&fs.ModeSymlink != 0 {
				if t, err := os.Readlink(filepath.Join(hd, e.Name())); err == nil && !strings.Contains(t, "/") {
					continue
				}
			}
			data, _, err := readInRoot(root, np)
			if err != nil {
				continue // Go ignores unreadable entries (directories too)
			}
			if n := appendPEM(ts.pool, data); n > 0 {
				ts.count += n
				ts.files = append(ts.files, np)
			}
		}
	}
	if ts.fatal == nil && ts.count == 0 {
		ts.problems = append(ts.problems, verdict.Errorf(verdict.CodeConfigCAFile, verdict.RoleNone, "", "no trust store under %s (none of %s): the node trusts no public CA", root, strings.Join(TrustFiles, ", ")))
	}
	return ts
}

// appendPEM adds every certificate of a PEM bundle and returns how many it
// added. Unparsable blocks are skipped as x509.CertPool.AppendCertsFromPEM
// skips them.
func appendPEM(pool *x509.CertPool, data []byte) int {
	n := 0
	for len(data) > 0 {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" || len(b.Headers) != 0 {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			continue
		}
		pool.AddCert(c)
		n++
	}
	return n
}
