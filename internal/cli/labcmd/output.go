package labcmd

import (
	"fmt"
	"github.com/pullpath/pullpath/internal/cli"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/pullpath/pullpath/internal/demo"
	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/report"
)

// demoReport is the DemoReport document (schema/demoreport.schema.json).
type demoReport struct {
	LabStartMs int64         `json:"lab_start_ms"`
	Total      int           `json:"total"`
	Passed     int           `json:"passed"`
	Scenarios  []demo.Result `json:"scenarios"`
}

func newDemoReport(results []demo.Result, labStart time.Duration) *demoReport {
	r := &demoReport{LabStartMs: labStart.Milliseconds(), Total: len(results), Scenarios: results}
	for _, x := range results {
		if x.Pass {
			r.Passed++
		}
	}
	return r
}

// demoList is the DemoReport of --list: the scenarios, none run.
type demoList struct {
	Scenarios []lab.Listing `json:"scenarios"`
}

// printList prints every scenario with one line each (or as a document).
func (o *demoOptions) printList() error {
	list := lab.List()
	if o.output != report.FormatText {
		return cli.WriteDocument(o.streams.Out, o.output, report.KindDemoReport, &demoList{Scenarios: list})
	}
	tw := tabwriter.NewWriter(o.streams.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tEXPECTED\tDESCRIPTION")
	for _, sc := range list {
		want := "ok"
		if !sc.Expect.OK {
			want = sc.Expect.Cause
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", sc.Name, want, sc.Description)
	}
	return tw.Flush()
}

// completeScenarios completes --scenario with the lab's scenario names.
func completeScenarios(_ *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	for _, sc := range lab.List() {
		out = append(out, cobra.CompletionWithDesc(sc.Name, sc.Description))
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
