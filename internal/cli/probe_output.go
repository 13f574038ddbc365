package cli

import (
	"github.com/spf13/cobra"

	"github.com/pullpath/pullpath/internal/probe"
	"github.com/pullpath/pullpath/internal/report"
)

// probeFormats are probe's -o values.
var probeFormats = report.AllFormats

// render prints rep in o.output.
func (o *probeOptions) render(rep *probe.Report) error {
	switch o.output {
	case report.FormatJSON, report.FormatYAML:
		return writeDocument(o.streams.Out, o.output, report.KindProbeReport, rep)
	case report.FormatHTML:
		return report.ProbeHTML(o.streams.Out, rep)
	}
	return report.ProbeText(o.streams.Out, rep, report.Style{Color: useColor(o.streams.Out, o.noColor)})
}

// registerProbeCompletions completes probe's enumerated flags.
func registerProbeCompletions(cmd *cobra.Command) {
	_ = cmd.RegisterFlagCompletionFunc("blobs", cobra.FixedCompletions([]cobra.Completion{
		cobra.CompletionWithDesc(probe.BlobsFull, "download and verify every blob"),
		cobra.CompletionWithDesc(probe.BlobsHead, "HEAD every blob"),
		cobra.CompletionWithDesc(probe.BlobsNone, "stop after the manifest"),
	}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("platform", cobra.FixedCompletions([]cobra.Completion{
		"linux/amd64", "linux/arm64", "linux/arm/v7", "windows/amd64",
	}, cobra.ShellCompDirectiveNoFileComp))
}
