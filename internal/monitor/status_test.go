package monitor

import (
	"bytes"
	"strings"
	"testing"
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
