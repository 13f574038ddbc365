package clustercmd

import (
	"github.com/pullpath/pullpath/internal/cli"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pullpath/pullpath/internal/cluster"
	"github.com/pullpath/pullpath/internal/report"
)

// diagnoseFormats are diagnose's -o values.
var diagnoseFormats = report.AllFormats

// diagnoseRenderer picks diagnose's renderer for -o format.
func diagnoseRenderer(format string) (func(io.Writer, *cluster.Report) error, error) {
	if err := cli.CheckOutput(format, diagnoseFormats); err != nil {
		return nil, err
	}
	switch format {
	case report.FormatJSON, report.FormatYAML:
		return func(w io.Writer, r *cluster.Report) error {
			return report.WriteDocument(w, format, report.KindDiagnoseReport, r)
		}, nil
	case report.FormatHTML:
		return func(w io.Writer, r *cluster.Report) error { return report.WriteHTML(w, diagnosePage(r)) }, nil
	}
	return WriteDiagnoseText, nil
}

// checkWorkloadArgs rejects a kind without a name (`diagnose pod`), which
// ParseWorkload would read as a pod named "pod".
func checkWorkloadArgs(args []string) error {
	if len(args) == 1 && !strings.Contains(args[0], "/") {
		if k, ok := cluster.KindOf(args[0]); ok {
			return cli.UsageErrorf("diagnose %s needs a NAME: pullpath diagnose %s NAME (or %s/NAME)", args[0], k, k)
		}
	}
	return nil
}

// completeWorkload completes diagnose's arguments: the kinds first, then
// the names of that kind from the cluster (KIND NAME and KIND/NAME), with
// the command's kubeconfig flags.
func (o *diagnoseOptions) completeWorkload(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	const noFile = cobra.ShellCompDirectiveNoFileComp
	var kind cluster.Kind
	prefix := ""
	switch {
	case len(args) == 1:
		k, ok := cluster.KindOf(args[0])
		if !ok || strings.Contains(args[0], "/") {
			return nil, noFile
		}
		kind = k
	case len(args) == 0 && strings.Contains(toComplete, "/"):
		ks, _, _ := strings.Cut(toComplete, "/")
		k, ok := cluster.KindOf(ks)
		if !ok {
			return nil, noFile
		}
		kind, prefix = k, ks+"/"
	case len(args) == 0:
		var out []cobra.Completion
		for _, k := range cluster.Kinds {
			out = append(out, cobra.Completion(k))
		}
		return out, noFile
	default:
		return nil, noFile
	}
	cs, err := o.kube.Clientset()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	ns, err := o.kube.Namespace()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	names, err := cluster.ListNames(cmd.Context(), cs, kind, ns, 500)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	out := make([]cobra.Completion, 0, len(names))
	for _, n := range names {
		out = append(out, cobra.Completion(prefix+n))
	}
	return out, noFile
}

// diagnosePage is the HTML page of a diagnosis: the pull path of the node
// the pod landed on (its probe when one ran there, else the path the
// verdict implies), the pool table and the cached-image map.
func diagnosePage(r *cluster.Report) *report.Page {
	p := &report.Page{Title: "pullpath diagnose " + r.Workload, Kind: report.KindDiagnoseReport,
		Subject: r.Workload + " (namespace " + r.Namespace + ")", Verdict: r.Verdict, Summary: r.Summary,
		Warnings: r.Warnings, Notes: r.Notes, Generated: r.Generated}
	p.Meta = append(p.Meta, "image "+r.Image)
	if r.Node != "" {
		p.Meta = append(p.Meta, "landed on "+r.Node)
	}
	if r.Trigger.Kind != cluster.TriggerNone {
		p.Meta = append(p.Meta, "trigger "+string(r.Trigger.Kind)+" (not the cause)")
	}
	registry := r.Registry
	if registry == "" {
		registry = "registry"
	}
	p.Hops = report.VerdictHops(r.Verdict, registry)
	if r.Node != "" {
		p.Hops[0].Label = r.Node
	}
	for _, n := range r.Nodes {
		if n.Landed && n.Probe != nil && n.Probe.Report != nil {
			p.Hops = report.ProbeHops(n.Probe.Report)
			p.Hops[0].Label = n.Name
			p.Blobs = n.Probe.Report.Blobs
		}
	}
	for _, n := range r.Nodes {
		if n.Probe != nil && n.Probe.PodView != nil {
			p.Comparisons = append(p.Comparisons, podViewComparison(&n, n.Probe.PodView))
		}
	}
	for _, pl := range r.Pools {
		p.Pools = append(p.Pools, report.PoolRow{Name: pl.Name, Status: string(pl.Status), Reasons: strings.Join(pl.Reasons, "; "),
			Eligible: pl.Eligible, Nodes: pl.Nodes, Cached: pl.Cached})
	}
	for _, n := range r.Nodes {
		row := report.NodeRow{Name: n.Name, Pool: n.Pool, Age: n.Age, Cached: n.Cached, Eligible: n.Eligible, Landed: n.Landed}
		if n.Verdict != nil {
			row.Verdict = n.Verdict.Cause
			if n.Verdict.OK {
				row.Verdict = "pulls (probed)"
			}
		}
		p.Nodes = append(p.Nodes, row)
	}
	return p
}

// podViewComparison draws a node's path and its pod view's one above the
// other, hop by hop, the parting hop marked in both.
func podViewComparison(n *cluster.Node, pv *cluster.PodView) report.Comparison {
	c := report.Comparison{Name: n.Name, Title: "Pod view vs node on " + n.Name + " (pool " + n.Pool + "): " + string(pv.Divergence),
		Divergence: string(pv.Divergence), Parting: pv.PartingHop, Lines: []string{pv.Consequence}}
	if pv.PartingHop != "" {
		c.Title += ", parting at " + pv.PartingHop
	}
	side := func(h cluster.Hop, s cluster.PathSide) report.Hop {
		st := report.HopOK
		switch s.Status {
		case "failed":
			st = report.HopFailed
		case "warning":
			st = report.HopWarning
		case "skipped", "none":
			st = report.HopNotReached
		}
		return report.Hop{Kind: h.Name, Label: s.Text, Detail: s.Cause, Status: st, Parting: h.Name == pv.PartingHop}
	}
	for _, h := range pv.Hops {
		c.Node = append(c.Node, side(h, h.Node))
		c.Pod = append(c.Pod, side(h, h.Pod))
	}
	return c
}
