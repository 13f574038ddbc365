package probe_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/labtest"
	"github.com/pullpath/pullpath/internal/probe"
)

// TestProbeRangeFetchOnLab: on a containerd 2.2 node whose transfer
// service fetches layers in parallel chunks (concurrent_layer_fetch_buffer),
// the probe fetches every blob with Range requests from the lab's real
// registry and blob host, as that containerd would, and verifies them; on
// the default (buffer 0) it sends one plain GET per blob.
func TestProbeRangeFetchOnLab(t *testing.T) {
	l := labtest.New(t, lab.Options{Addrs: labAddrs(22)})
	sc := labtest.Scenario(t, l, "healthy")
	for _, tt := range []struct {
		name, config string
		ranged       bool
	}{
		{"transfer service with concurrent_layer_fetch_buffer", "version = 3\n[plugins.'io.containerd.transfer.v1.local']\n  concurrent_layer_fetch_buffer = 512\n", true},
		{"default: one request per layer", "version = 3\n", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := copyRoot(t, sc.Root)
			p := filepath.Join(root, "etc/containerd/config.toml")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(tt.config), 0o644); err != nil {
				t.Fatal(err)
			}
			rep, err := probe.Run(context.Background(), sc.Image, probe.Options{Root: root, Platform: sc.Platform, Timeout: 2 * time.Second, DNSPort: l.DNSPort,
				RuntimeVersion: "containerd://2.2.9"})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Verdict.OK || len(rep.Blobs) == 0 {
				t.Fatalf("verdict %+v, %d blobs; want ok", rep.Verdict, len(rep.Blobs))
			}
			if rep.RuntimeConfig.PullPath != "transfer" {
				t.Fatalf("pull path %s, want transfer", rep.RuntimeConfig.PullPath)
			}
			multi := false
			for _, b := range rep.Blobs {
				if !b.Verified || (b.Ranges > 0) != tt.ranged || b.RangeIgnored {
					t.Errorf("blob %s: verified %v, %d range requests, ignored %v; want ranged %v", b.Digest, b.Verified, b.Ranges, b.RangeIgnored, tt.ranged)
				}
				if b.Size > 512 && b.Ranges < 2 && tt.ranged {
					t.Errorf("blob %s of %d bytes took %d range request(s), want one per 512 bytes", b.Digest, b.Size, b.Ranges)
				}
				multi = multi || b.Ranges > 1
				t.Logf("blob %s: %d bytes from %s in %d range request(s)", b.Digest[:19], b.Bytes, b.Host, b.Ranges)
			}
			if tt.ranged && !multi {
				t.Errorf("no blob took more than one range request")
			}
		})
	}
}
