package nodeview

import (
	"context"
	"testing"
)

func BenchmarkRegistryHosts(b *testing.B) {
	ca := newTestCA(b, "bench CA")
	root := b.TempDir()
	writeFiles(b, root, map[string]string{
		"/etc/ssl/certs/ca-certificates.crt":                  string(ca.pem),
		"/etc/containerd/certs.d/registry.example/hosts.toml": "[host.\"https://m.example\"]\nca = \"/etc/ca.pem\"\n[host.\"https://n.example\"]\n",
		"/etc/ca.pem": string(ca.pem),
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
