package report

import (
	"fmt"

	"github.com/pullpath/pullpath/internal/probe"
)

// probeSummary is the last line of a probe's text report. It says FAIL
// whenever the run exits 1: also when the probe's own path works but the
// runtime pull (--runtime-pull) failed or could not be asked.
func probeSummary(r *probe.Report) string {
	if rt := r.Runtime; r.Verdict.OK && rt != nil && !rt.OK && rt.Error != "" {
		return fmt.Sprintf("FAIL runtime pull through %s (the probe's own pull path works), in %s", rt.Socket, fmtMillis(float64(r.Millis)))
	}
	return Summary(r.Verdict, r.Millis)
}
