package nodelab_test

import (
	"context"
	"slices"
	"strings"
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
	lines := strings.Split(out, "\n")
	line := func(prefix string) string {
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return l
			}
		}
		w.t.Errorf("%s (text): no line starting %q", what, prefix)
		return ""
	}
	v := line("Verdict:")
	for _, s := range x.verdict {
		if !strings.Contains(v, s) {
			w.t.Errorf("%s (text): verdict line %q lacks %q", what, v, s)
		}
	}
	if l := line("Landed on:"); !slices.ContainsFunc(x.landed, func(n string) bool { return strings.Contains(l, n) }) {
		w.t.Errorf("%s (text): %q, want one of %v", what, l, x.landed)
	}
	if l := line("Trigger:"); x.trigger != "" && !strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(l, "Trigger:")), x.trigger+" at ") {
		w.t.Errorf("%s (text): %q, want trigger %s", what, l, x.trigger)
	}
	for _, s := range x.summary {
		if !strings.Contains(out, s) {
			w.t.Errorf("%s (text): the report lacks %q", what, s)
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
			w.t.Errorf("%s (text): no %q section", what, title)
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
			w.t.Errorf("%s (text): pool row %v, want %s eligible %s status %s", what, r, pool, want[0], want[1])
		}
	}
	nodes := section("Nodes:")
	for node, cells := range x.nodes {
		r := row(nodes, node)
		for _, c := range cells {
			if !slices.Contains(r, c) {
				w.t.Errorf("%s (text): node row %v lacks %q", what, r, c)
			}
		}
	}
	const cacheTitle = "Replicas running only because their node holds the image:"
	if len(x.cacheOnly) == 0 {
		if slices.Contains(lines, cacheTitle) {
			w.t.Errorf("%s (text): %q on a healthy pool", what, cacheTitle)
		}
		return
	}
	cached := section(cacheTitle)
	for _, node := range x.cacheOnly {
		if !slices.ContainsFunc(cached, func(r []string) bool { return slices.Contains(r, node) && slices.Contains(r, "poola):") }) {
			w.t.Errorf("%s (text): no cache-only replica on %s (pool poola) in %v", what, node, cached)
		}
	}
}
