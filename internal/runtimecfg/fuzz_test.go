package runtimecfg

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/verdict"
)

// FuzzLoad feeds any bytes to the containerd configuration reader as
// config.toml (and as its import) and plans a pull with both containerd
// generations: never a panic, and an error is always a config verdict.
func FuzzLoad(f *testing.F) {
	f.Add([]byte("version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".registry]\nconfig_path = \"/etc/containerd/certs.d\"\n"))
	f.Add([]byte("version = 3\nimports = [\"d.toml\"]\n[plugins.'io.containerd.cri.v1.images'.registry.mirrors.'docker.io']\nendpoint = ['https://m', 'localhost:5000']\n"))
	f.Add([]byte("[plugins.cri.registry.configs.\"m\".tls]\nca_file = \"/x\"\ncert_file = \"/c\"\n"))
	f.Add([]byte("version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".registry\n"))
	f.Add([]byte("plugins = 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		root := t.TempDir()
		dir := filepath.Join(root, "etc", "containerd")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"config.toml", "d.toml"} {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		view, _ := nodeview.Load(root)
		for _, rb := range []nodeview.RuntimeBinary{ctd16, ctd22} {
			c, err := Load(root, rb, Options{})
			if c == nil {
				t.Fatal("nil config")
			}
			if err != nil {
				if _, ok := verdict.AsError(err); !ok {
					t.Fatalf("error without a verdict: %v", err)
				}
				continue
			}
			if _, err := c.Plan(context.Background(), view, "docker.io", false); err != nil {
				if _, ok := verdict.AsError(err); !ok {
					t.Fatalf("plan error without a verdict: %v", err)
				}
			}
		}
	})
}

// FuzzLintHostsTOML runs the hosts.toml lints over any bytes.
func FuzzLintHostsTOML(f *testing.F) {
	f.Add([]byte("ca = \"/ca.pem\"\n"))
	f.Add([]byte("server = \"https://r\"\n[host.\"https://m\".auth]\nusername = \"u\"\n"))
	f.Add([]byte("[auth]\n[[host]]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "hosts.toml")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_ = lintHostsTOML(p, "/etc/containerd/certs.d/x/hosts.toml")
	})
}
