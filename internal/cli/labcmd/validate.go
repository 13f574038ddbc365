package labcmd

import (
	"slices"
	"strings"

	"github.com/pullpath/pullpath/internal/cli"
	"github.com/pullpath/pullpath/internal/lab"
)

// validate checks demo's flags before the lab starts.
func (o *demoOptions) validate() error {
	return cli.CheckPositiveDuration("timeout", o.timeout)
}

// checkScenarios rejects a --scenario name the lab does not serve, listing
// the ones it does.
func checkScenarios(only []string, scs []lab.Scenario) error {
	names := make([]string, 0, len(scs))
	for _, sc := range scs {
		names = append(names, sc.Name)
	}
	for _, n := range only {
		if !slices.Contains(names, n) {
			return cli.InvalidFlag("scenario", n, "one of "+strings.Join(names, ", "))
		}
	}
	return nil
}
