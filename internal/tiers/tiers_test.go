package tiers

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRequire runs a tier test as a subprocess in each case: not
// requested (skips, says so), requested with a prerequisite missing
// (fails), requested with everything there (runs), and checks the exit
// code and the tier line of each.
func TestRequire(t *testing.T) {
	if os.Getenv("PP_TIERS_HELPER") == "1" {
		present := File(os.Args[0])
		missing := File(filepath.Join(t.TempDir(), "not-there"))
		tier := Tier{Name: "demo", Env: "PP_TIERS_DEMO", OptIn: true, Prereqs: []Prereq{present}, Install: "nothing to install"}
		if os.Getenv("PP_TIERS_MISSING") == "1" {
			Require(t, tier, missing)
		} else {
			Require(t, tier)
		}
		return
	}
	for _, tt := range []struct {
		name, env, missing string
		wantFail           bool
		wantLine           string
	}{
		{"not requested", "", "1", false, "tier demo: TestRequire skipped: PP_TIERS_DEMO is not set"},
		{"requested, prerequisite missing", "1", "1", true, "tier demo: TestRequire FAILED: the tier is requested (PP_TIERS_DEMO=1) but needs"},
		{"requested, all there", "1", "", false, "tier demo: TestRequire ran and passed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run", "^TestRequire$", "-test.v")
			cmd.Env = append(os.Environ(), "PP_TIERS_HELPER=1", "PP_TIERS_DEMO="+tt.env, "PP_TIERS_MISSING="+tt.missing)
			out, err := cmd.CombinedOutput()
			if (err != nil) != tt.wantFail {
				t.Errorf("exit %v, want failure %v\n%s", err, tt.wantFail, out)
			}
			if !strings.Contains(string(out), tt.wantLine) {
				t.Errorf("no %q in\n%s", tt.wantLine, out)
			}
		})
	}
}

// TestFilter feeds Filter a `go test -json` stream as cmd/test2json writes
// it, with a tier line, a passing test's noise and a failing test, and
// checks what it keeps.
func TestFilter(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:9: tier nodelab: TestA runs\n"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:10: chatter\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:3: the reason it broke\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestB"}`,
		`{"Action":"output","Package":"p","Output":"FAIL\tp\t1.0s\n"}`,
		`{"Action":"fail","Package":"p"}`,
	}, "\n")
	var out bytes.Buffer
	failed, err := Filter(strings.NewReader(in), &out)
	if err != nil || !failed {
		t.Fatalf("Filter: failed %v err %v", failed, err)
	}
	got := out.String()
	for _, want := range []string{"p tier nodelab: TestA runs\n", "the reason it broke", "FAIL\tp\t1.0s"} {
		if !strings.Contains(got, want) {
			t.Errorf("the filtered output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "chatter") {
		t.Errorf("a passing test's output was kept:\n%s", got)
	}
}
