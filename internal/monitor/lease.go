package monitor

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// The Lease that coordinates one pool's rounds for one target lives in the
// agent's namespace and carries, besides the holder of the last full
// download (spec.holderIdentity, spec.acquireTime), these annotations.
const (
	annoPool       = "pullpath.dev/pool"
	annoTarget     = "pullpath.dev/target"
	annoHeadAt     = "pullpath.dev/head-at"     // the last round with blob HEADs
	annoHeadHolder = "pullpath.dev/head-holder" // the node that took it
	annoHosts      = "pullpath.dev/hosts"       // JSON: plan host → endpoint → role, as the holder saw them
	annoFullResult = "pullpath.dev/full-result" // JSON: the last full download's outcome
)

// microTime is the API's MicroTime format.
const microTime = "2006-01-02T15:04:05.000000Z07:00"

// Lease is the part of a coordination.k8s.io/v1 Lease the agent reads and
// writes.
type Lease struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name            string            `json:"name"`
		Namespace       string            `json:"namespace,omitempty"`
		ResourceVersion string            `json:"resourceVersion,omitempty"`
		Labels          map[string]string `json:"labels,omitempty"`
		Annotations     map[string]string `json:"annotations,omitempty"`
	} `json:"metadata"`
	Spec struct {
		HolderIdentity       string `json:"holderIdentity,omitempty"`
		LeaseDurationSeconds int    `json:"leaseDurationSeconds,omitempty"`
		AcquireTime          string `json:"acquireTime,omitempty"`
		RenewTime            string `json:"renewTime,omitempty"`
		LeaseTransitions     int    `json:"leaseTransitions,omitempty"`
	} `json:"spec"`
}

// Claim is what a node takes this round for one target.
type Claim struct {
	Head bool // blob HEADs (and the blob host's answer) for the pool
	Full bool // the pool's full download
	// Holder is the node that took the pool's last full download.
	Holder string
	// Hosts are the endpoints the last holder's pull touched (plan host →
	// "scheme://host:port" → role): every node walks them.
	Hosts map[string]map[string]string
}

// Coordinator hands each pool's rotating rounds to one node at a time
// through Leases.
type Coordinator struct {
	Client    *NodeClient
	Namespace string
}

// InClusterNamespace is the agent's namespace: $POD_NAMESPACE (the downward
// API), else the service account's, else "pullpath".
func InClusterNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if b, err := os.ReadFile(serviceAccountDir + "/namespace"); err == nil && strings.TrimSpace(string(b)) != "" {
		return strings.TrimSpace(string(b))
	}
	return "pullpath"
}

// LeaseName is the Lease of a pool and target: a readable prefix and a hash,
// within the 63 characters of a DNS label.
func LeaseName(pool, target string) string {
	clean := func(s string) string {
		var b strings.Builder
		for _, r := range strings.ToLower(s) {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
				b.WriteRune(r)
			} else {
				b.WriteByte('-')
			}
		}
		return strings.Trim(b.String(), "-")
	}
	name := "pullpath-" + clean(pool) + "-" + clean(target)
	if len(name) > 46 {
		name = strings.TrimRight(name[:46], "-")
	}
	return fmt.Sprintf("%s-%08x", name, uint32(nameHash("lease", pool, target)))
}

func (c *Coordinator) path(name string) string {
	p := "/apis/coordination.k8s.io/v1/namespaces/" + url.PathEscape(c.Namespace) + "/leases"
	if name != "" {
		p += "/" + url.PathEscape(name)
	}
	return p
}

func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// due says whether a rotating round last taken at `at` by `holder` is due
// for node: its period has passed and another node took the last one (the
// last holder takes it again only when nobody else did for two periods).
func due(now, at time.Time, holder, node string, period time.Duration) bool {
	if at.IsZero() {
		return true
	}
	age := now.Sub(at)
	return age >= period && (holder != node || age >= 2*period)
}

