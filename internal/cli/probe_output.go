package cli

import (
	"github.com/pullpath/pullpath/internal/probe"
	"github.com/pullpath/pullpath/internal/report"
)

// probeFormats are probe's -o values.
var probeFormats = report.DocumentFormats

// render prints rep in o.output.
func (o *probeOptions) render(rep *probe.Report) error {
	switch o.output {
	case report.FormatJSON, report.FormatYAML:
		return writeDocument(o.streams.Out, o.output, report.KindProbeReport, rep)
	}
	return report.ProbeText(o.streams.Out, rep, report.Style{Color: useColor(o.streams.Out, o.noColor)})
}
