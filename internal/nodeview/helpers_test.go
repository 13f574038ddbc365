package nodeview

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"

	"github.com/pullpath/pullpath/internal/testpki"
)

// trusts reports whether pool verifies a fresh leaf of ca for name.
func trusts(t *testing.T, pool *x509.CertPool, ca *testpki.CA, name string) bool {
	t.Helper()
	c := ca.MustIssue(t, testpki.Leaf{Names: []string{name}})
	_, err := c.Leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: name})
	return err == nil
}

// writeFiles writes files (node path → content) under root; a content of
// "->target" makes a symlink.
func writeFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		hp := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(hp), 0o755); err != nil {
			t.Fatal(err)
		}
		if len(content) > 2 && content[:2] == "->" {
			if err := os.Symlink(content[2:], hp); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(hp, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
