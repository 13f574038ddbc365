package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestExplainLateFailureInLargeLog is a journal of 40 MiB and 300,000
// lines whose one pull failure is its last line: explain finds it.
func TestExplainLateFailureInLargeLog(t *testing.T) {
	quiet := `Dec 01 09:59:59 node-1 containerd[812]: time="2026-12-01T09:59:59Z" level=info msg="StartContainer for \"9c3f\" returns successfully"` + "\n"
	var in strings.Builder
	for in.Len() < 40<<20 {
		in.WriteString(quiet)
	}
	in.WriteString(dnsEvent + "\n")
	code, out, stderr := runExplain(t, in.String())
	if code != ExitFailure || !strings.Contains(out, "dns.nxdomain") {
		t.Errorf("explain(40 MiB log) exit = %d, want %d with dns.nxdomain; stdout %q, stderr %q", code, ExitFailure, out, stderr)
	}
}

type brokenReader struct{ r io.Reader }

func (b brokenReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		return n, errors.New("input/output error")
	}
	return n, err
}

// TestExplainUnreadTailIsNotNoFailure: when the input breaks off, explain
// does not exit 0 with "no failure found".
func TestExplainUnreadTailIsNotNoFailure(t *testing.T) {
	var out, errb bytes.Buffer
	in := brokenReader{strings.NewReader(strings.Repeat("level=info msg=\"all good\"\n", 1000))}
	code := Run(context.Background(), Streams{In: in, Out: &out, Err: &errb}, []string{"pullpath", "explain"})
	if code != ExitUsage || !strings.Contains(errb.String(), "input/output error") {
		t.Errorf("explain(broken input) exit = %d, want %d naming the read error; stderr %q", code, ExitUsage, errb.String())
	}
}
