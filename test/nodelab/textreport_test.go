package nodelab_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// textWant is what a human must read in diagnose's default text output.
type textWant struct {
	// verdict holds the substrings of the "Verdict:" line (layer, cause,
	// endpoint, owner).
	verdict []string
	landed  []string // the "Landed on:" line names one of these
	trigger string   // the "Trigger:" line's kind
	// pools: each pool's row in the pool table, eligible and status.
	pools map[string][2]string
	// nodes: each named node's row in the node table must hold these
	// fields (its verdict, owner and probe status).
	nodes map[string][]string
	// cacheOnly lists the nodes under "Replicas running only because
	// their node holds the image:"; none means the section is absent.
	cacheOnly []string
	// summary holds substrings of the summary paragraph.
	summary []string
}

// diagnoseText runs diagnose --probe with the default text output and
// checks the lines a human reads. It runs before the JSON diagnosis of the
// same state, with the same probes.
func (w *world) diagnoseText(ctx context.Context, what string, x textWant) {
	w.t.Helper()
	phase := time.Now()
	out, stderr, code := w.runPullpath(ctx, "diagnose", "deployment/app", "-n", namespace, "--probe", "--probe-image", probeImage, "--probe-deadline", "60s")
	w.t.Logf("%s (text): diagnose --probe exit %d after %v\n%s\n%s", what, code, time.Since(phase).Round(time.Millisecond), out, stderr)
	if code != 1 {
		w.t.Errorf("%s (text): exit %d, want 1 (a pull failure was diagnosed)", what, code)
	}
	checkText(w.t.Errorf, what, out, x)
}

// checkText reports through errorf every line of x that the text report
// out lacks.
func checkText(errorf func(string, ...any), what, out string, x textWant) {
	lines := strings.Split(out, "\n")
	line := func(prefix string) string {
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return l
			}
		}
		errorf("%s (text): no line starting %q", what, prefix)
		return ""
	}
	v := line("Verdict:")
	for _, s := range x.verdict {
		if !strings.Contains(v, s) {
			errorf("%s (text): verdict line %q lacks %q", what, v, s)
		}
	}
	if l := line("Landed on:"); !slices.ContainsFunc(x.landed, func(n string) bool { return strings.Contains(l, n) }) {
		errorf("%s (text): %q, want one of %v", what, l, x.landed)
	}
	if l := line("Trigger:"); x.trigger != "" && !strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(l, "Trigger:")), x.trigger+" at ") {
		errorf("%s (text): %q, want trigger %s", what, l, x.trigger)
	}
	for _, s := range x.summary {
		if !strings.Contains(out, s) {
			errorf("%s (text): the report lacks %q", what, s)
		}
	}
	// The tables: rows are found by their first field, cells by their
	// whitespace-separated fields (the tabwriter's padding is not part of
	// the contract).
	section := func(title string) [][]string {
		var rows [][]string
		in := false
		for _, l := range lines {
			switch {
			case l == title:
				in = true
			case in && !strings.HasPrefix(l, "  "):
				return rows
			case in:
				rows = append(rows, strings.Fields(l))
			}
		}
		if !in {
			errorf("%s (text): no %q section", what, title)
		}
		return rows
	}
	row := func(rows [][]string, first string) []string {
		for _, r := range rows {
			if len(r) > 0 && r[0] == first {
				return r
			}
		}
		return nil
	}
	pools := section("Pools:")
	for pool, want := range x.pools {
		r := row(pools, pool)
		// POOL ELIGIBLE NODES CACHED OS/ARCH STATUS WHY
		if len(r) < 6 || r[1] != want[0] || !slices.Contains(r[2:], want[1]) {
			errorf("%s (text): pool row %v, want %s eligible %s status %s", what, r, pool, want[0], want[1])
		}
	}
	nodes := section("Nodes:")
	for node, cells := range x.nodes {
		r := row(nodes, node)
		for _, c := range cells {
			if !slices.Contains(r, c) {
				errorf("%s (text): node row %v lacks %q", what, r, c)
			}
		}
	}
	const cacheTitle = "Replicas running only because their node holds the image:"
	if len(x.cacheOnly) == 0 {
		if slices.Contains(lines, cacheTitle) {
			errorf("%s (text): %q on a healthy pool", what, cacheTitle)
		}
		return
	}
	cached := section(cacheTitle)
	for _, node := range x.cacheOnly {
		if !slices.ContainsFunc(cached, func(r []string) bool {
			// "POD on NODE (pool POOL): BASIS"; the basis may name other nodes.
			return len(r) > 4 && r[1] == "on" && r[2] == node && r[3] == "(pool" && r[4] == "poola):"
		}) {
			errorf("%s (text): no cache-only replica on %s (pool poola) in %v", what, node, cached)
		}
	}
}

