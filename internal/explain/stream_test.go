package explain

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// lateFailure is containerd's own log line for a failed pull (the CRI
// plugin's `PullImage ... failed` error), as journalctl -u containerd
// prints it.
const lateFailure = `Dec 01 10:00:00 node-1 containerd[812]: time="2026-12-01T10:00:00Z" level=error msg="PullImage \"registry.example/team/app:1.2\" failed" error="failed to pull and unpack image \"registry.example/team/app:1.2\": failed to resolve reference \"registry.example/team/app:1.2\": failed to do request: Head \"https://registry.example/v2/team/app/manifests/1.2\": dial tcp: lookup registry.example on 10.0.0.10:53: no such host"`

// quietLines are ordinary containerd log lines that report no pull failure.
var quietLines = []string{
	`Dec 01 09:59:59 node-1 containerd[812]: time="2026-12-01T09:59:59Z" level=info msg="ImageCreate event name:\"sha256:4f2e0a\" labels:{key:\"io.cri-containerd.image\" value:\"managed\"}"`,
	`Dec 01 09:59:59 node-1 containerd[812]: time="2026-12-01T09:59:59Z" level=info msg="StartContainer for \"9c3f\" returns successfully"`,
	`Dec 01 09:59:59 node-1 containerd[812]: time="2026-12-01T09:59:59Z" level=info msg="shim disconnected" id=9c3f namespace=k8s.io`,
	`Dec 01 09:59:59 node-1 containerd[812]: time="2026-12-01T09:59:59Z" level=info msg="PullImage \"registry.example/team/web:2.0\" returns image reference \"sha256:77aa\""`,
}

// logReader generates a containerd journal of n quiet lines, with the
// failure line after line at (0: none), without holding it in memory.
type logReader struct {
	n, at, i int
	buf      []byte
}

func (r *logReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.i >= r.n {
			return 0, io.EOF
		}
		r.i++
		if r.i == r.at {
			r.buf = append(r.buf[:0], lateFailure...)
		} else {
			r.buf = append(r.buf[:0], quietLines[r.i%len(quietLines)]...)
		}
		r.buf = append(r.buf, '\n')
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

func TestExplainFindsLateFailure(t *testing.T) {
	tests := []struct {
		name  string
		lines int
	}{
		{"past 100,000 lines", 150000},
		{"past 32 MiB", 300000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := io.ReadAll(&logReader{n: tt.lines, at: tt.lines - 1})
			if err != nil {
				t.Fatal(err)
			}
			fs, err := Explain(in)
			if err != nil {
				t.Fatalf("Explain(%d lines, %d bytes) error: %v", tt.lines, len(in), err)
			}
			if len(fs) != 1 || fs[0].Result.Verdict.Cause != "dns.nxdomain" {
				t.Fatalf("Explain(%d lines, %d bytes) = %d findings %v, want one dns.nxdomain", tt.lines, len(in), len(fs), causesOf(fs))
			}
		})
	}
}

func causesOf(fs []Finding) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, f.Result.Verdict.Cause)
	}
	return out
}

func TestExplainReaderCounts(t *testing.T) {
	const n = 120000
	rep, err := ExplainReader(&logReader{n: n, at: n})
	if err != nil {
		t.Fatalf("ExplainReader error: %v", err)
	}
	if rep.Input.Lines != n || rep.Input.SkippedLines != 0 || rep.Input.Bytes == 0 {
		t.Errorf("ExplainReader input = %+v, want %d lines, none skipped", rep.Input, n)
	}
	if len(rep.Findings) != 1 || rep.Findings[0].Message.Line != n {
		t.Fatalf("ExplainReader findings = %v, want one on line %d", causesOf(rep.Findings), n)
	}
}

func TestExplainReaderLongLine(t *testing.T) {
	// A failure after a 1 MiB line with no newline in it, and one at the
	// end of a 1 MiB line: both are read.
	junk := strings.Repeat("x", 1<<20)
	in := junk + "\n" + lateFailure + "\n" + junk + " " + strings.ReplaceAll(lateFailure, "registry.example", "other.example") + "\n"
	rep, err := ExplainReader(strings.NewReader(in))
	if err != nil {
		t.Fatalf("ExplainReader error: %v", err)
	}
	if got := causesOf(rep.Findings); len(got) != 2 {
		t.Errorf("ExplainReader(long lines) causes = %v, want two dns.nxdomain", got)
	}
	if rep.Input.Lines != 3 || rep.Input.SplitLines != 2 {
		t.Errorf("ExplainReader(long lines) input = %+v, want 3 lines, 2 split", rep.Input)
	}
}

