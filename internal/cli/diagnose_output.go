package cli

import (
	"io"

	"github.com/pullpath/pullpath/internal/cluster"
	"github.com/pullpath/pullpath/internal/report"
)

// diagnoseFormats are diagnose's -o values.
var diagnoseFormats = report.DocumentFormats

// diagnoseRenderer picks diagnose's renderer for -o format.
func diagnoseRenderer(format string) (func(io.Writer, *cluster.Report) error, error) {
	if err := checkOutput(format, diagnoseFormats); err != nil {
		return nil, err
	}
	switch format {
	case report.FormatJSON, report.FormatYAML:
		return func(w io.Writer, r *cluster.Report) error {
			return report.WriteDocument(w, format, report.KindDiagnoseReport, r)
		}, nil
	}
	return cluster.WriteText, nil
}
