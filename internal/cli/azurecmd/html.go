package azurecmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/pullpath/pullpath/internal/azure"
	"github.com/pullpath/pullpath/internal/report"
)

// azureFormats are azure's -o values.
var azureFormats = report.AllFormats

// azureSteps are the hops of a pool's private path, in the order a pull
// needs them, with the label the page gives each.
var azureSteps = []struct{ step, label string }{
	{azure.StepEndpoints, "private endpoint"},
	{azure.StepDNS, "private DNS"},
	{azure.StepRoute, "route"},
	{azure.StepSecurity, "security rules"},
	{azure.StepReturn, "return path"},
}

// checkState is the state of one check as the text marks it (✔ ok, ✘
// failed, ? warning: failed but unconfirmed, or confirmed by nothing, -
// not reached: skipped), and the colour the HTML page gives it.
func checkState(c azure.Check) string {
	switch {
	case c.Skipped:
		return report.HopNotReached
	case !c.OK && c.Certain:
		return report.HopFailed
	case !c.OK || !c.Certain:
		return report.HopWarning
	}
	return report.HopOK
}

// azureHTML writes the report as one self-contained HTML page.
func azureHTML(w io.Writer, r *azure.Report) error {
	return report.WriteHTML(w, azurePage(r))
}

// azurePage is the HTML page of an azure report: per node pool its private
// path to the registry (pool → endpoint → DNS → route → security → return),
// each hop coloured by its checks, the failing one marked, the pool's
// verdict and setting beside it and every check in a table; then the
// endpoints. Every text comes from the report, whose error texts passed the
// redactor.
func azurePage(r *azure.Report) *report.Page {
	// The words the documents use: layer none and cause ok when ok.
	report.Normalize(r)
	p := &report.Page{Title: "pullpath azure " + report.Dash(r.Input.Registry), Kind: report.KindAzureReport,
		Subject: report.Dash(r.Input.Registry), Verdict: r.Verdict.Verdict, Summary: azureSummary(r), Warnings: r.Warnings}
	if r.Input.Cluster != "" {
		p.Meta = append(p.Meta, "cluster "+r.Input.Cluster)
	}
	if r.Input.Zone != "" {
		p.Meta = append(p.Meta, "zone "+r.Input.Zone)
	}
	in := "input " + r.Input.Mode
	if r.Input.Dir != "" {
		in += " " + r.Input.Dir
	}
	p.Meta = append(p.Meta, in, "source "+r.Source)
	if !r.Verdict.OK && !r.Verdict.Certain {
		p.Notes = append(p.Notes, unconfirmed)
	}
	for _, pl := range r.Pools {
		p.Paths = append(p.Paths, poolPath(pl, len(r.Endpoints)))
	}
	eps := report.Table{ID: "endpoints", Title: "Registry endpoints", Header: []string{"FQDN", "IP", "role", "private endpoint"}}
	for _, e := range r.Endpoints {
		eps.Rows = append(eps.Rows, report.Row{Key: e.FQDN, Cells: []report.Cell{{Text: e.FQDN, Class: "mono"}, {Text: e.IP, Class: "mono"},
			{Text: string(e.Role)}, {Text: report.Dash(e.PrivateEndpoint)}}})
	}
	p.Tables = append(p.Tables, eps)
	return p
}

const unconfirmed = "Azure's configuration cannot prove this; it cannot rule it out either."

