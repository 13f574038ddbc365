package report

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pullpath/pullpath/internal/netpath"
	"github.com/pullpath/pullpath/internal/probe"
	"github.com/pullpath/pullpath/internal/verdict"
)

//go:embed html/*.tmpl
var htmlFS embed.FS

// htmlTmpl is parsed on first use: parsing it at init cost every start of
// every command a third of a millisecond.
var htmlTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page.tmpl").Funcs(template.FuncMap{
		"ms": func(f float64) string { return fmtMillis(f) },
	}).ParseFS(htmlFS, "html/*.tmpl"))
})

// Hop statuses, also the CSS classes of the page.
const (
	HopOK         = "ok"
	HopFailed     = "failed"
	HopNotReached = "not-reached"
	HopWarning    = "warning"
)

// FailureColor is the fill of the failing hop in the HTML report (#c62828);
// OKColor and NotReachedColor fill the others. The Chromium test looks for
// FailureColor's pixels in a screenshot.
var (
	FailureColor    = [3]uint8{0xc6, 0x28, 0x28}
	OKColor         = [3]uint8{0x2e, 0x7d, 0x32}
	NotReachedColor = [3]uint8{0x9e, 0x9e, 0x9e}
	// WarningColor fills a hop whose fault is unconfirmed (#ef6c00).
	WarningColor = [3]uint8{0xef, 0x6c, 0x00}
)

// Hop is one box of the pull-path drawing: the node, its resolver, or an
// endpoint (registry, mirror, proxy, token host, blob host).
type Hop struct {
	Kind    string // node, resolver, registry, mirror, proxy, auth, blob
	Label   string // e.g. "registry.example:443"
	Detail  string
	Status  string // HopOK, HopFailed, HopNotReached, HopWarning
	Failing bool   // the first failing step of the verdict is here
	// Parting marks the first hop where two compared paths differ
	// (Comparison).
	Parting bool
	Steps   []probe.Step
}

// Page is what the HTML report shows. Every text in it has passed the
// redactor already (the reports it is built from are redacted).
type Page struct {
	Title    string
	Kind     string // ProbeReport, DiagnoseReport, AzureReport or MonitorStatus
	Subject  string // the image, or the workload
	Meta     []string
	Verdict  verdict.Verdict
	Summary  string
	Hops     []Hop
	Blobs    []probe.Blob
	Warnings []verdict.Warning
	Pools    []PoolRow
	Nodes    []NodeRow
	// Paths are more drawn paths, each with its verdict (one per node
	// pool); Tables more tables, after them.
	Paths []Path
	// Comparisons are pairs of paths drawn one above the other (a node's
	// and a pod's on the same node), the hop where they part marked.
	Comparisons []Comparison
	Tables      []Table
	Notes       []string
	Generated   time.Time
}

// HasSteps reports whether any hop carries recorded steps.
func (p *Page) HasSteps() bool {
	return slices.ContainsFunc(p.Hops, func(h Hop) bool { return len(h.Steps) > 0 })
}

// PoolRow is one row of diagnose's pool table.
type PoolRow struct {
	Name, Status, Reasons string
	Eligible              bool
	Nodes, Cached         int
}

// NodeRow is one node of diagnose's cached-node map.
type NodeRow struct {
	Name, Pool, Age, Verdict string
	Cached, Eligible, Landed bool
}

// WriteHTML writes p as one self-contained HTML page: inline CSS, one small
// inline script, no external asset, so it opens offline in a ticket.
func WriteHTML(w io.Writer, p *Page) error {
	if p.Generated.IsZero() {
		p.Generated = time.Now().UTC()
	}
	return htmlTmpl().Execute(w, p)
}

// ProbeHTML writes the HTML report of a probe.
func ProbeHTML(w io.Writer, r *probe.Report) error {
	return WriteHTML(w, ProbePage(r))
}

// ProbePage builds the page of a probe report: node → resolver → each
// endpoint in the order the pull touched it, then the roles it never
// reached.
func ProbePage(r *probe.Report) *Page {
	p := &Page{Title: "pullpath probe " + r.Image, Kind: "ProbeReport", Subject: r.Image, Verdict: r.Verdict,
		Summary: Summary(r.Verdict, r.Millis), Blobs: r.Blobs, Warnings: r.Warnings, Generated: r.Started}
	if r.Root != "" {
		p.Meta = append(p.Meta, "root "+r.Root)
	}
	if r.Platform != "" {
		p.Meta = append(p.Meta, "platform "+r.Platform)
	}
	if r.Identity != "" {
		p.Meta = append(p.Meta, "identity "+r.Identity)
	}
	p.Hops = ProbeHops(r)
	return p
}

