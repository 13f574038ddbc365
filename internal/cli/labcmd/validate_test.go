package labcmd

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/cli"
)

// TestDemoUnknownScenario: a --scenario name the lab does not serve is exit
// 2 naming it, not a silent run of the names that do match.
func TestDemoUnknownScenario(t *testing.T) {
	var out, errb bytes.Buffer
	code := cli.Run(context.Background(), cli.Streams{Out: &out, Err: &errb}, []string{"pullpath", "demo", "--scenario", "healthy,nope"}, NewCmdDemo)
	if code != cli.ExitUsage || !strings.Contains(errb.String(), `invalid value "nope" for --scenario: want one of healthy,`) {
		t.Errorf("demo --scenario healthy,nope = exit %d, stderr %q; want exit 2 naming nope and the valid names", code, errb.String())
	}
	if strings.Contains(out.String(), "healthy") {
		t.Errorf("demo --scenario healthy,nope ran scenarios: %q", out.String())
	}
}

func TestDemoNegativeTimeout(t *testing.T) {
	var out, errb bytes.Buffer
	code := cli.Run(context.Background(), cli.Streams{Out: &out, Err: &errb}, []string{"pullpath", "demo", "--timeout", "-5s"}, NewCmdDemo)
	if code != cli.ExitUsage || !strings.Contains(errb.String(), `invalid value "-5s" for --timeout`) {
		t.Errorf("demo --timeout -5s = exit %d, stderr %q; want exit 2 naming --timeout", code, errb.String())
	}
}
