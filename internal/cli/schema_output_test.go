package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/labtest"
)

// TestSchemaProbeEveryScenario runs `pullpath probe -o json` against every
// scenario of the embedded lab and validates each ProbeReport; one
// scenario also through -o yaml.
func TestSchemaProbeEveryScenario(t *testing.T) {
	l := labtest.New(t, lab.Options{})
	for _, sc := range l.Scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			stdin, extra := "", []string{"-o", "json"}
			if sc.Username != "" {
				stdin, extra = sc.Password+"\n", append(extra, "--username", sc.Username, "--password-stdin")
			}
			code, out, stderr := runCLI(t, stdin, probeArgs(l, sc, extra...)...)
			if code != ExitOK && code != ExitFailure {
				t.Fatalf("probe %s exit %d, stderr %q", sc.Name, code, stderr)
			}
			validateDoc(t, "ProbeReport", out)
			if sc.Name == "healthy" {
				_, y, _ := runCLI(t, "", probeArgs(l, sc, "-o", "yaml")...)
				j, err := yaml.YAMLToJSON([]byte(y))
				if err != nil {
					t.Fatalf("probe -o yaml: %v", err)
				}
				validateDoc(t, "ProbeReport", string(j))
			}
		})
	}
}

// TestSchemaExplainCorpus validates explain's ExplainReport for every
// record of the real-message corpus and every input file of explain's
// testdata (events JSON, describe output, pod YAML).
func TestSchemaExplainCorpus(t *testing.T) {
	dir := filepath.Join("..", "explain", "testdata")
	f, err := os.Open(filepath.Join(dir, "corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		var rec struct {
			Msg string `json:"msg"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("corpus line %d: %v", n+1, err)
		}
		n++
		code, out, stderr := runExplain(t, rec.Msg, "-o", "json")
		if code != ExitOK && code != ExitFailure {
			t.Errorf("corpus line %d: explain exit %d, stderr %q", n, code, stderr)
			continue
		}
		validateDoc(t, "ExplainReport", out)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Errorf("corpus has %d records, want the whole corpus (over 100)", n)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.*"))
	for _, p := range files {
		if strings.HasSuffix(p, ".jsonl") {
			continue
		}
		code, out, stderr := runExplain(t, "", "-o", "json", p)
		if code != ExitOK && code != ExitFailure {
			t.Errorf("explain %s exit %d, stderr %q", p, code, stderr)
			continue
		}
		validateDoc(t, "ExplainReport", out)
	}
}
