package nodeview

import (
	"context"
	"testing"

	"github.com/pullpath/pullpath/internal/testpki"
)

func BenchmarkRegistryHosts(b *testing.B) {
	ca := testpki.MustCA(b, "bench CA")
	root := b.TempDir()
	writeFiles(b, root, map[string]string{
		"/etc/ssl/certs/ca-certificates.crt":                  string(ca.PEM),
		"/etc/containerd/certs.d/registry.example/hosts.toml": "[host.\"https://m.example\"]\nca = \"/etc/ca.pem\"\n[host.\"https://n.example\"]\n",
		"/etc/ca.pem": string(ca.PEM),
	})
	v, err := Load(root)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := v.RegistryHosts(context.Background(), "registry.example"); err != nil {
			b.Fatal(err)
		}
	}
}
