//go:build !nolab

package cli

import "testing"

// TestSchemaDemo validates `pullpath demo -o json` (every scenario, against
// the command's own lab) and `demo --list -o json` as DemoReports.
func TestSchemaDemo(t *testing.T) {
	code, out, stderr := runCLI(t, "", "demo", "-o", "json")
	if code != ExitOK {
		t.Errorf("demo exit %d, stderr %q", code, stderr)
	}
	validateDoc(t, "DemoReport", out)
	code, out, stderr = runCLI(t, "", "demo", "--list", "-o", "json")
	if code != ExitOK {
		t.Errorf("demo --list exit %d, stderr %q", code, stderr)
	}
	validateDoc(t, "DemoReport", out)
}
