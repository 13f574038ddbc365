package explain

import (
	"strings"
	"testing"
)

// TestPrefilterKeepsCorpus holds the stream's prefilter to the classifier:
// every message of the corpus that classifies as a failure passes mayFail.
func TestPrefilterKeepsCorpus(t *testing.T) {
	for _, r := range loadCorpus(t) {
		if Classify(r.Msg).Failed() && !mayFail(r.Msg) {
			t.Errorf("mayFail(%q) = false, but it classifies as %s", r.Msg, Classify(r.Msg).Verdict.Cause)
		}
	}
	for _, s := range []string{"level=info msg=\"StartContainer returns successfully\"", "ok"} {
		if mayFail(s) {
			t.Errorf("mayFail(%q) = true, want false", s)
		}
	}
	for _, s := range []string{"FAILED", "x509: certificate signed by unknown authority", "Err", "", " ", strings.Repeat("a", 100) + "EOF"} {
		if !mayFail(s) {
			t.Errorf("mayFail(%q) = false, want true", s)
		}
	}
}

// FuzzPrefilter checks that a message mayFail rejects never classifies as
// a failure.
func FuzzPrefilter(f *testing.F) {
	for _, r := range loadCorpus(f) {
		f.Add(r.Msg)
	}
	for _, l := range quietLines {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		if !mayFail(msg) {
			if r := Classify(msg); r.Failed() {
				t.Errorf("mayFail(%q) = false, but Classify gives %s", msg, r.Verdict.Cause)
			}
		}
	})
}