func TestExplainReaderJSONLines(t *testing.T) {
	// journalctl -u containerd -o json: one object per line, the text in
	// MESSAGE.
	rec := func(msg string) string {
		return fmt.Sprintf(`{"_SYSTEMD_UNIT":"containerd.service","MESSAGE":%q,"PRIORITY":"6"}`, msg) + "\n"
	}
	in := rec(quietLines[0]) + rec(quietLines[1]) + rec(lateFailure)
	rep, err := ExplainReader(strings.NewReader(in))
	if err != nil {
		t.Fatalf("ExplainReader(JSON lines) error: %v", err)
	}
	if got := causesOf(rep.Findings); len(got) != 1 || got[0] != "dns.nxdomain" {
		t.Errorf("ExplainReader(JSON lines) causes = %v, want [dns.nxdomain]", got)
	}
	if rep.Input.Lines != 3 {
		t.Errorf("ExplainReader(JSON lines) lines = %d, want 3", rep.Input.Lines)
	}
}

type failingReader struct {
	r   io.Reader
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, f.err
	}
	return n, err
}

func TestExplainReaderReadError(t *testing.T) {
	boom := errors.New("input/output error")
	rep, err := ExplainReader(&failingReader{r: &logReader{n: 1000}, err: boom})
	if !errors.Is(err, boom) {
		t.Fatalf("ExplainReader error = %v, want %v", err, boom)
	}
	if rep.Input.SkippedLines == 0 || rep.Input.Lines != 1000 {
		t.Errorf("ExplainReader(read error) input = %+v, want 1000 lines and skipped lines counted", rep.Input)
	}
}

func TestExplainReaderStructured(t *testing.T) {
	// Structured input is still read as its format.
	rep, err := ExplainReader(bytes.NewReader(readFixture(t, "events-ratelimit.json")))
	if err != nil {
		t.Fatalf("ExplainReader(events json) error: %v", err)
	}
	if len(rep.Findings) == 0 || rep.Input.Bytes == 0 || rep.Input.Lines == 0 {
		t.Errorf("ExplainReader(events json) = %d findings, input %+v", len(rep.Findings), rep.Input)
	}
	for _, in := range []string{"", "   \n", "\x00\x01\x02\x03\x00"} {
		if _, err := ExplainReader(strings.NewReader(in)); !errors.Is(err, ErrUnrecognized) {
			t.Errorf("ExplainReader(%q) error = %v, want ErrUnrecognized", in, err)
		}
	}
}

// BenchmarkExplainReader streams a generated containerd journal of 200 MB
// per iteration and reports MB/s,
// allocations and the peak heap in use, sampled every 64 MiB of input.
//
//	go test ./internal/explain -run '^$' -bench ExplainReader -benchtime 1x -cpu 1
func BenchmarkExplainReader(b *testing.B) {
	lineLen := 0
	for _, l := range quietLines {
		lineLen += len(l) + 1
	}
	lines := 200 << 20 / (lineLen / len(quietLines))
	b.ReportAllocs()
	var peak uint64
	var total int64
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		r := &sampling{r: &logReader{n: lines, at: lines - 10}, peak: &peak}
		rep, err := ExplainReader(r)
		if err != nil || len(rep.Findings) != 1 {
			b.Fatalf("ExplainReader = %d findings, %v", len(rep.Findings), err)
		}
		total += rep.Input.Bytes
	}
	cpu := cpuTime() - cpu0
	b.SetBytes(total / int64(b.N))
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(total)/1e6/cpu.Seconds(), "MB/cpu-s")
}

// cpuTime is the user and system CPU time of this process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sampling samples the heap in use every 64 MiB read through it.
type sampling struct {
	r    io.Reader
	n    int64
	peak *uint64
}

func (s *sampling) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if s.n/(64<<20) != (s.n+int64(n))/(64<<20) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse > *s.peak {
			*s.peak = ms.HeapInuse
		}
	}
	s.n += int64(n)
	return n, err
}
