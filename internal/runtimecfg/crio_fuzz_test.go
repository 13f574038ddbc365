package runtimecfg

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/verdict"
)

// FuzzCRIO feeds any bytes to CRI-O's readers, as crio.conf, as
// registries.conf (main file and drop-in) and as policy.json, and plans a
// qualified and a short name: never a panic, and an error is always a
// config verdict.
func FuzzCRIO(f *testing.F) {
	f.Add([]byte(manExample))
	f.Add([]byte("[crio.image]\nglobal_auth_file = \"/a\"\ninsecure_registries = [\"a.test\"]\n"))
	f.Add([]byte("unqualified-search-registries = [\"a.test\", \"b.test\"]\nshort-name-mode = \"permissive\"\n[aliases]\n\"app\" = \"c.test/app\"\n"))
	f.Add([]byte("[[registry]]\nprefix = \"*.a.test\"\nlocation = \"b.test/x\"\nblocked = true\n[[registry.mirror]]\nlocation = \"m.test\"\npull-from-mirror = \"tag-only\"\n"))
	f.Add([]byte(`{"default":[{"type":"reject"}],"transports":{"docker":{"a.test":[{"type":"signedBy"}]}}}`))
	f.Add([]byte("[registries.search]\nregistries = ['a']\n"))
	view, _ := nodeview.Load(f.TempDir()) // the trust store only: loaded once
	f.Fuzz(func(t *testing.T, data []byte) {
		root := t.TempDir()
		for _, name := range []string{"etc/crio/crio.conf", "etc/containers/registries.conf", "etc/containers/registries.conf.d/50.conf", "etc/containers/policy.json"} {
			p := filepath.Join(root, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		c, err := Load(root, nodeview.RuntimeBinary{}, Options{})
		if c == nil {
			t.Fatal("nil config")
		}
		if err != nil {
			if _, ok := verdict.AsError(err); !ok {
				t.Fatalf("error without a verdict: %v", err)
			}
			return
		}
		for _, image := range []string{"a.test/team/app:1", "app", "docker.io/library/busybox@" + digest} {
			if _, err := c.PlanImage(context.Background(), view, image, "", false); err != nil {
				if _, ok := verdict.AsError(err); !ok {
					t.Fatalf("plan %s: error without a verdict: %v", image, err)
				}
			}
		}
	})
}
