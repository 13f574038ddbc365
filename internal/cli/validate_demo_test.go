//go:build !nolab

package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestDemoUnknownScenario: a --scenario name the lab does not serve is exit
// 2 naming it, not a silent run of the names that do match.
func TestDemoUnknownScenario(t *testing.T) {
	var out, errb bytes.Buffer
	code := Run(context.Background(), Streams{Out: &out, Err: &errb}, []string{"pullpath", "demo", "--scenario", "healthy,nope"})
	if code != ExitUsage || !strings.Contains(errb.String(), `invalid value "nope" for --scenario: want one of healthy,`) {
		t.Errorf("demo --scenario healthy,nope = exit %d, stderr %q; want exit 2 naming nope and the valid names", code, errb.String())
	}
	if strings.Contains(out.String(), "healthy") {
		t.Errorf("demo --scenario healthy,nope ran scenarios: %q", out.String())
	}
}
