package probe_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/labtest"
	"github.com/pullpath/pullpath/internal/probe"
)

// TestProbeFollowsRuntimeConfig checks on the embedded lab that the probe
// walks the plan the node's containerd configuration gives, not the
// default certs.d: each row puts a dead mirror where only a reader of the
// configuration finds it (or where the runtime would not look), so reading
// and not reading the configuration give different plans and warnings.
func TestProbeFollowsRuntimeConfig(t *testing.T) {
	l := labtest.New(t, lab.Options{Addrs: labAddrs(21)})
	base := labtest.Scenario(t, l, "mirror-fallback")
	dead := "https://deadmirror.lab.test"
	if l.HTTPSPort != 443 {
		dead = fmt.Sprintf("https://deadmirror.lab.test:%d", l.HTTPSPort)
	}
	deadHost := strings.TrimPrefix(dead, "https://")
	hostsTOML := fmt.Sprintf("server = %q\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n", "https://"+l.Registry, dead)
	dpkg16 := "Package: containerd\nStatus: install ok installed\nVersion: 1.6.20~ds1-1+deb12u3\n\n"
	defaultDir := filepath.Join("etc/containerd/certs.d", l.Registry)
	tests := []struct {
		name       string
		files      map[string]string
		remove     string // a path under the root to remove first
		wantPlan   []string
		wantCause  string // "" for an OK verdict
		wantWarn   []string
		wantNoWarn []string
	}{
		{name: "config_path elsewhere (k3s)",
			remove: defaultDir,
			files: map[string]string{
				"etc/containerd/config.toml": "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".registry]\n  config_path = \"/var/lib/rancher/k3s/agent/etc/containerd/certs.d\"\n",
				filepath.Join("var/lib/rancher/k3s/agent/etc/containerd/certs.d", l.Registry, "hosts.toml"): hostsTOML,
			},
			wantPlan: []string{deadHost, l.Registry}, wantWarn: []string{"mirror.unreachable"}},
		{name: "containerd 1.6 without config_path reads no certs.d",
			files:    map[string]string{"var/lib/dpkg/status": dpkg16},
			wantPlan: []string{l.Registry}, wantWarn: []string{"config.certs-d-unread"}, wantNoWarn: []string{"mirror.unreachable"}},
		{name: "legacy inline mirrors (GKE)",
			remove: defaultDir,
			files: map[string]string{
				"var/lib/dpkg/status":        dpkg16,
				"etc/containerd/config.toml": fmt.Sprintf("version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".registry.mirrors.%q]\n  endpoint = [%q]\n", l.Registry, dead),
			},
			wantPlan: []string{deadHost, l.Registry}, wantWarn: []string{"mirror.unreachable"}},
		{name: "imported drop-in replaces the CRI table on 1.6",
			files: map[string]string{
				"var/lib/dpkg/status":             dpkg16,
				"etc/containerd/config.toml":      "version = 2\nimports = [\"/etc/containerd/conf.d/*.toml\"]\n[plugins.\"io.containerd.grpc.v1.cri\".registry]\n  config_path = \"/etc/containerd/certs.d\"\n",
				"etc/containerd/conf.d/10-a.toml": "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  sandbox_image = \"registry.k8s.io/pause:3.9\"\n",
			},
			wantPlan: []string{l.Registry}, wantWarn: []string{"config.certs-d-unread"}, wantNoWarn: []string{"mirror.unreachable"}},
		{name: "mirrors with config_path: containerd refuses",
			files: map[string]string{
				"etc/containerd/config.toml": fmt.Sprintf("version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".registry]\n  config_path = \"/etc/containerd/certs.d\"\n[plugins.\"io.containerd.grpc.v1.cri\".registry.mirrors.%q]\n  endpoint = [%q]\n", l.Registry, dead),
			},
			wantCause: "config.containerd"},
		{name: "corrupt config.toml",
			files:     map[string]string{"etc/containerd/config.toml": "version = 2\n[plugins\n"},
			wantCause: "config.containerd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := copyRoot(t, base.Root)
			if tt.remove != "" {
				if err := os.RemoveAll(filepath.Join(root, tt.remove)); err != nil {
					t.Fatal(err)
				}
			}
			layFiles(t, root, tt.files)
			rep, err := probe.Run(context.Background(), base.Image, probe.Options{Root: root, Platform: base.Platform, Timeout: 2 * time.Second, DNSPort: l.DNSPort, Blobs: probe.BlobsHead})
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantCause != "" {
				if rep.Verdict.OK || rep.Verdict.Cause != tt.wantCause {
					t.Fatalf("verdict %+v, want %s", rep.Verdict, tt.wantCause)
				}
				if rep.RuntimeConfig == nil || len(rep.Endpoints) != 0 {
					t.Errorf("a refused configuration must be reported and probe nothing: %+v, %d endpoints", rep.RuntimeConfig, len(rep.Endpoints))
				}
				return
			}
			if !rep.Verdict.OK {
				t.Fatalf("verdict %+v, want OK", rep.Verdict)
			}
			rc := rep.RuntimeConfig
			if rc == nil || rc.Plan == nil {
				t.Fatal("no runtime_config.plan in the report")
			}
			var got []string
			for _, e := range rc.Plan.Endpoints {
				got = append(got, e.Host)
			}
			if strings.Join(got, " ") != strings.Join(tt.wantPlan, " ") {
				t.Errorf("plan %v, want %v", got, tt.wantPlan)
			}
			if rc.Plan.ServedBy != len(tt.wantPlan) {
				t.Errorf("served by endpoint %d, want %d (the registry)", rc.Plan.ServedBy, len(tt.wantPlan))
			}
			for _, c := range tt.wantWarn {
				if !hasWarning(rep, c) {
					t.Errorf("no %s warning: %v", c, rep.Warnings)
				}
			}
			for _, c := range tt.wantNoWarn {
				if hasWarning(rep, c) {
					t.Errorf("unexpected %s warning: %v", c, rep.Warnings)
				}
			}
		})
	}
}
