package monitor

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/pullpath/pullpath/internal/redact"
)

// NodeRecord is what status aggregation needs to know of one node: filled
// from the API server by the full binary (internal/cluster).
type NodeRecord struct {
	Name      string
	Pool      string
	Created   time.Time
	Condition *Condition // the PullPathReady condition, nil when no agent reported
	// Result is the agent's ResultAnnotation, "" when it wrote none (an
	// older agent: the condition's message is parsed instead).
	Result string
	// WatchedPods is how many running pods on the node use a watched image
	// (or the workload asked about); -1 when unknown.
	WatchedPods int
}

// Pool states.
const (
	PoolHealthy = "healthy"
	PoolBroken  = "broken"
	PoolPartial = "partial" // some nodes broken, some healthy
	PoolUnknown = "unknown" // no agent reporting
)

// PoolStatus is one pool's state, from its nodes' conditions.
type PoolStatus struct {
	Name      string `json:"name"`
	State     string `json:"state"`
	Nodes     int    `json:"nodes"`
	Reporting int    `json:"reporting"`
	Failing   int    `json:"failing"`
	Layer     string `json:"layer,omitempty"`
	Cause     string `json:"cause,omitempty"`
	Owner     string `json:"owner,omitempty"`
	Role      string `json:"role,omitempty"`
	Endpoint  string `json:"endpoint,omitempty"`
	// Since is the earliest time a failing node of the pool turned False.
	Since   string `json:"since,omitempty"`
	Message string `json:"message,omitempty"`
	// WatchedPods counts running pods of the watched images in the pool;
	// -1 when unknown. A broken pool with none is where the next scale-up
	// lands and fails.
	WatchedPods int      `json:"watched_pods"`
	NodeNames   []string `json:"node_names"`
	Warning     string   `json:"warning,omitempty"`
}

// Status is `pullpath monitor status`'s document (kind MonitorStatus).
type Status struct {
	APIVersion string       `json:"apiVersion"`
	Kind       string       `json:"kind"`
	Condition  string       `json:"condition"`
	Pools      []PoolStatus `json:"pools"`
	Healthy    bool         `json:"healthy"`
}

// failingRE reads the condition message of agents older than the result
// annotation. It is compiled on first use, not at every start of the node
// binary.
var failingRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`layer (\S+) cause (\S+) owner (\S*) role (\S*) endpoint (\S*): `)
})

// firstFailing is the first failing target of a node's result annotation.
func firstFailing(annotation string) (TargetResult, bool) {
	d, ok := ParseNodeResult(annotation)
	if !ok {
		return TargetResult{}, false
	}
	for _, t := range d.Targets {
		if !t.OK {
			return t, true
		}
	}
	return TargetResult{}, false
}

// Aggregate folds node records into one status per pool.
func Aggregate(nodes []NodeRecord) Status {
	byPool := map[string]*PoolStatus{}
	var names []string
	for _, n := range nodes {
		p := byPool[n.Pool]
		if p == nil {
			p = &PoolStatus{Name: n.Pool, NodeNames: []string{}}
			byPool[n.Pool] = p
			names = append(names, n.Pool)
		}
		p.Nodes++
		p.NodeNames = append(p.NodeNames, n.Name)
		if n.WatchedPods < 0 || p.WatchedPods < 0 {
			p.WatchedPods = -1
		} else {
			p.WatchedPods += n.WatchedPods
		}
		c := n.Condition
		if c == nil || c.Status == "Unknown" {
			continue
		}
		p.Reporting++
		if c.Status != "False" {
			continue
		}
		p.Failing++
		if p.Since == "" || c.LastTransitionTime < p.Since {
			p.Since = c.LastTransitionTime
			// The condition is read from the API server: what reaches
			// output passes the redactor.
			p.Message = redact.String(c.Message)
			p.Layer, p.Cause, p.Owner, p.Role, p.Endpoint = "", "", "", "", ""
			if f, ok := firstFailing(n.Result); ok {
				p.Layer, p.Cause, p.Owner, p.Role, p.Endpoint = string(f.Layer), f.Cause, string(f.Owner), string(f.Role), redact.String(f.Endpoint)
			} else if m := failingRE().FindStringSubmatch(p.Message); m != nil {
				p.Layer, p.Cause, p.Owner, p.Role, p.Endpoint = m[1], m[2], m[3], m[4], m[5]
			} else {
				p.Cause = c.Reason
			}
		}
	}
	slices.Sort(names)
	st := Status{APIVersion: "pullpath.dev/v1alpha1", Kind: "MonitorStatus", Condition: ConditionType, Pools: []PoolStatus{}, Healthy: true}
	for _, name := range names {
		p := byPool[name]
		switch {
		case p.Reporting == 0:
			p.State = PoolUnknown
			p.Warning = "no agent reports from this pool: check that the DaemonSet tolerates its taints and that its pods run"
		case p.Failing == 0:
			p.State = PoolHealthy
		case p.Failing == p.Reporting:
			p.State = PoolBroken
		default:
			p.State = PoolPartial
		}
		if p.State == PoolBroken || p.State == PoolPartial {
			st.Healthy = false
			if p.WatchedPods == 0 {
				p.Warning = "nothing here runs the watched images yet: the next scale-up that lands here fails to pull"
			}
		}
		if p.Reporting > 0 && p.Reporting < p.Nodes && p.Warning == "" {
			p.Warning = fmt.Sprintf("%d of %d nodes have no agent reporting", p.Nodes-p.Reporting, p.Nodes)
		}
		st.Pools = append(st.Pools, *p)
	}
	return st
}

// WriteText prints the status as a table, one line per pool, then the
// warnings.
func (s Status) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POOL\tSTATE\tNODES\tREPORTING\tFAILING\tCAUSE\tOWNER\tENDPOINT\tSINCE")
	for _, p := range s.Pools {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", p.Name, p.State, p.Nodes, p.Reporting, p.Failing,
			dash(p.Cause), dash(p.Owner), dash(p.Endpoint), dash(p.Since))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var warn []string
	for _, p := range s.Pools {
		if p.Warning != "" {
			warn = append(warn, fmt.Sprintf("  ! pool %s: %s", p.Name, p.Warning))
		}
	}
	if len(warn) > 0 {
		_, err := fmt.Fprintf(w, "warnings\n%s\n", strings.Join(warn, "\n"))
		return err
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
