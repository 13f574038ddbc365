package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/internal/report"
)

type explainOptions struct {
	streams Streams
	output  string
	noColor bool
	file    string
}

// NewCmdExplain builds `pullpath explain [FILE|-]`.
func NewCmdExplain(streams Streams) *cobra.Command {
	o := &explainOptions{streams: streams}
	cmd := &cobra.Command{
		Use:   "explain [FILE|-]",
		Short: "Explain image pull failure messages (events, describe output, runtime errors)",
		Long: `explain reads kubelet event text, a container's waiting message, kubectl describe pod
output, kubectl get events|pod -o json|yaml, or a runtime/client error (containerd, CRI-O,
docker, podman, skopeo, crane), from FILE or stdin, and prints for every pull failure the
failing layer, cause, role, owner, endpoint, a summary and next steps. Nothing is sent
anywhere: explain works offline.

-o json and -o yaml print one ExplainReport document whatever the number of findings
(schema/explainreport.schema.json).` + exitCodesHelp("no pull failure found", "a pull failure was diagnosed"),
		Example: `  kubectl describe pod app-7d9c | pullpath explain
  kubectl get events -n team -o json | pullpath explain -o json
  pullpath explain failed-pull.txt`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.file = args[0]
			}
			return o.run()
		},
	}
	addOutputFlag(cmd, &o.output, report.DocumentFormats)
	cmd.Flags().BoolVar(&o.noColor, "no-color", false, "never colour the text output")
	return cmd
}

func (o *explainOptions) run() error {
	if err := checkOutput(o.output, report.DocumentFormats); err != nil {
		return err
	}
	rep, perr := o.explain()
	findings := rep.Findings
	if perr != nil && len(findings) == 0 {
		return &ExitError{Code: ExitUsage, Err: perr}
	}
	var err error
	if o.output == report.FormatText {
		err = renderExplainText(o.streams.Out, findings, useColor(o.streams.Out, o.noColor))
	} else {
		err = report.WriteDocument(o.streams.Out, o.output, report.KindExplainReport, newExplainReport(rep.Input, findings))
	}
	if err != nil {
		return &ExitError{Code: ExitInternal, Err: fmt.Errorf("writing output: %w", err)}
	}
	if perr != nil {
		// Partial result printed; the input was still unreadable in part.
		return &ExitError{Code: ExitUsage, Err: perr}
	}
	if len(findings) > 0 {
		return exitCode(ExitFailure)
	}
	return nil
}

// explain streams the input file, or stdin for "" and "-", through
// explain.ExplainReader. An input it could not read to the end, or lines it
// could not consider, are an error: "no failure found" is only claimed over
// input read whole.
func (o *explainOptions) explain() (explain.Report, error) {
	var r io.Reader = o.streams.In
	name := "stdin"
	if o.file != "" && o.file != "-" {
		f, err := os.Open(o.file)
		if err != nil {
			return explain.Report{}, fmt.Errorf("reading input: %w", err)
		}
		defer f.Close()
		r, name = f, o.file
	}
	if r == nil {
		return explain.Report{}, errors.New("reading input: no input given (pass a FILE or pipe text to stdin)")
	}
	rep, err := explain.ExplainReader(r)
	if err != nil {
		return rep, fmt.Errorf("reading %s: %w", name, err)
	}
	if in := rep.Input; in.SkippedLines > 0 {
		return rep, fmt.Errorf("reading %s: read %d lines (%d bytes), skipped %d: a failure in the skipped lines would not be shown", name, in.Lines, in.Bytes, in.SkippedLines)
	}
	return rep, nil
}

const (
	ansiRed   = "\x1b[31m"
	ansiBold  = "\x1b[1m"
	ansiDim   = "\x1b[2m"
	ansiReset = "\x1b[0m"
)

// renderExplainText prints each finding: the verdict line, where it
// happened, the failing host, summary, evidence, other readings and next
// steps; then a one-line summary.
func renderExplainText(w io.Writer, fs []explain.Finding, color bool) error {
	paint := func(code, s string) string {
		if !color {
			return s
		}
		return code + s + ansiReset
	}
	var b strings.Builder
	if len(fs) == 0 {
		b.WriteString("No image pull failure found in the input.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	causes := make([]string, 0, len(fs))
	for i, f := range fs {
		v := f.Result.Verdict
		causes = append(causes, v.Cause)
		times := ""
		if f.Count > 1 {
			times = fmt.Sprintf(" (x%d)", f.Count)
		}
		fmt.Fprintf(&b, "%s %s%s\n", paint(ansiRed, "✘"), paint(ansiBold, v.Cause), times)
		fmt.Fprintf(&b, "  layer:     %-9s owner: %-9s role: %s\n", v.Layer, orDash(string(v.Owner)), orDash(string(v.Role)))
		if v.Endpoint != "" {
			fmt.Fprintf(&b, "  endpoint:  %s\n", v.Endpoint)
		}
		if f.Result.Host != "" {
			fmt.Fprintf(&b, "  host:      %s\n", f.Result.Host)
		}
		if f.Result.Image != "" {
			sandbox := ""
			if f.Result.Sandbox {
				sandbox = " (the node's sandbox image, pulled to create the pod sandbox)"
			}
			fmt.Fprintf(&b, "  image:     %s%s\n", f.Result.Image, sandbox)
		}
		if len(f.Result.Endpoints) > 0 {
			b.WriteString("  endpoints (in the order the runtime tried them):\n")
			for _, e := range f.Result.Endpoints {
				fmt.Fprintf(&b, "    - %s %s: %s\n", orDash(e.Endpoint), orDash(string(e.Role)), orDash(e.Cause))
			}
		}
		if f.Message.Object != "" {
			fmt.Fprintf(&b, "  object:    %s\n", f.Message.Object)
		}
		fmt.Fprintf(&b, "  summary:   %s\n", v.Summary)
		if v.Evidence != "" {
			fmt.Fprintf(&b, "  evidence:  %s\n", paint(ansiDim, v.Evidence))
		}
		if len(f.Result.Ambiguous) > 0 {
			b.WriteString("  also possible:\n")
			for _, a := range f.Result.Ambiguous {
				fmt.Fprintf(&b, "    - %s\n", a)
			}
		}
		if len(v.Next) > 0 {
			b.WriteString("  next:\n")
			for j, n := range v.Next {
				fmt.Fprintf(&b, "    %d. %s\n", j+1, n)
			}
		}
		if i < len(fs)-1 {
			b.WriteString("\n")
		}
	}
	noun := "failure"
	if len(fs) > 1 {
		noun = "failures"
	}
	fmt.Fprintf(&b, "\n%d image pull %s diagnosed: %s\n", len(fs), noun, strings.Join(causes, ", "))
	_, err := io.WriteString(w, b.String())
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