// ProbeHops draws the path of a probe report.
func ProbeHops(r *probe.Report) []Hop {
	v := r.Verdict
	node := Hop{Kind: "node", Label: "node", Detail: strings.TrimSpace(r.Platform + " " + r.Root), Status: HopOK}
	if !v.OK && v.Layer == verdict.LayerConfig {
		node.Status, node.Failing = HopFailed, true
	}
	resolver := Hop{Kind: "resolver", Label: "resolver", Status: HopNotReached}
	var servers []string
	var eps []Hop
	for _, ep := range r.Endpoints {
		h := Hop{Kind: string(ep.Role), Label: fmt.Sprintf("%s:%d", ep.Host, ep.Port), Detail: roleName(ep.Role), Steps: ep.Steps}
		h.Status = stepsStatus(ep.Steps)
		for _, st := range ep.Steps {
			if st.Name != "dns" || st.Status == probe.StatusSkipped {
				continue
			}
			if resolver.Status == HopNotReached {
				resolver.Status = HopOK
			}
			if st.Status == probe.StatusFailed && strings.HasPrefix(st.Cause, "dns.") {
				resolver.Status = HopFailed
			}
			resolver.Steps = append(resolver.Steps, st)
			servers = append(servers, dnsServers(st)...)
		}
		if !v.OK && v.Endpoint == h.Label && (v.Role == "" || v.Role == ep.Role) && v.Layer != verdict.LayerDNS {
			h.Failing = true
		}
		eps = append(eps, h)
	}
	slices.Sort(servers)
	resolver.Detail = strings.Join(slices.Compact(servers), ", ")
	if !v.OK && v.Layer == verdict.LayerDNS {
		resolver.Status, resolver.Failing = HopFailed, true
	}
	hops := append([]Hop{node, resolver}, eps...)
	// The roles a pull passes that it never reached.
	for _, role := range []verdict.Role{verdict.RoleRegistry, verdict.RoleAuth, verdict.RoleBlob} {
		if !slices.ContainsFunc(r.Endpoints, func(e probe.Endpoint) bool { return e.Role == role }) && (!v.OK || role == verdict.RoleRegistry) {
			hops = append(hops, Hop{Kind: string(role), Label: roleName(role), Detail: "not reached", Status: HopNotReached})
		}
	}
	if !v.OK && !slices.ContainsFunc(hops, func(h Hop) bool { return h.Failing }) {
		// A failure at no drawn endpoint (e.g. a manifest or transfer
		// failure named by its endpoint only): mark the first failed hop.
		for i := range hops {
			if hops[i].Status == HopFailed {
				hops[i].Failing = true
				break
			}
		}
	}
	return hops
}

// VerdictHops draws the path a verdict implies when no probe ran (diagnose
// from events only): the hops before the failing one passed (the pull
// reached it, in pull order), the failing one failed, the rest were not
// reached.
func VerdictHops(v verdict.Verdict, registry string) []Hop {
	order := []struct {
		kind  string
		label string
		role  verdict.Role
	}{
		{"node", "node", ""}, {"resolver", "resolver", ""}, {"registry", registry, verdict.RoleRegistry},
		{"auth", roleName(verdict.RoleAuth), verdict.RoleAuth}, {"blob", roleName(verdict.RoleBlob), verdict.RoleBlob},
	}
	fail := -1
	switch {
	case v.OK:
	case v.Layer == verdict.LayerConfig || v.Layer == verdict.LayerRuntime:
		fail = 0
	case v.Layer == verdict.LayerDNS:
		fail = 1
	case v.Role == verdict.RoleAuth:
		fail = 3
	case v.Role == verdict.RoleBlob || v.Layer == verdict.LayerTransfer:
		fail = 4
	case v.Layer == verdict.LayerUnknown:
		fail = -2
	default:
		fail = 2
	}
	var hops []Hop
	for i, o := range order {
		h := Hop{Kind: o.kind, Label: o.label, Status: HopNotReached}
		switch {
		case v.OK || (fail >= 0 && i < fail):
			h.Status = HopOK
		case i == fail:
			h.Status, h.Failing = HopFailed, true
			if v.Endpoint != "" {
				h.Label = v.Endpoint
			}
		}
		hops = append(hops, h)
	}
	return hops
}

// dnsServers are the nameservers a dns step asked.
func dnsServers(st probe.Step) []string {
	var out []string
	switch ans := st.Facts["answers"].(type) {
	case []netpath.ResolverAnswer:
		for _, a := range ans {
			out = append(out, a.Server)
		}
	case []any: // a report decoded from JSON
		for _, a := range ans {
			if m, ok := a.(map[string]any); ok {
				if s, ok := m["server"].(string); ok {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

func stepsStatus(steps []probe.Step) string {
	status := HopNotReached
	for _, st := range steps {
		switch st.Status {
		case probe.StatusFailed:
			return HopFailed
		case probe.StatusOK:
			status = HopOK
		case probe.StatusWarning:
			if status != HopOK {
				status = HopWarning
			}
		}
	}
	return status
}

func roleName(r verdict.Role) string {
	switch r {
	case verdict.RoleRegistry:
		return "registry"
	case verdict.RoleAuth:
		return "token host"
	case verdict.RoleBlob:
		return "blob host"
	case verdict.RoleMirror:
		return "mirror"
	case verdict.RoleProxy:
		return "proxy"
	}
	return "endpoint"
}