// Claim reads the pool's Lease for target and takes the blob-HEAD round
// (every headPeriod) or the full download (every fullPeriod; it includes
// the HEADs) when it is due and no other node took it first. A conflict
// (another node wrote first) is no claim and no error.
func (c *Coordinator) Claim(ctx context.Context, node, pool, target string, now time.Time, headPeriod, fullPeriod time.Duration) (Claim, error) {
	name := LeaseName(pool, target)
	var l Lease
	err := c.Client.do(ctx, http.MethodGet, c.path(name), "", nil, &l)
	if apiStatus(err) == http.StatusNotFound {
		// The first node of the pool: it takes the HEAD round.
		nl := Lease{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"}
		nl.Metadata.Name, nl.Metadata.Namespace = name, c.Namespace
		nl.Metadata.Labels = map[string]string{"app.kubernetes.io/name": "pullpath-monitor"}
		nl.Metadata.Annotations = map[string]string{annoPool: pool, annoTarget: target,
			annoHeadAt: now.UTC().Format(time.RFC3339Nano), annoHeadHolder: node}
		nl.Spec.HolderIdentity = node
		// The pool's first full download falls at a phase of its own
		// (a hash of pool and target), so that pools created together
		// do not download together.
		phase := time.Duration(0)
		if fullPeriod > 0 {
			phase = time.Duration(nameHash("full-phase", pool, target) % uint64(fullPeriod))
		}
		nl.Spec.AcquireTime = now.Add(-phase).UTC().Format(microTime)
		nl.Spec.RenewTime = nl.Spec.AcquireTime
		nl.Spec.LeaseDurationSeconds = max(int(fullPeriod.Seconds()), 1)
		err = c.Client.do(ctx, http.MethodPost, c.path(""), "application/json", nl, nil)
		if apiStatus(err) == http.StatusConflict {
			return Claim{}, nil
		}
		return Claim{Head: err == nil, Holder: node}, err
	}
	if err != nil {
		return Claim{}, err
	}
	cl := Claim{Holder: l.Spec.HolderIdentity}
	if h := l.Metadata.Annotations[annoHosts]; h != "" {
		_ = json.Unmarshal([]byte(h), &cl.Hosts)
	}
	fullDue := fullPeriod > 0 && due(now, parseTime(l.Spec.AcquireTime), l.Spec.HolderIdentity, node, fullPeriod)
	headDue := headPeriod > 0 && due(now, parseTime(l.Metadata.Annotations[annoHeadAt]), l.Metadata.Annotations[annoHeadHolder], node, headPeriod)
	if !fullDue && !headDue {
		return cl, nil
	}
	if l.Metadata.Annotations == nil {
		l.Metadata.Annotations = map[string]string{}
	}
	l.Metadata.Annotations[annoHeadAt] = now.UTC().Format(time.RFC3339Nano)
	l.Metadata.Annotations[annoHeadHolder] = node
	if fullDue {
		if l.Spec.HolderIdentity != node {
			l.Spec.LeaseTransitions++
		}
		l.Spec.HolderIdentity = node
		l.Spec.AcquireTime = now.UTC().Format(microTime)
		l.Spec.LeaseDurationSeconds = max(int(fullPeriod.Seconds()), 1)
	}
	l.Spec.RenewTime = now.UTC().Format(microTime)
	err = c.Client.do(ctx, http.MethodPut, c.path(name), "application/json", l, nil)
	if apiStatus(err) == http.StatusConflict {
		return cl, nil
	}
	if err != nil {
		return cl, err
	}
	cl.Head, cl.Full = true, fullDue
	if fullDue {
		cl.Holder = node
	}
	return cl, nil
}

// FullResult is the outcome of a pool's last full download, kept on the
// Lease for the pool's other nodes and for people reading it.
type FullResult struct {
	Node  string    `json:"node"`
	At    time.Time `json:"at"`
	OK    bool      `json:"ok"`
	Cause string    `json:"cause,omitempty"`
	Bytes int64     `json:"bytes"`
}

// Publish writes what the holder of a round learnt on the Lease: the hosts
// its pull touched (when they changed) and, after a full download, its
// outcome. A conflict is retried once with a fresh read.
func (c *Coordinator) Publish(ctx context.Context, pool, target string, hosts map[string]map[string]string, full *FullResult) error {
	name := LeaseName(pool, target)
	hj, _ := json.Marshal(hosts)
	var err error
	for range 2 {
		var l Lease
		if err = c.Client.do(ctx, http.MethodGet, c.path(name), "", nil, &l); err != nil {
			return err
		}
		if l.Metadata.Annotations == nil {
			l.Metadata.Annotations = map[string]string{}
		}
		changed := false
		if len(hosts) > 0 && l.Metadata.Annotations[annoHosts] != string(hj) {
			l.Metadata.Annotations[annoHosts], changed = string(hj), true
		}
		if full != nil {
			fj, _ := json.Marshal(full)
			l.Metadata.Annotations[annoFullResult], changed = string(fj), true
		}
		if !changed {
			return nil
		}
		err = c.Client.do(ctx, http.MethodPut, c.path(name), "application/json", l, nil)
		if apiStatus(err) != http.StatusConflict {
			return err
		}
	}
	return err
}

// DaemonSet is the agents' DaemonSet in Namespace, whose status says how
// many agents run (to share registry_budgets among them).
const DaemonSet = "pullpath-monitor"

// CountAgents is how many agents the DaemonSet schedules
// (status.desiredNumberScheduled): one read of one object.
func (c *Coordinator) CountAgents(ctx context.Context) (int, error) {
	var ds struct {
		Status struct {
			DesiredNumberScheduled int `json:"desiredNumberScheduled"`
		} `json:"status"`
	}
	p := "/apis/apps/v1/namespaces/" + url.PathEscape(c.Namespace) + "/daemonsets/" + DaemonSet
	if err := c.Client.do(ctx, http.MethodGet, p, "", nil, &ds); err != nil {
		return 0, err
	}
	return ds.Status.DesiredNumberScheduled, nil
}

// leaseUnavailable says whether an error means the agent may not use
// Leases at all (no RBAC, no API group) rather than a passing failure.
func leaseUnavailable(err error) bool {
	switch apiStatus(err) {
	case http.StatusForbidden, http.StatusUnauthorized, http.StatusNotFound, http.StatusMethodNotAllowed:
		return true
	}
	return false
}