// scaleUpText is what the first diagnosis must show: the scale-up onto pool
// B without a route, pool A fine by its probe, the forgotten pool C broken.
func scaleUpText() textWant {
	return textWant{
		verdict: []string{"✘ route", "(route.unreachable)", "registry.lab.test", "owner network"},
		landed:  []string{poolB0.Name}, trigger: "scale-up",
		pools: map[string][2]string{"system": {"no", "ineligible"}, "poola": {"yes", "fine"}, "poolb": {"yes", "broken"}, "poolc": {"yes", "broken"}},
		nodes: map[string][]string{poolB0.Name: {"*", "route.unreachable", "network", "done"}, poolC0.Name: {"route.unreachable", "network", "done"}},
	}
}

// lieText is what the diagnosis of the lie must show: pool A broken by the
// probe on its new node, its two old replicas running only because cached,
// pool D's probe stopped by its sandbox image.
func lieText() textWant {
	return textWant{
		verdict: []string{"✘ route", "(route.unreachable)", "registry.lab.test", "owner network"},
		landed:  []string{poolB0.Name, poolA2.Name}, trigger: "scale-up",
		pools: map[string][2]string{"system": {"no", "ineligible"}, "poola": {"yes", "broken"}, "poolb": {"yes", "broken"}, "poolc": {"yes", "broken"}},
		nodes: map[string][]string{poolA2.Name: {"route.unreachable", "network", "done"}, poolB0.Name: {"route.unreachable", "network", "done"},
			poolD0.Name: {"probe-image-pull-failed"}},
		cacheOnly: []string{poolA0.Name, poolA1.Name},
		summary: []string{"2 running replica(s) are healthy only because the image is cached on 2 old node(s)",
			"Probe on " + poolD0.Name + ": the node could not pull its sandbox image " + pauseImage},
	}
}

// TestTextChecks runs the checks of the text reports on what diagnose
// really printed in the node tier (testdata/diagnose-text-*.txt, from a run
// on real kubelets): they pass on their report, and each wrong expectation
// is caught. It needs no root.
func TestTextChecks(t *testing.T) {
	b, err := os.ReadFile("testdata/diagnose-text-lie.txt")
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	count := func(x textWant) (n int, msgs []string) {
		checkText(func(f string, a ...any) { n++; msgs = append(msgs, fmt.Sprintf(f, a...)) }, "lie", out, x)
		return n, msgs
	}
	if n, msgs := count(lieText()); n != 0 {
		t.Fatalf("the lie's checks fail on the recorded report: %v", msgs)
	}
	for name, mutate := range map[string]func(*textWant){
		"cause":           func(x *textWant) { x.verdict = append(x.verdict, "(dns.nxdomain)") },
		"owner":           func(x *textWant) { x.verdict = []string{"owner dns"} },
		"landed":          func(x *textWant) { x.landed = []string{poolC0.Name} },
		"trigger":         func(x *textWant) { x.trigger = "pool-upgrade" },
		"pool status":     func(x *textWant) { x.pools = map[string][2]string{"poola": {"yes", "fine"}} },
		"pool eligible":   func(x *textWant) { x.pools = map[string][2]string{"system": {"yes", "ineligible"}} },
		"node probe":      func(x *textWant) { x.nodes = map[string][]string{poolD0.Name: {"done"}} },
		"node verdict":    func(x *textWant) { x.nodes = map[string][]string{poolA2.Name: {"ok"}} },
		"cache-only node": func(x *textWant) { x.cacheOnly = []string{poolA2.Name} },
		"no cache-only":   func(x *textWant) { x.cacheOnly = nil },
		"summary":         func(x *textWant) { x.summary = []string{"healthy only because the image is cached on 3 old node(s)"} },
	} {
		x := lieText()
		mutate(&x)
		if n, _ := count(x); n == 0 {
			t.Errorf("%s: a wrong expectation passed on the recorded report", name)
		}
	}
	// The first diagnosis: its checks pass on its report, the lie's do not.
	b, err = os.ReadFile("testdata/diagnose-text-scaleup.txt")
	if err != nil {
		t.Fatal(err)
	}
	out = string(b)
	if n, msgs := count(scaleUpText()); n != 0 {
		t.Errorf("the scale-up's checks fail on the recorded report: %v", msgs)
	}
	if n, _ := count(lieText()); n == 0 {
		t.Errorf("the lie's checks passed on the scale-up's report")
	}
}
