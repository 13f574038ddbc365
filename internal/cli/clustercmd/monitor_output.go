package clustercmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/pullpath/pullpath/internal/monitor"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// monitorStatusFormats are `monitor status`'s -o values.
var monitorStatusFormats = report.AllFormats

// writeMonitorStatus renders st in format: the text table, one
// MonitorStatus document (st carries its own apiVersion and kind), or the
// HTML page.
func writeMonitorStatus(w io.Writer, format string, st *monitor.Status) error {
	switch format {
	case report.FormatJSON, report.FormatYAML:
		return report.WriteOwnDocument(w, format, report.KindMonitorStatus, st)
	case report.FormatHTML:
		return report.WriteHTML(w, monitorStatusPage(st))
	}
	return st.WriteText(w)
}

// poolVerdict is the verdict a pool's agents report: ok for a healthy
// pool; for a broken or partial one the cause its condition names, with
// the catalogue's summary and next steps and the condition message (already
// redacted) as evidence; nil for a pool no agent reports from.
func poolVerdict(p monitor.PoolStatus) *verdict.Verdict {
	switch p.State {
	case monitor.PoolHealthy:
		v := verdict.OKVerdict(fmt.Sprintf("The agents on %d of %d nodes report a working pull path.", p.Reporting, p.Nodes))
		return &v
	case monitor.PoolUnknown:
		return nil
	}
	layer := verdict.Layer(p.Layer)
	if !layer.Valid() || layer == verdict.LayerNone {
		layer = verdict.LayerOf(p.Cause)
	}
	d := verdict.Describe(p.Cause, verdict.Role(p.Role), p.Endpoint)
	owner := verdict.Owner(p.Owner)
	if owner == "" {
		owner = verdict.OwnerOf(p.Cause)
	}
	return &verdict.Verdict{Layer: layer, Cause: p.Cause, Role: verdict.Role(p.Role), Owner: owner, Endpoint: p.Endpoint,
		Summary: fmt.Sprintf("%d of %d reporting nodes fail: %s", p.Failing, p.Reporting, d.Summary), Next: d.Next, Evidence: p.Message}
}

// monitorStatusPage is the HTML page of `monitor status`: per pool the pull
// path its agents' verdict implies (the failing hop marked), then the pool
// table. The page's verdict is the first broken pool's, in name order.
func monitorStatusPage(st *monitor.Status) *report.Page {
	p := &report.Page{Title: "pullpath monitor status", Kind: report.KindMonitorStatus, Subject: "condition " + st.Condition}
	p.Meta = append(p.Meta, fmt.Sprintf("%d pool(s)", len(st.Pools)))
	var broken []string
	table := report.Table{ID: "pools", Title: "Node pools",
		Header: []string{"pool", "state", "nodes", "reporting", "failing", "cause", "owner", "endpoint", "since", "watched pods", "warning"}}
	for _, pl := range st.Pools {
		v := poolVerdict(pl)
		path := report.Path{Name: pl.Name, Title: "pool " + pl.Name + ": " + pl.State, Verdict: v}
		status := map[string]string{monitor.PoolHealthy: report.HopOK, monitor.PoolBroken: report.HopFailed,
			monitor.PoolPartial: report.HopWarning, monitor.PoolUnknown: report.HopNotReached}[pl.State]
		path.Status = status
		if v != nil {
			registry := pl.Endpoint
			if registry == "" {
				registry = "registry"
			}
			path.Hops = report.VerdictHops(*v, registry)
		} else {
			path.Hops = report.VerdictHops(verdict.OKVerdict(""), "registry")
			for i := range path.Hops {
				path.Hops[i].Status = report.HopNotReached
			}
		}
		path.Hops[0].Label = "pool " + pl.Name
		path.Hops[0].Detail = fmt.Sprintf("%d node(s): %s", pl.Nodes, strings.Join(pl.NodeNames, ", "))
		if pl.Since != "" {
			path.Lines = append(path.Lines, "Failing since "+pl.Since+".")
		}
		if pl.Warning != "" {
			path.Lines = append(path.Lines, "Warning: "+pl.Warning)
		}
		p.Paths = append(p.Paths, path)
		if v != nil && !v.OK && len(broken) == 0 {
			p.Verdict = *v
			p.Verdict.Summary = "Pool " + pl.Name + ": " + v.Summary
		}
		if pl.State == monitor.PoolBroken || pl.State == monitor.PoolPartial {
			broken = append(broken, pl.Name)
		}
		watched := fmt.Sprint(pl.WatchedPods)
		if pl.WatchedPods < 0 {
			watched = "unknown"
		}
		table.Rows = append(table.Rows, report.Row{Key: pl.Name, Status: status, Failing: status == report.HopFailed || status == report.HopWarning,
			Cells: append([]report.Cell{{Text: pl.Name}, {Text: pl.State, Class: map[string]string{report.HopOK: "ok", report.HopFailed: "failed"}[status]}},
				report.TextCells(fmt.Sprint(pl.Nodes), fmt.Sprint(pl.Reporting), fmt.Sprint(pl.Failing), report.Dash(pl.Cause), report.Dash(pl.Owner),
					report.Dash(pl.Endpoint), report.Dash(pl.Since), watched, report.Dash(pl.Warning))...)})
	}
	p.Tables = append(p.Tables, table)
	switch {
	case len(broken) > 0:
		p.Summary = fmt.Sprintf("%d of %d pool(s) broken or partial: %s", len(broken), len(st.Pools), strings.Join(broken, ", "))
	case len(st.Pools) == 0:
		p.Verdict = verdict.OKVerdict("No node reports the " + st.Condition + " condition: no monitor agent runs, or no node exists.")
	default:
		p.Verdict = verdict.OKVerdict("Every reporting pool has a working pull path.")
		p.Summary = fmt.Sprintf("%d pool(s) healthy or not reporting", len(st.Pools))
	}
	// The words the documents use: layer none and cause ok when ok.
	report.Normalize(&p.Verdict)
	return p
}