// poolPath draws one pool's path; endpoints is the number of registry
// endpoints found with a private address.
func poolPath(pl azure.PoolReport, endpoints int) report.Path {
	v := pl.Verdict
	path := report.Path{Name: pl.Name, Title: "pool " + pl.Name, Status: report.HopOK, Verdict: &pl.Verdict.Verdict}
	switch {
	case !v.OK && v.Certain:
		path.Status = report.HopFailed
	case !v.OK:
		path.Status = report.HopWarning
	}
	// The check the pool's verdict is read from: its first failing check
	// of the verdict's cause.
	failing := -1
	for i, c := range pl.Checks {
		if !v.OK && !c.OK && !c.Skipped && c.Cause == v.Cause {
			failing = i
			break
		}
	}
	path.Hops = append(path.Hops, report.Hop{Kind: "pool", Label: pl.Name,
		Detail: strings.TrimSpace(strings.Join(pl.SubnetPrefix, ", ") + " " + pl.VNet), Status: report.HopOK})
	for _, st := range azureSteps {
		h := report.Hop{Kind: st.step, Label: st.label, Status: report.HopNotReached}
		n, bad := 0, ""
		for i, c := range pl.Checks {
			if c.Step != st.step {
				continue
			}
			n++
			s := checkState(c)
			if worse(s, h.Status) {
				h.Status = s
			}
			if i == failing {
				h.Failing, bad = true, c.Cause+" at "+report.Dash(c.Endpoint)
			}
		}
		switch {
		case bad != "":
			h.Detail = bad
		case n > 0:
			h.Detail = fmt.Sprintf("%d check(s)", n)
		case st.step == azure.StepEndpoints && endpoints > 0:
			// Only a missing endpoint or address makes a check here.
			h.Status, h.Detail = report.HopOK, fmt.Sprintf("%d endpoint(s)", endpoints)
		}
		path.Hops = append(path.Hops, h)
	}
	if v.Setting != "" {
		path.Lines = append(path.Lines, "Setting: "+v.Setting)
	}
	if !v.OK && !v.Certain {
		path.Lines = append(path.Lines, "Unconfirmed: "+unconfirmed)
	}
	if v.Certain && len(v.From) > 0 {
		path.Lines = append(path.Lines, "Proof: "+strings.Join(v.From, ", "))
	}
	if !v.Certain && v.Settle != "" {
		path.Lines = append(path.Lines, "Settle: "+v.Settle)
	}
	path.Lines = append(path.Lines, "Subnet "+report.Dash(pl.Subnet)+", DNS "+dnsServers(pl.DNSServers)+"; routes: "+pl.RoutesFrom)
	if a := pl.Agreement; a != nil {
		word := "disagree"
		if a.Agree {
			word = "agree"
		}
		path.Lines = append(path.Lines, fmt.Sprintf("Data plane (%s): %s — %s", dataPlaneCause(a.DataPlane), word, a.Summary))
	}
	t := &report.Table{Title: fmt.Sprintf("%d checks", len(pl.Checks)), Header: []string{"step", "endpoint", "result", "finding", "setting"}}
	for i, c := range pl.Checks {
		s := checkState(c)
		result := map[string]string{report.HopOK: "ok", report.HopFailed: "failed", report.HopWarning: "unconfirmed", report.HopNotReached: "skipped"}[s]
		if c.Cause != "" {
			result += " (" + c.Cause + ")"
		}
		class := ""
		if s == report.HopOK || s == report.HopFailed {
			class = s
		}
		t.Rows = append(t.Rows, report.Row{Key: c.Step + " " + c.Endpoint, Status: s, Failing: i == failing,
			Cells: []report.Cell{{Text: c.Step}, {Text: report.Dash(c.Endpoint), Class: "mono"}, {Text: result, Class: class},
				{Text: c.Summary}, {Text: report.Dash(c.Setting)}}})
	}
	path.Table = t
	return path
}

// worse reports whether hop state a outranks b: failed, warning, ok, not
// reached.
func worse(a, b string) bool {
	rank := map[string]int{report.HopNotReached: 0, report.HopOK: 1, report.HopWarning: 2, report.HopFailed: 3}
	return rank[a] > rank[b]
}

func dataPlaneCause(d azure.DataPlaneVerdict) string {
	c := d.Cause
	if d.OK {
		c = "ok"
	}
	if d.Node != "" {
		c += " on " + d.Node
	}
	return c
}
