package clustercmd

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pullpath/pullpath/internal/cluster"
)

// maxTextNodes bounds the node table of the text report; the JSON report
// always has every node.
const maxTextNodes = 60

// WriteDiagnoseText renders diagnose's report for a terminal: the verdict
// and summary first, then the events, pools, nodes, replicas, identity,
// next steps and notes. internal/cluster analyses; this renders.
func WriteDiagnoseText(w io.Writer, r *cluster.Report) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }

	p("Workload:  %s (namespace %s)\n", r.Workload, r.Namespace)
	p("Image:     %s", r.Image)
	if r.Registry != "" {
		p("  (registry %s)", r.Registry)
	}
	p("\n")
	if r.Verdict.OK {
		p("Verdict:   ✔ no pull failure\n")
	} else {
		p("Verdict:   ✘ %s", r.Verdict.Layer)
		if r.Verdict.Cause != "" {
			p(" (%s)", r.Verdict.Cause)
		}
		if r.Verdict.Endpoint != "" {
			p(" at %s", r.Verdict.Endpoint)
		}
		if r.Verdict.Owner != "" {
			p(", owner %s", r.Verdict.Owner)
		}
		p("\n           %s\n", r.Verdict.Summary)
	}
	if r.Node != "" {
		p("Landed on: %s\n", r.Node)
	}
	if r.Trigger.Kind != cluster.TriggerNone {
		p("Trigger:   %s at %s (the trigger, not the cause)\n           %s\n", r.Trigger.Kind, r.Trigger.Time.UTC().Format(time.RFC3339), r.Trigger.Evidence)
	} else if r.Trigger.Evidence != "" {
		p("Trigger:   none: %s\n", r.Trigger.Evidence)
	}
	p("\n%s\n", r.Summary)

	if len(r.Events) > 0 {
		p("\nEvents (oldest first):\n")
		ow, rw := 0, 0
		for _, e := range r.Events {
			ow, rw = max(ow, len(e.Object)), max(rw, len(e.Reason))
		}
		for _, e := range r.Events {
			tag := ""
			if e.Verdict != nil {
				tag = " [" + cmp.Or(e.Verdict.Cause, string(e.Verdict.Layer)) + "]"
			}
			count := ""
			if e.Count > 1 {
				count = fmt.Sprintf(" (x%d)", e.Count)
			}
			p("  %s  %-*s  %-*s  %s%s%s\n", e.First.UTC().Format("2006-01-02 15:04:05"), ow, e.Object, rw, e.Reason, e.Message, count, tag)
		}
	}

	if len(r.Pools) > 0 {
		p("\nPools:\n")
		tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  POOL\tELIGIBLE\tNODES\tCACHED\tOS/ARCH\tSTATUS\tWHY")
		for _, pl := range r.Pools {
			why := strings.Join(pl.Reasons, "; ")
			if pl.Platform != "" {
				why = pl.Platform
			}
			cached := fmt.Sprintf("%d", pl.Cached)
			if pl.NotListed > 0 {
				cached += fmt.Sprintf(" (+%d not listed)", pl.NotListed)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%s/%s\t%s\t%s\n", pl.Name, yesNo(pl.Eligible), pl.Nodes, cached, pl.OS, pl.Arch, pl.Status, why)
		}
		tw.Flush()
	}

	if len(r.Nodes) > 0 {
		nodes, hidden := textNodes(r)
		p("\nNodes:\n")
		tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  NODE\tPOOL\tAGE\tCACHED\tELIGIBLE\tPODS\tVERDICT\tOWNER\tPROBE")
		for _, n := range nodes {
			name := n.Name
			if n.Landed {
				name += " *"
			}
			pods := "-"
			if n.Failing > 0 || n.Running > 0 {
				pods = fmt.Sprintf("%d failing, %d running", n.Failing, n.Running)
			}
			v, owner := "-", "-"
			switch {
			case n.Verdict != nil && n.Verdict.OK:
				v = "ok"
			case n.Verdict != nil:
				v = cmp.Or(n.Verdict.Cause, string(n.Verdict.Layer))
				owner = cmp.Or(string(n.Verdict.Owner), "-")
			case n.Cached:
				v = "from cache"
			}
			pr := "-"
			if n.Probe != nil {
				pr = string(n.Probe.Status)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, n.Pool, n.Age, cachedText(&n), yesNo(n.Eligible), pods, v, owner, pr)
		}
		tw.Flush()
		if hidden > 0 {
			p("  … %d more nodes (-o json lists them all)\n", hidden)
		}
		if r.Node != "" {
			p("  * the node the failing pod landed on\n")
		}
	}

	for _, n := range r.Nodes {
		if n.Probe != nil && n.Probe.Error != "" {
			p("\nProbe on %s: %s\n", n.Name, n.Probe.Error)
		}
	}
	for _, n := range r.Nodes {
		if n.Probe != nil && n.Probe.PodView != nil {
			writePodView(bw, &n, n.Probe.PodView)
		}
	}

	cacheOnly := 0
	for _, rp := range r.Replicas {
		if rp.CacheOnly {
			cacheOnly++
		}
	}
	if cacheOnly > 0 {
		p("\nReplicas running only because their node holds the image:\n")
		for _, rp := range r.Replicas {
			if rp.CacheOnly {
				p("  %s on %s (pool %s): %s\n", rp.Pod, rp.Node, rp.Pool, rp.Basis)
			}
		}
	}

	id := r.Identity
	p("\nIdentity:\n")
	if id.ServiceAccount != "" {
		p("  service account %s: %s\n", id.ServiceAccount, map[bool]string{true: "found", false: "not found"}[id.ServiceAccountFound])
	}
	if len(id.PullSecrets) == 0 {
		p("  no imagePullSecrets\n")
	}
	for _, ps := range id.PullSecrets {
		state := "ok"
		switch {
		case !ps.Readable:
			state = "unknown"
		case !ps.Found:
			state = "missing"
		case ps.Matches:
			state = "found, " + ps.Type + ", entry " + ps.Entry
		}
		if ps.Problem != "" {
			state += ": " + ps.Problem
		}
		p("  pull secret %s (from %s): %s\n", ps.Name, ps.Source, state)
	}
	if id.Provider != "" {
		p("  node credentials expected: %s\n", id.Provider)
	}
	for _, pl := range r.Pools {
		if pl.Eligible && pl.Identity != "" {
			p("  pool %s pulls as: %s\n", pl.Name, pl.Identity)
		}
	}
	for _, n := range id.Notes {
		p("  %s\n", n)
	}

	if len(r.Next) > 0 {
		p("\nNext steps:\n")
		for i, n := range r.Next {
			p("  %d. %s\n", i+1, n)
		}
	}
	if len(r.Warnings) > 0 {
		p("\nWarnings:\n")
		for _, wn := range r.Warnings {
			p("  ! %s: %s\n", wn.Code, wn.Message)
		}
	}
	if len(r.Notes) > 0 {
		p("\nNotes:\n")
		for _, n := range r.Notes {
			p("  - %s\n", n)
		}
	}
	return bw.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func cachedText(n *cluster.Node) string {
	switch {
	case n.Cached:
		return "yes (" + n.CacheMatch + ")"
	case n.ListFull:
		return "not listed"
	}
	return "no"
}

// textNodes picks the nodes the text table shows: all of them when few,
// else the ones that carry evidence (landed, failing, probed, running) and
// the oldest and newest node of every pool.
func textNodes(r *cluster.Report) ([]cluster.Node, int) {
	if len(r.Nodes) <= maxTextNodes {
		return r.Nodes, 0
	}
	keep := make([]bool, len(r.Nodes))
	first := map[string]int{}
	last := map[string]int{}
	for i := range r.Nodes {
		n := &r.Nodes[i]
		if n.Landed || n.Failing > 0 || n.Probe != nil || n.Verdict != nil {
			keep[i] = true
		}
		if _, ok := first[n.Pool]; !ok {
			first[n.Pool] = i
		}
		last[n.Pool] = i
	}
	for _, i := range first {
		keep[i] = true
	}
	for _, i := range last {
		keep[i] = true
	}
	var out []cluster.Node
	for i := range r.Nodes {
		if keep[i] && len(out) < maxTextNodes {
			out = append(out, r.Nodes[i])
		}
	}
	return out, len(r.Nodes) - len(out)
}

// writePodView renders the node's path and the pod's side by side, the
// parting hop marked.
func writePodView(w io.Writer, n *cluster.Node, pv *cluster.PodView) {
	fmt.Fprintf(w, "\nPod view vs node on %s (pool %s): %s", n.Name, n.Pool, pv.Divergence)
	if pv.PartingHop != "" {
		fmt.Fprintf(w, ", parting hop %s", pv.PartingHop)
	}
	fmt.Fprintln(w)
	if len(pv.Hops) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  HOP\tNODE (runtime's path)\tPOD (ordinary pod)\t")
		for _, h := range pv.Hops {
			mark := ""
			switch {
			case h.Name == pv.PartingHop:
				mark = "◀ parting hop"
			case h.Differs:
				mark = "differs"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", h.Name, sideText(h.Node), sideText(h.Pod), mark)
		}
		tw.Flush()
	}
	if pv.Error != "" {
		fmt.Fprintf(w, "  pod-view probe: %s\n", pv.Error)
	}
	fmt.Fprintf(w, "  %s\n", pv.Consequence)
}

// sideText is one side of a hop for the text table.
func sideText(s cluster.PathSide) string {
	mark := "✔"
	switch s.Status {
	case "failed":
		mark = "✘"
	case "skipped", "none":
		mark = "-"
	case "warning":
		mark = "!"
	}
	return mark + " " + truncate(s.Text, 60)
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
