package cli

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/verdict"
)

var update = flag.Bool("update", false, "rewrite generated files (docs/causes.md)")

var causesDoc = filepath.Join("..", "..", "docs", "causes.md")

// TestCausesDoc fails when docs/causes.md drifts from the catalogue;
// `go test ./internal/cli -run TestCausesDoc -update` rewrites it.
func TestCausesDoc(t *testing.T) {
	want := causesMarkdown(catalogueList())
	if *update {
		if err := os.WriteFile(causesDoc, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(causesDoc)
	if err != nil {
		t.Fatalf("reading %s: %v (generate it with -update)", causesDoc, err)
	}
	if string(got) != want {
		t.Errorf("%s is out of date with internal/verdict's catalogue: run `go test ./internal/cli -run TestCausesDoc -update`", causesDoc)
	}
	for _, c := range append(verdict.Causes(), verdict.Warnings()...) {
		if !strings.Contains(string(got), "| `"+c.Code+"` |") {
			t.Errorf("%s lacks cause %s", causesDoc, c.Code)
		}
	}
}

func TestCausesCommand(t *testing.T) {
	code, out, stderr := runCLI(t, "", "causes", "-o", "json")
	if code != ExitOK {
		t.Fatalf("causes exit %d, stderr %q", code, stderr)
	}
	validateDoc(t, "CauseList", out)
	var cl causeList
	if err := json.Unmarshal([]byte(out), &cl); err != nil {
		t.Fatal(err)
	}
	if len(cl.Causes) != len(verdict.Causes()) {
		t.Errorf("causes -o json lists %d causes, the catalogue holds %d", len(cl.Causes), len(verdict.Causes()))
	}
	if len(cl.Warnings) != len(verdict.Warnings()) || len(cl.Warnings) == 0 {
		t.Errorf("causes -o json lists %d warnings, the catalogue holds %d", len(cl.Warnings), len(verdict.Warnings()))
	}
	layers := map[verdict.Layer]verdict.Owner{}
	for _, l := range cl.Layers {
		layers[l.Layer] = l.DefaultOwner
	}
	for _, l := range append(verdict.Layers, verdict.LayerNone) {
		if o, ok := layers[l]; !ok || o != verdict.DefaultOwner(l) {
			t.Errorf("causes -o json layer %s: owner %q listed %v, want %q", l, o, ok, verdict.DefaultOwner(l))
		}
	}
	if last := cl.Causes[len(cl.Causes)-1]; last.Layer != verdict.LayerUnknown {
		t.Errorf("last cause %s is of layer %s, want the unknown layer last", last.Code, last.Layer)
	}
	for _, tt := range []struct {
		args      []string
		code      int
		want, not string
	}{
		{[]string{"causes", "dns.nxdomain"}, ExitOK, "NXDOMAIN", "route.timeout"},
		{[]string{"causes", "dns.hosts-entry"}, ExitOK, "/etc/hosts", "dns.nxdomain"},
		{[]string{"causes", "tls"}, ExitOK, "tls.expiring", "dns.hosts-entry"},
		{[]string{"causes", "route"}, ExitOK, "route.timeout", "dns.nxdomain"},
		{[]string{"causes", "nope"}, ExitUsage, "", "nope"},
		{[]string{"causes", "-o", "html"}, ExitUsage, "", "layer"},
	} {
		code, out, stderr := runCLI(t, "", tt.args...)
		if code != tt.code || !strings.Contains(out, tt.want) || (tt.not != "" && strings.Contains(out, tt.not)) {
			t.Errorf("pullpath %v: exit %d (want %d), output %.200q lacks %q or holds %q; stderr %q", tt.args, code, tt.code, out, tt.want, tt.not, stderr)
		}
	}
}
