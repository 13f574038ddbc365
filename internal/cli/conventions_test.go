package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompletion asks cobra's hidden __complete command what a shell would
// get.
func TestCompletion(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"probe", "x", "-o", ""}, []string{"text", "json", "yaml"}},
		{[]string{"probe", "x", "--blobs", ""}, []string{"full", "head", "none"}},
		{[]string{"explain", "-o", ""}, []string{"text", "json", "yaml"}},
		{[]string{"diagnose", ""}, []string{"pod", "deployment", "statefulset", "daemonset", "job"}},
		{[]string{"causes", ""}, []string{"dns", "dns.nxdomain", "tls.untrusted"}},
	} {
		code, out, stderr := runCLI(t, "", append([]string{"__complete"}, tt.args...)...)
		if code != ExitOK {
			t.Errorf("__complete %q exit %d, stderr %q", tt.args, code, stderr)
			continue
		}
		lines := map[string]bool{}
		for _, l := range strings.Split(out, "\n") {
			name, _, _ := strings.Cut(l, "\t")
			lines[name] = true
		}
		for _, w := range tt.want {
			if !lines[w] {
				t.Errorf("__complete %q lacks %q:\n%s", tt.args, w, out)
			}
		}
	}
}

// TestHelpStatesExitCodes: every user-facing command's help lists the exit
// codes.
func TestHelpStatesExitCodes(t *testing.T) {
	root := NewRootCmd(Streams{})
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		for _, want := range []string{"Exit status:", "  2    usage error or unreadable input", "  3    the tool itself could not run", "130"} {
			if !strings.Contains(c.Long, want) {
				t.Errorf("pullpath %s --help lacks %q", c.Name(), want)
			}
		}
	}
}

// TestDiagnoseKindWithoutName: `diagnose pod` is a usage error, not a pod
// named "pod".
func TestDiagnoseKindWithoutName(t *testing.T) {
	for _, kind := range []string{"pod", "deploy", "deployment.apps"} {
		code, _, stderr := runCLI(t, "", "diagnose", kind, "--kubeconfig=/nonexistent")
		if code != ExitUsage || !strings.Contains(stderr, "needs a NAME") {
			t.Errorf("diagnose %s: exit %d, stderr %q; want %d and 'needs a NAME'", kind, code, stderr, ExitUsage)
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
		{"none", []string{"diagnose", "pod", "x"}, "no kubeconfig found: looked in " + defaultKC + " (the default)"},
		{"missing file", []string{"diagnose", "pod", "x", "--kubeconfig=" + filepath.Join(home, "nope")}, "no such file"},
		{"unreadable file", []string{"diagnose", "pod", "x", "--kubeconfig=" + bad}, "error loading config file"},
	} {
		if _, err := os.Stat(defaultKC); tt.name == "none" && err == nil {
			t.Logf("skipping the no-kubeconfig case: %s exists on this machine", defaultKC)
			continue
		}
		code, _, stderr := runCLI(t, "", tt.args...)
		if code != ExitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", tt.name, code, stderr, ExitUsage, tt.want)
		}
	}
}
