package runtimecfg

import (
	"testing"

	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/verdict"
)

// TestVersionSources: the running runtime's answer (CRI, then the node's
// containerRuntimeVersion) beats the files, every source is listed with
// the one used, and a CRI-O answer makes the runtime CRI-O without
// touching containerd's rules.
func TestVersionSources(t *testing.T) {
	root := writeRoot(t, map[string]string{dpkgStatus: "Package: containerd\nStatus: install ok installed\nVersion: 1.6.20~ds1-1+deb12u1\n\n"})
	tests := []struct {
		name             string
		o                Options
		wantName, wantV  string
		wantMajor        int
		wantUsed, wantNC int
	}{
		{"files only", Options{}, Containerd, "1.6.20", 1, 0, 1},
		{"node status beats dpkg", Options{RuntimeVersion: "containerd://1.7.27-k3s1"}, Containerd, "1.7.27", 1, 0, 2},
		{"CRI beats node status", Options{CRIVersion: "containerd://2.2.9", CRISocket: "/run/containerd/containerd.sock", RuntimeVersion: "containerd://1.7.27"}, Containerd, "2.2.9", 2, 0, 3},
		{"unparsable status: dpkg", Options{RuntimeVersion: "containerd://devel"}, Containerd, "1.6.20", 1, 1, 2},
		// containerd 2.0's rules draw the (containerd) plan shown, as for
		// any CRI-O node, and a warning says it is not CRI-O's.
		{"CRI-O", Options{RuntimeVersion: "cri-o://1.31.5-3.rhaos4.18"}, CRIO, "1.31.5-3.rhaos4.18", 2, 0, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := Load(root, nodeview.RuntimeBinary{}, tt.o)
			r := c.Runtime
			if r.Name != tt.wantName || r.Version != tt.wantV || r.Major() != tt.wantMajor {
				t.Fatalf("runtime %s %s (major %d), want %s %s (%d); source %s", r.Name, r.Version, r.Major(), tt.wantName, tt.wantV, tt.wantMajor, r.VersionSource)
			}
			if len(r.Candidates) != tt.wantNC || !r.Candidates[tt.wantUsed].Used {
				t.Fatalf("candidates %+v, want %d with #%d used", r.Candidates, tt.wantNC, tt.wantUsed)
			}
			if r.Name == CRIO && (len(c.Warnings) == 0 || c.Warnings[0].Code != verdict.CodeConfigRuntimeUnmodelled) {
				t.Errorf("CRI-O runtime: warnings %+v, want %s", c.Warnings, verdict.CodeConfigRuntimeUnmodelled)
			}
			for i, cd := range r.Candidates {
				if cd.Used != (i == tt.wantUsed) {
					t.Errorf("candidate %d %+v used = %v", i, cd, cd.Used)
				}
			}
		})
	}
	// With no file saying anything, the node's status keeps the rules
	// from being assumed.
	c, _ := Load(t.TempDir(), nodeview.RuntimeBinary{}, Options{RuntimeVersion: "containerd://1.7.23-k3s2"})
	if c.Runtime.Assumed || c.Runtime.Version != "1.7.23" {
		t.Errorf("runtime %+v: want 1.7.23 from the node's status, not assumed", c.Runtime)
	}
}
