package probe_test

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/labtest"
	"github.com/pullpath/pullpath/internal/probe"
)

// TestMirrorCapabilities checks the plan follows containerd's capability
// rules on the lab: a pull-only mirror is not asked to resolve a tag (no
// mirror failure on the way), but is asked for a digest; a configuration
// where no host may resolve a tag is a config verdict.
func TestMirrorCapabilities(t *testing.T) {
	l := labtest.New(t, lab.Options{Addrs: labAddrs(20)})
	base := labtest.Scenario(t, l, "mirror-fallback")
	var digest string
	for _, img := range l.Images() {
		if img.Repository == "team/app" {
			digest = img.Digest
		}
	}
	if digest == "" {
		t.Fatal("the lab pushed no team/app")
	}
	tagImage := base.Image
	digestImage := fmt.Sprintf("%s/team/app@%s", l.Registry, digest)
	dead := "https://deadmirror.lab.test"
	if l.HTTPSPort != 443 {
		dead = fmt.Sprintf("https://deadmirror.lab.test:%d", l.HTTPSPort)
	}
	tests := []struct {
		name, toml, image string
		wantOK            bool
		wantCause         string
		wantMirrorWarning bool
	}{
		{"pull-only mirror, tag", fmt.Sprintf("server = %q\n[host.%q]\n  capabilities = [\"pull\"]\n", "https://"+l.Registry, dead), tagImage, true, "", false},
		{"pull-only mirror, digest", fmt.Sprintf("server = %q\n[host.%q]\n  capabilities = [\"pull\"]\n", "https://"+l.Registry, dead), digestImage, true, "", true},
		{"nothing may resolve", fmt.Sprintf("server = %q\ncapabilities = [\"pull\"]\n", "https://"+l.Registry), tagImage, false, "config.hosts-toml", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := copyRoot(t, base.Root)
			f := filepath.Join(root, "etc/containerd/certs.d", l.Registry, "hosts.toml")
			if err := os.WriteFile(f, []byte(tt.toml), 0o644); err != nil {
				t.Fatal(err)
			}
			rep, err := probe.Run(context.Background(), tt.image, probe.Options{Root: root, Platform: base.Platform, Timeout: 2 * time.Second, DNSPort: l.DNSPort})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict.OK != tt.wantOK || (!tt.wantOK && rep.Verdict.Cause != tt.wantCause) {
				t.Fatalf("probe(%s) = %+v, want ok=%v cause %q", tt.image, rep.Verdict, tt.wantOK, tt.wantCause)
			}
			warned := false
			for _, w := range rep.Warnings {
				warned = warned || w.Code == "mirror.unreachable"
			}
			if warned != tt.wantMirrorWarning {
				t.Errorf("mirror.unreachable warned = %v, want %v (warnings %v)", warned, tt.wantMirrorWarning, rep.Warnings)
			}
		})
	}
}

// labAddrs gives a lab its own loopback range so it does not share ports
// with the package's other labs.
func labAddrs(n int) lab.Addrs {
	a := lab.DefaultAddrs()
	shift := func(x string) string { return fmt.Sprintf(x, n) }
	a.Registry = mustAddr(shift("127.0.%d.1"))
	a.Auth = mustAddr(shift("127.0.%d.2"))
	a.Blob = mustAddr(shift("127.0.%d.3"))
	a.Mirror = mustAddr(shift("127.0.%d.4"))
	a.Dead = mustAddr(shift("127.0.%d.99"))
	a.DNS = mustAddr(shift("127.1.%d.1"))
	a.DNS2 = mustAddr(shift("127.1.%d.2"))
	a.DeadDNS = mustAddr(shift("127.1.%d.99"))
	return a
}

func copyRoot(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }
