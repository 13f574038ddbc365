package nodeview

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/containerd/containerd/v2/core/remotes/docker/config"
)

// hostDirHosts are registry hosts of every shape: bare, with a port, an
// IPv4 and an IPv6 literal with a port, docker.io.
var hostDirHosts = []string{"registry.lab", "registry.lab:5000", "10.0.0.1:5000", "[::1]:5000", "docker.io", "localhost:443"}

// TestHostDirCandidatesAgreeWithContainerd: on this machine's OS,
// HostDirCandidates finds the directory containerd's own HostDirFromRoot
// (compiled for this OS) finds, for every subset of the candidates
// present.
func TestHostDirCandidatesAgreeWithContainerd(t *testing.T) {
	for _, host := range hostDirHosts {
		cands := HostDirCandidates(runtime.GOOS, host)
		for mask := 0; mask < 1<<len(cands); mask++ {
			root := t.TempDir()
			for i, c := range cands {
				if mask&(1<<i) != 0 {
					if err := os.MkdirAll(filepath.Join(root, c), 0o755); err != nil {
						t.Fatal(err)
					}
				}
			}
			want, _ := config.HostDirFromRoot(root)(host)
			v := &View{Root: "/", HostsDirs: []string{root}}
			got, _, err := v.hostDir(host)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%s with %v present: hostDir %q, containerd %q", host, mask, got, want)
			}
		}
	}
}

// TestHostDirCandidatesWindows is containerd's config_windows.go hostPaths
// written out (the Windows tier is not live: no Windows node here).
func TestHostDirCandidatesWindows(t *testing.T) {
	t.Log("tier windows: not live (no Windows node or containerd on this machine): containerd's config_windows.go lookup checked as golden names")
	for host, want := range map[string][]string{
		"registry.lab":      {"registry.lab", "_default"},
		"registry.lab:5000": {"registry.lab_5000_", "registry.lab5000", "_default"},
		"10.0.0.1:5000":     {"10.0.0.1_5000_", "10.0.0.15000", "_default"},
		"[::1]:5000":        {"[1]_5000_", "[1]5000", "_default"},
		"docker.io":         {"docker.io", "_default"},
	} {
		if got := HostDirCandidates(OSWindows, host); !slices.Equal(got, want) {
			t.Errorf("windows %s: %q, want %q", host, got, want)
		}
	}
	for host, want := range map[string][]string{
		"registry.lab:5000": {"registry.lab_5000_", "registry.lab:5000", "_default"},
		"[::1]:5000":        {"[::1]_5000_", "[::1]:5000", "_default"},
	} {
		if got := HostDirCandidates("linux", host); !slices.Equal(got, want) {
			t.Errorf("linux %s: %q, want %q", host, got, want)
		}
	}
	for in, want := range map[string]string{
		`C:\ProgramData\containerd\certs.d`: "/ProgramData/containerd/certs.d",
		`c:/ProgramData/containerd/certs.d`: "/ProgramData/containerd/certs.d",
		`\ProgramData\containerd`:           "/ProgramData/containerd",
	} {
		if got := NodePath(OSWindows, in); got != want {
			t.Errorf("NodePath(windows, %q) = %q, want %q", in, got, want)
		}
	}
	if got := NodePath("linux", `/etc/containerd/certs.d`); got != "/etc/containerd/certs.d" {
		t.Errorf("NodePath(linux) = %q", got)
	}
}
