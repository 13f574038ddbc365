package monitor

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/pullpath/pullpath/internal/verdict"
)

// ResultAnnotation is the node annotation that holds the agent's result as
// a versioned document (kind MonitorNodeResult, schema/
// monitornoderesult.schema.json): what `pullpath monitor status` reads,
// instead of parsing the condition's message.
const ResultAnnotation = "pullpath.dev/monitor-result"

// NodeResult is the document in ResultAnnotation. It changes only when a
// target's state does (no timestamps of every round), so the agent writes
// it on transitions only.
type NodeResult struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Node       string         `json:"node"`
	Pool       string         `json:"pool"`
	Targets    []TargetResult `json:"targets"`
}

// TargetResult is one target's state on the node.
type TargetResult struct {
	Target   string        `json:"target"`
	Image    string        `json:"image"`
	OK       bool          `json:"ok"`
	Layer    verdict.Layer `json:"layer,omitempty"`
	Cause    string        `json:"cause,omitempty"`
	Owner    verdict.Owner `json:"owner,omitempty"`
	Role     verdict.Role  `json:"role,omitempty"`
	Endpoint string        `json:"endpoint,omitempty"`
	Summary  string        `json:"summary,omitempty"`
	Since    time.Time     `json:"since"`
}

// NewNodeResult is the document of results.
func NewNodeResult(node, pool string, results []Result) NodeResult {
	d := NodeResult{APIVersion: "pullpath.dev/v1alpha1", Kind: "MonitorNodeResult", Node: node, Pool: pool, Targets: []TargetResult{}}
	for _, r := range results {
		v := r.Verdict
		tr := TargetResult{Target: r.Target, Image: r.Image, OK: v.OK, Since: r.Since.UTC().Truncate(time.Second)}
		if !v.OK {
			tr.Layer, tr.Cause, tr.Owner, tr.Role, tr.Endpoint, tr.Summary = v.Layer, v.Cause, v.Owner, v.Role, v.Endpoint, v.Summary
			if len(tr.Summary) > 512 {
				tr.Summary = tr.Summary[:509] + "..."
			}
		}
		d.Targets = append(d.Targets, tr)
	}
	return d
}

// ParseNodeResult reads a ResultAnnotation value; ok is false when it is not
// a MonitorNodeResult this version understands.
func ParseNodeResult(s string) (NodeResult, bool) {
	var d NodeResult
	if s == "" || json.Unmarshal([]byte(s), &d) != nil || d.Kind != "MonitorNodeResult" || d.APIVersion != "pullpath.dev/v1alpha1" {
		return NodeResult{}, false
	}
	return d, true
}

// SetResult writes the result annotation on the agent's node (a JSON merge
// patch of metadata.annotations; other annotations stay).
func (c *NodeClient) SetResult(ctx context.Context, doc string) error {
	patch := map[string]any{"metadata": map[string]any{"annotations": map[string]string{ResultAnnotation: doc}}}
	return c.do(ctx, http.MethodPatch, "/api/v1/nodes/"+url.PathEscape(c.Node), "application/merge-patch+json", patch, nil)
}
