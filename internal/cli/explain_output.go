package cli

import (
	"time"

	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/internal/verdict"
)

// explainReport is the ExplainReport document (docs/contract.md; schema/
// explainreport.schema.json): one object whatever the number of findings.
type explainReport struct {
	Input    explainInput     `json:"input"`
	Findings []explainFinding `json:"findings"`
}

// explainInput is what was read.
type explainInput struct {
	Lines        int64 `json:"lines"`
	Bytes        int64 `json:"bytes"`
	SkippedLines int64 `json:"skipped_lines"`
}

// explainFinding is one pull failure found in the input. The verdict
// fields live only under verdict, the shape probe and diagnose use.
type explainFinding struct {
	Verdict   verdict.Verdict `json:"verdict"`
	Count     int             `json:"count"`
	Image     string          `json:"image"`
	Host      string          `json:"host"`
	URL       string          `json:"url,omitempty"`
	Runtime   string          `json:"runtime"`
	FirstLine int             `json:"first_line,omitempty"`
	Ambiguous []string        `json:"ambiguous"`
	// Sandbox marks the pull of the node's sandbox (pause) image, which
	// Image then names; Endpoints lists every endpoint the text names, in
	// the runtime's plan order, when it names several.
	Sandbox   bool               `json:"sandbox,omitempty"`
	Endpoints []explain.Endpoint `json:"endpoints,omitempty"`
	Source    string             `json:"source"`
	Reason    string             `json:"reason,omitempty"`
	Object    string             `json:"object,omitempty"`
	Message   string             `json:"message"`
	First     *time.Time         `json:"first,omitempty"`
	Last      *time.Time         `json:"last,omitempty"`
}

// newExplainReport builds the document for findings read from input, with
// what explain's stream read and skipped.
func newExplainReport(in explain.Input, fs []explain.Finding) *explainReport {
	r := &explainReport{Input: explainInput{Lines: in.Lines, Bytes: in.Bytes, SkippedLines: in.SkippedLines}, Findings: make([]explainFinding, 0, len(fs))}
	for _, f := range fs {
		j := explainFinding{
			Verdict: f.Result.Verdict, Count: f.Count,
			Host: f.Result.Host, URL: f.Result.URL, Image: f.Result.Image, Runtime: f.Result.Runtime,
			Ambiguous: f.Result.Ambiguous, Sandbox: f.Result.Sandbox, Endpoints: f.Result.Endpoints,
			Source: f.Message.Source, Reason: f.Message.Reason, Object: f.Message.Object,
			Message: explain.Redact(f.Message.Text), FirstLine: int(f.Message.Line),
		}
		if !f.Message.First.IsZero() {
			t := f.Message.First
			j.First = &t
		}
		if !f.Message.Last.IsZero() {
			t := f.Message.Last
			j.Last = &t
		}
		r.Findings = append(r.Findings, j)
	}
	return r
}
