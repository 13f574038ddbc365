package clustercmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/cli"
)

// TestDiagnoseKindWithoutName: `diagnose pod` is a usage error, not a pod
// named "pod".
func TestDiagnoseKindWithoutName(t *testing.T) {
	for _, kind := range []string{"pod", "deploy", "deployment.apps"} {
		_, stderr, code := runDiagnose(t, "diagnose", kind, "--kubeconfig=/nonexistent")
		if code != cli.ExitUsage || !strings.Contains(stderr, "needs a NAME") {
			t.Errorf("diagnose %s: exit %d, stderr %q; want %d and 'needs a NAME'", kind, code, stderr, cli.ExitUsage)
		}
	}
}

// TestDiagnoseKubeconfigIsInput: a missing, unreadable or absent
// kubeconfig is exit 2, and with none at all the message says where it
// looked, before any request is sent.
func TestDiagnoseKubeconfigIsInput(t *testing.T) {
	// client-go fixes the default path (~/.kube/config) when it starts.
	realHome, _ := os.UserHomeDir()
	defaultKC := filepath.Join(realHome, ".kube", "config")
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	bad := filepath.Join(home, "bad.kubeconfig")
	if err := os.WriteFile(bad, []byte("garbage: ["), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"none", []string{"diagnose", "pod", "x"}, "no kubeconfig found"},
		{"missing file", []string{"diagnose", "pod", "x", "--kubeconfig=" + filepath.Join(home, "nope")}, "no such file"},
		{"unreadable file", []string{"diagnose", "pod", "x", "--kubeconfig=" + bad}, "bad.kubeconfig"},
	} {
		if _, err := os.Stat(defaultKC); tt.name == "none" && err == nil {
			t.Logf("skipping the no-kubeconfig case: %s exists on this machine", defaultKC)
			continue
		}
		_, stderr, code := runDiagnose(t, tt.args...)
		if code != cli.ExitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", tt.name, code, stderr, cli.ExitUsage, tt.want)
		}
	}
}
