package cli

import (
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
