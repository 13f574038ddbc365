package cli

import (
	"context"
	"errors"
	"fmt"
)

// errInterrupted is what a run cut short by Ctrl-C says on stderr, after
// its partial report.
var errInterrupted = errors.New("interrupted: the report above is partial")

// interruptedExit turns the failure of a command whose context was
// cancelled (Ctrl-C) into ExitInterrupted, whatever error the cancellation
// surfaced as, so that an interrupted run is never reported as a failure
// of the pull path. Usage errors keep their code; a command that says
// ExitInterrupted itself has printed its partial report.
func interruptedExit(ctx context.Context, streams Streams, err error) (int, bool) {
	if !errors.Is(ctx.Err(), context.Canceled) {
		return 0, false
	}
	var ee *ExitError
	if errors.As(err, &ee) && (ee.Code == ExitUsage || ee.Code == ExitOK || ee.Code == ExitInterrupted) {
		return 0, false
	}
	fmt.Fprintf(streams.Err, "pullpath: interrupted (%v)\n", context.Cause(ctx))
	return ExitInterrupted, true
}
