package labcmd

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/cli"
	"github.com/pullpath/pullpath/internal/schematest"
)

// TestSchemaDemo validates `pullpath demo -o json` (every scenario, against
// the command's own lab) and `demo --list -o json` as DemoReports.
func TestSchemaDemo(t *testing.T) {
	code, out, stderr := runDemo(t, "demo", "-o", "json")
	if code != cli.ExitOK {
		t.Errorf("demo exit %d, stderr %q", code, stderr)
	}
	schematest.Validate(t, "DemoReport", out)
	code, out, stderr = runDemo(t, "demo", "--list", "-o", "json")
	if code != cli.ExitOK {
		t.Errorf("demo --list exit %d, stderr %q", code, stderr)
	}
	schematest.Validate(t, "DemoReport", out)
}

func runDemo(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Run(context.Background(), cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, append([]string{"pullpath"}, args...), NewCmdDemo)
	return code, out.String(), errb.String()
}
