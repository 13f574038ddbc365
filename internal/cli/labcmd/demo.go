package labcmd

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/pullpath/pullpath/internal/cli"
	"github.com/pullpath/pullpath/internal/demo"
	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/report"
)

type demoOptions struct {
	streams cli.Streams
	output  string
	noColor bool
	only    []string
	timeout time.Duration
	verbose bool
	list    bool
}

// NewCmdDemo builds `pullpath demo`: start the embedded lab, probe every
// scenario, print scenario → verdict, exit 0 only if every verdict is the
// expected one.
func NewCmdDemo(streams cli.Streams) *cobra.Command {
	o := &demoOptions{streams: streams}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Probe every fault of the embedded lab and show each verdict",
		Long: `demo starts the embedded lab on loopback — a real registry (distribution v3)
with TLS, token auth on its own host and a separate redirecting blob host, and
a DNS server — and probes one scenario per fault: NXDOMAIN, resolver down,
private zone, refused, untrusted/wrong-name/expired certificates, 401, 403,
unknown tag, missing platform, unreachable or corrupt blob host, 429, 5xx,
mirror fallback, an HTTPS proxy that works, is down, refuses or is bypassed,
hosts-file entry. It exits 0 only if every verdict is the expected one.
Nothing leaves this machine. --list prints the scenarios without running them.

-o json and -o yaml print one DemoReport document (schema/demoreport.schema.json).` +
			cli.ExitCodesHelp("every scenario gave its expected verdict", "a scenario gave another verdict than expected"),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context()) },
	}
	f := cmd.Flags()
	cli.AddOutputFlag(cmd, &o.output, report.DocumentFormats)
	f.BoolVar(&o.list, "list", false, "print the scenarios, one line each, and exit")
	f.BoolVar(&o.noColor, "no-color", false, "never colour the output")
	f.StringSliceVar(&o.only, "scenario", nil, "run only these scenarios")
	_ = cmd.RegisterFlagCompletionFunc("scenario", completeScenarios)
	f.DurationVar(&o.timeout, "timeout", 2*time.Second, "deadline of each probe step")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "print each scenario's full probe report")
	return cmd
}

func (o *demoOptions) run(ctx context.Context) error {
	if err := cli.CheckOutput(o.output, report.DocumentFormats); err != nil {
		return err
	}
	if err := o.validate(); err != nil {
		return err
	}
	if o.list {
		return o.printList()
	}
	start := time.Now()
	l, err := lab.Start(ctx, lab.Options{})
	if err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("starting the lab: %w", err)}
	}
	defer l.Close()
	if err := checkScenarios(o.only, l.Scenarios); err != nil {
		return err
	}
	labStart := time.Since(start)
	results := demo.Run(ctx, l, demo.Options{Timeout: o.timeout, Only: o.only})
	if len(results) == 0 {
		return cli.UsageErrorf("no scenario matches %v", o.only)
	}
	pass := true
	for _, r := range results {
		pass = pass && r.Pass
	}
	if o.output != report.FormatText {
		err = cli.WriteDocument(o.streams.Out, o.output, report.KindDemoReport, newDemoReport(results, labStart))
	} else {
		err = o.text(o.streams.Out, results, labStart)
	}
	if err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: err}
	}
	if !pass {
		return cli.ExitWith(cli.ExitFailure)
	}
	return nil
}

func (o *demoOptions) text(w io.Writer, results []demo.Result, labStart time.Duration) error {
	s := report.Style{Color: cli.UseColor(w, o.noColor)}
	fmt.Fprintf(w, "%s lab started in %s (registry, token host, blob host, DNS on loopback)\n\n", s.Bold("pullpath demo:"), labStart.Round(time.Millisecond))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tLAYER\tCAUSE\tROLE\tOWNER\tENDPOINT\tTIME\tCHECK")
	passed := 0
	for _, r := range results {
		v := r.Verdict
		layer, cause := string(v.Layer), v.Cause
		if v.OK {
			layer, cause = "none", "ok"
			if len(r.Warnings) > 0 {
				cause = "ok, warns " + strings.Join(r.Warnings, ",")
			}
		}
		check := s.Green("✔ as expected")
		if r.Pass {
			passed++
		} else {
			check = s.Red("✘ " + strings.Join(r.Mismatches, "; "))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%dms\t%s\n", r.Scenario, layer, cause, report.Dash(string(v.Role)), report.Dash(string(v.Owner)), report.Dash(v.Endpoint), r.Milliseconds, check)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if o.verbose {
		for _, r := range results {
			if r.Report != nil {
				fmt.Fprintf(w, "\n=== %s: %s\n", r.Scenario, r.Description)
				if err := report.ProbeText(w, r.Report, s); err != nil {
					return err
				}
			}
		}
	}
	fmt.Fprintf(w, "\n%d/%d scenarios gave the expected verdict.\n", passed, len(results))
	if passed == len(results) {
		fmt.Fprintln(w, "Try one yourself: pullpath demo -v --scenario blob-refused   (the full trace of one fault)")
	}
	return nil
}
