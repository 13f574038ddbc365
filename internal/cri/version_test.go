package cri_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/cri"
	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/probe"
	"github.com/pullpath/pullpath/internal/probe/criruntime"
	"github.com/pullpath/pullpath/internal/runtimecfg"
)

// TestVersionOfRunningContainerd: the CRI Version call on a real
// containerd (Debian's 1.6) names it and its version, and runtimecfg takes
// that answer over a root whose files say nothing, and says it won.
func TestVersionOfRunningContainerd(t *testing.T) {
	rt := startRuntime(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := cri.Dial(ctx, rt.socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	v, err := c.Version(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v, "containerd://1.") {
		t.Fatalf("Version = %q, want containerd://1.x", v)
	}
	socket, v2, err := probe.RuntimeVersionFor(criruntime.Dial, rt.socket)(ctx, t.TempDir())
	if err != nil || v2 != v || socket != rt.socket {
		t.Fatalf("RuntimeVersionFor = %q, %q, %v; want %q on %s", socket, v2, err, v, rt.socket)
	}
	cfg, _ := runtimecfg.Load(t.TempDir(), nodeview.RuntimeBinary{}, runtimecfg.Options{CRISocket: socket, CRIVersion: v2, RuntimeVersion: "containerd://2.2.9"})
	if cfg.Runtime.Assumed || !strings.HasPrefix(v, "containerd://"+cfg.Runtime.Version) || !strings.Contains(cfg.Runtime.VersionSource, "CRI Version call") {
		t.Errorf("runtime %+v: want the CRI answer %s used", cfg.Runtime, v)
	}
	if len(cfg.Runtime.Candidates) != 2 || !cfg.Runtime.Candidates[0].Used || cfg.Runtime.Candidates[1].Used {
		t.Errorf("candidates %+v: want the CRI answer used, the node status's not", cfg.Runtime.Candidates)
	}
	t.Logf("CRI Version: %s; runtime %s from %s", v, cfg.Runtime.Version, cfg.Runtime.VersionSource)
}
