package explain

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/verdict"
)

// record is one corpus entry: a message and its expected verdict.
type record struct {
	Msg       string `json:"msg"`
	Source    string `json:"source"`
	Synthetic bool   `json:"synthetic,omitempty"`
	Layer     string `json:"layer"`
	Cause     string `json:"cause"`
	Role      string `json:"role"`
	Host      string `json:"host"`
}

func loadCorpus(tb testing.TB) []record {
	tb.Helper()
	f, err := os.Open(filepath.Join("testdata", "corpus.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "//") {
			continue
		}
		var r record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			tb.Fatalf("corpus.jsonl line %d: %v", n, err)
		}
		if r.Msg == "" || r.Source == "" || r.Cause == "" {
			tb.Fatalf("corpus.jsonl line %d: msg, source and cause are required", n)
		}
		if verdict.LayerOf(r.Cause) != verdict.Layer(r.Layer) {
			tb.Fatalf("corpus.jsonl line %d: cause %q is not of layer %q", n, r.Cause, r.Layer)
		}
		if _, ok := verdict.Lookup(r.Cause); !ok {
			tb.Fatalf("corpus.jsonl line %d: cause %q is not in the catalogue", n, r.Cause)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// TestCorpus classifies every corpus record and asserts layer, cause, role
// and host. It logs the accuracy per layer, for real and synthetic
// records apart, and fails on any wrong record.
func TestCorpus(t *testing.T) {
	recs := loadCorpus(t)
	type tally struct{ real, realOK, synth, synthOK int }
	byLayer := map[string]*tally{}
	wrong := 0
	for i, r := range recs {
		res := Classify(r.Msg)
		g := record{Layer: string(res.Verdict.Layer), Cause: res.Verdict.Cause, Role: string(res.Verdict.Role), Host: res.Host}
		ok := g.Layer == r.Layer && g.Cause == r.Cause && g.Role == r.Role && g.Host == r.Host
		tl := byLayer[r.Layer]
		if tl == nil {
			tl = &tally{}
			byLayer[r.Layer] = tl
		}
		if r.Synthetic {
			tl.synth++
		} else {
			tl.real++
		}
		if ok {
			if r.Synthetic {
				tl.synthOK++
			} else {
				tl.realOK++
			}
			continue
		}
		wrong++
		t.Errorf("record %d (%s)\nClassify(%q)\n = layer %q cause %q role %q host %q\nwant layer %q cause %q role %q host %q",
			i+1, r.Source, r.Msg, g.Layer, g.Cause, g.Role, g.Host, r.Layer, r.Cause, r.Role, r.Host)
	}
	layers := make([]string, 0, len(byLayer))
	for l := range byLayer {
		layers = append(layers, l)
	}
	sort.Slice(layers, func(i, j int) bool {
		return verdict.Layer(layers[i]).Rank() < verdict.Layer(layers[j]).Rank() || verdict.Layer(layers[i]).Rank() == verdict.Layer(layers[j]).Rank() && layers[i] < layers[j]
	})
	var b strings.Builder
	fmt.Fprintf(&b, "corpus: %d records, %d wrong\n%-9s %6s %8s %6s %8s\n", len(recs), wrong, "layer", "real", "accuracy", "synth", "accuracy")
	pct := func(ok, n int) string {
		if n == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f%%", 100*float64(ok)/float64(n))
	}
	var tr, trOK, ts, tsOK int
	for _, l := range layers {
		tl := byLayer[l]
		fmt.Fprintf(&b, "%-9s %6d %8s %6d %8s\n", l, tl.real, pct(tl.realOK, tl.real), tl.synth, pct(tl.synthOK, tl.synth))
		tr, trOK, ts, tsOK = tr+tl.real, trOK+tl.realOK, ts+tl.synth, tsOK+tl.synthOK
	}
	fmt.Fprintf(&b, "%-9s %6d %8s %6d %8s\n", "all", tr, pct(trOK, tr), ts, pct(tsOK, ts))
	t.Log("\n" + b.String())
}

// TestCorpusCitesSources checks every real record names a public source
// and every synthetic one says so.
func TestCorpusCitesSources(t *testing.T) {
	for i, r := range loadCorpus(t) {
		if r.Synthetic {
			if !strings.HasPrefix(r.Source, "synthetic") {
				t.Errorf("record %d is synthetic but its source %q does not say so", i+1, r.Source)
			}
			continue
		}
		if !strings.HasPrefix(r.Source, "https://") && !strings.HasPrefix(r.Source, "lab:") {
			t.Errorf("record %d source %q is neither a public URL nor a lab capture", i+1, r.Source)
		}
	}
}

// BenchmarkClassify classifies the whole corpus per iteration and reports
// messages per second.
func BenchmarkClassify(b *testing.B) {
	recs := loadCorpus(b)
	bytes := 0
	for _, r := range recs {
		bytes += len(r.Msg)
	}
	b.SetBytes(int64(bytes))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, r := range recs {
			_ = Classify(r.Msg)
		}
	}
	b.ReportMetric(float64(b.N*len(recs))/b.Elapsed().Seconds(), "msgs/s")
}
