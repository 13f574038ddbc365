package cli

import (
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pullpath/pullpath/internal/report"
)

// checkOutput returns the usage error every command gives for an unknown
// -o value: unknown output format "x" (valid: text, json, yaml, html).
func checkOutput(format string, valid []string) error {
	if err := report.CheckFormatIn(format, valid); err != nil {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	return nil
}

// addOutputFlag binds -o/--output to p with the valid formats in its help
// and in its completion.
func addOutputFlag(cmd *cobra.Command, p *string, valid []string) {
	cmd.Flags().StringVarP(p, "output", "o", report.FormatText, "output format: "+strings.Join(valid, ", "))
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(valid, cobra.ShellCompDirectiveNoFileComp))
}

// writeDocument writes v as one document of kind (json or yaml).
func writeDocument(w io.Writer, format, kind string, v any) error {
	if err := report.WriteDocument(w, format, kind, v); err != nil {
		return &ExitError{Code: ExitInternal, Err: err}
	}
	return nil
}

// useColor reports whether text for w may be coloured: only on a terminal,
// never with --no-color, never when NO_COLOR is set to anything non-empty
// (no-color.org).
func useColor(w io.Writer, noColor bool) bool {
	if noColor || os.Getenv("NO_COLOR") != "" {
		return false
	}
	return isTerminal(w)
}

// exitCodesHelp is the exit-code paragraph of every command's help
// (docs/contract.md, exit codes), with the meaning of 0 and 1 for the command.
func exitCodesHelp(ok, failure string) string {
	return `

Exit status:
  0    ` + ok + `
  1    ` + failure + `
  2    usage error or unreadable input
  3    the tool itself could not run
  130  interrupted (Ctrl-C)`
}

// CheckOutput, AddOutputFlag, WriteDocument, UseColor and ExitCodesHelp are
// the output conventions above, for the commands outside this package.
func CheckOutput(format string, valid []string) error { return checkOutput(format, valid) }

// AddOutputFlag binds -o/--output (see addOutputFlag).
func AddOutputFlag(cmd *cobra.Command, p *string, valid []string) { addOutputFlag(cmd, p, valid) }

// WriteDocument writes v as one document of kind (see writeDocument).
func WriteDocument(w io.Writer, format, kind string, v any) error {
	return writeDocument(w, format, kind, v)
}

// UseColor reports whether text for w may be coloured (see useColor).
func UseColor(w io.Writer, noColor bool) bool { return useColor(w, noColor) }

// ExitCodesHelp is the exit-code paragraph of a command's help.
func ExitCodesHelp(ok, failure string) string { return exitCodesHelp(ok, failure) }
