package monitor

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/schematest"
)

func TestAggregate(t *testing.T) {
	broken := NodeCondition([]Result{{Target: "app", Verdict: failing("route.timeout", "route", "network", "registry", "reg.example:443")}})
	broken.LastTransitionTime = "2026-12-01T10:00:00Z"
	older := broken
	older.LastTransitionTime = "2026-12-01T09:00:00Z"
	ok := NodeCondition([]Result{{Target: "app", Verdict: okVerdict()}})
	st := Aggregate([]NodeRecord{
		{Name: "a-0", Pool: "a", Condition: &ok, WatchedPods: 2},
		{Name: "a-1", Pool: "a", Condition: &ok, WatchedPods: 1},
		{Name: "b-0", Pool: "b", Condition: &broken, WatchedPods: 0},
		{Name: "b-1", Pool: "b", Condition: &older, WatchedPods: 0},
		{Name: "c-0", Pool: "c", Condition: &broken, WatchedPods: 1},
		{Name: "c-1", Pool: "c", Condition: &ok, WatchedPods: 0},
		{Name: "d-0", Pool: "d", WatchedPods: -1},
		{Name: "e-0", Pool: "e", Condition: &ok, WatchedPods: 0},
		{Name: "e-1", Pool: "e", WatchedPods: 0},
	})
	if st.Kind != "MonitorStatus" || st.APIVersion != "pullpath.dev/v1alpha1" || st.Healthy {
		t.Errorf("envelope %q %q healthy %v", st.APIVersion, st.Kind, st.Healthy)
	}
	want := map[string]string{"a": PoolHealthy, "b": PoolBroken, "c": PoolPartial, "d": PoolUnknown, "e": PoolHealthy}
	for _, p := range st.Pools {
		if p.State != want[p.Name] {
			t.Errorf("pool %s: state %s, want %s", p.Name, p.State, want[p.Name])
		}
	}
	b := st.Pools[1]
	if b.Cause != "route.timeout" || b.Owner != "network" || b.Layer != "route" || b.Endpoint != "reg.example:443" || b.Since != "2026-12-01T09:00:00Z" {
		t.Errorf("pool b = %+v", b)
	}
	if !strings.Contains(b.Warning, "next scale-up") {
		t.Errorf("pool b runs nothing and is broken, want the scale-up warning; got %q", b.Warning)
	}
	if st.Pools[2].Warning != "" {
		t.Errorf("pool c runs the image, want no scale-up warning; got %q", st.Pools[2].Warning)
	}
	if !strings.Contains(st.Pools[3].Warning, "no agent") || !strings.Contains(st.Pools[4].Warning, "1 of 2 nodes") {
		t.Errorf("warnings: d %q, e %q", st.Pools[3].Warning, st.Pools[4].Warning)
	}
	var out bytes.Buffer
	if err := st.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"b     broken", "route.timeout", "network", "! pool b:"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("text output lacks %q:\n%s", s, out.String())
		}
	}
}

// TestAggregateReadsResultAnnotation: status takes layer, cause, owner, role
// and endpoint from the agent's structured result, not from the condition's
// prose; a node with no annotation (an older agent) is still read from its
// message. The annotation validates against its schema.
func TestAggregateReadsResultAnnotation(t *testing.T) {
	v := failing("tls.untrusted", "tls", "pki", "blob", "blob.example:443")
	res := []Result{{Target: "app", Image: "reg.example/app:1", Verdict: v, Since: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}}
	doc, err := json.Marshal(NewNodeResult("a-0", "a", res))
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate(t, "MonitorNodeResult", string(doc))
	schematest.RejectsEdits(t, "MonitorNodeResult", string(doc),
		schematest.Edit{Name: "kind renamed", Old: `"kind":"MonitorNodeResult"`, New: `"kind":"MonitorResult"`},
		schematest.Edit{Name: "cause dropped", Old: `"cause":"tls.untrusted",`, New: ``})

	cond := NodeCondition(res)
	// A message an old parser would misread: the annotation wins.
	cond.Message = "pullpath: app: layer route cause route.timeout owner network role registry endpoint wrong:443: prose"
	cond.LastTransitionTime = "2026-12-01T09:00:00Z"
	old := NodeCondition([]Result{{Target: "app", Verdict: failing("dns.nxdomain", "dns", "dns", "registry", "reg.example:443")}})
	old.LastTransitionTime = "2026-12-01T09:00:00Z"
	st := Aggregate([]NodeRecord{
		{Name: "a-0", Pool: "a", Condition: &cond, Result: string(doc)},
		{Name: "b-0", Pool: "b", Condition: &old, Result: `{"kind":"SomethingElse"}`},
	})
	a, b := st.Pools[0], st.Pools[1]
	if a.Layer != "tls" || a.Cause != "tls.untrusted" || a.Owner != "pki" || a.Role != "blob" || a.Endpoint != "blob.example:443" {
		t.Errorf("pool a from the annotation = %+v", a)
	}
	if b.Cause != "dns.nxdomain" || b.Layer != "dns" || b.Endpoint != "reg.example:443" {
		t.Errorf("pool b from the old message = %+v", b)
	}
}
