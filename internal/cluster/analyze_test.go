package cluster

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/pullpath/pullpath/internal/cluster/clustertest"
	"github.com/pullpath/pullpath/internal/cluster/kube"
	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/internal/verdict"
)

// classify is the real message classifier, the one `pullpath diagnose` uses.
func classify(msg string) verdict.Verdict { return explain.Classify(msg).Verdict }

var fixtureNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// fakeClientset holds the fixture's objects in client-go's fake clientset.
func fakeClientset(f *clustertest.Fixture) kube.Interface {
	return clustertest.FromClientset(fake.NewSimpleClientset(f.Objects()...))
}

func diagnoseFake(t *testing.T, f *clustertest.Fixture, ref WorkloadRef) *Report {
	t.Helper()
	in, err := Gather(context.Background(), fakeClientset(f), ref)
	if err != nil {
		t.Fatalf("Gather(%s): %v", ref, err)
	}
	return Analyze(in, WithClassifier(classify), WithNow(f.Now))
}

type poolRow struct {
	Eligible bool
	Nodes    int
	Cached   int
	Status   PoolStatus
	Platform bool
}

func poolRows(r *Report) map[string]poolRow {
	out := map[string]poolRow{}
	for _, p := range r.Pools {
		out[p.Name] = poolRow{p.Eligible, p.Nodes, p.Cached, p.Status, p.Platform != ""}
	}
	return out
}

func TestAnalyzeDeploymentScaleUp(t *testing.T) {
	f := clustertest.AKS(fixtureNow)
	r := diagnoseFake(t, f, WorkloadRef{Kind: KindDeployment, Name: clustertest.Deployment, Namespace: clustertest.Namespace})

	if r.Verdict.OK || r.Verdict.Cause != "route.timeout" || r.Verdict.Endpoint != "myacr.azurecr.io:443" || r.Verdict.Owner != verdict.OwnerNetwork {
		t.Errorf("verdict = %+v, want route.timeout at myacr.azurecr.io:443 owned by network", r.Verdict)
	}
	if r.Image != clustertest.Image || r.Registry != "myacr.azurecr.io" {
		t.Errorf("image, registry = %q, %q", r.Image, r.Registry)
	}
	if r.Node != clustertest.NewNode {
		t.Errorf("landed node = %q, want %q", r.Node, clustertest.NewNode)
	}
	if r.Trigger.Kind != TriggerScaleUp || r.Trigger.Node != clustertest.NewNode || r.Trigger.Pool != "user2" || !strings.Contains(r.Trigger.Evidence, "TriggeredScaleUp") {
		t.Errorf("trigger = %+v, want scale-up on %s with the autoscaler event as evidence", r.Trigger, clustertest.NewNode)
	}
	want := map[string]poolRow{
		"system":  {Eligible: false, Nodes: 2, Cached: 0, Status: PoolIneligible},
		"user1":   {Eligible: true, Nodes: 3, Cached: 3, Status: PoolCachedOnly},
		"user2":   {Eligible: true, Nodes: 2, Cached: 0, Status: PoolBroken},
		"armpool": {Eligible: true, Nodes: 1, Cached: 0, Status: PoolUntested, Platform: true},
	}
	if diff := cmp.Diff(want, poolRows(r)); diff != "" {
		t.Errorf("pools (-want +got):\n%s", diff)
	}
	for _, p := range r.Pools {
		if p.Name == "system" && !slices.Contains(p.Reasons, "taint CriticalAddonsOnly=true:NoSchedule not tolerated") {
			t.Errorf("system pool reasons = %v, want the untolerated taint", p.Reasons)
		}
		if p.Name == "armpool" && p.NotListed != 1 {
			t.Errorf("armpool not_listed = %d, want 1 (its list is full)", p.NotListed)
		}
	}
	wantCache := CacheMap{
		Digests:   []string{clustertest.ImageDigest},
		Cached:    []string{"aks-user1-23456789-vmss000000", "aks-user1-23456789-vmss000001", "aks-user1-23456789-vmss000002"},
		Missing:   []string{"aks-system-12345678-vmss000000", "aks-system-12345678-vmss000001", clustertest.NewNode, clustertest.NewNode2},
		NotListed: []string{"aks-armpool-45678901-vmss000000"},
		Since:     fixtureNow.Add(-3 * time.Hour),
	}
	sortCache := func(c CacheMap) CacheMap {
		for _, s := range [][]string{c.Cached, c.Missing, c.NotListed} {
			slices.Sort(s)
		}
		return c
	}
	if diff := cmp.Diff(sortCache(wantCache), sortCache(r.Cache)); diff != "" {
		t.Errorf("cache (-want +got):\n%s", diff)
	}
	if len(r.Replicas) != 3 {
		t.Fatalf("replicas = %d, want 3", len(r.Replicas))
	}
	for _, rp := range r.Replicas {
		if !rp.CacheOnly || rp.Pool != "user1" {
			t.Errorf("replica %+v: want cache-only on user1", rp)
		}
	}
	if !strings.Contains(r.Summary, "healthy only because the image is cached on 3 old node(s)") ||
		!strings.Contains(r.Summary, "every eligible node created since 2026-11-29 09:00 UTC lacks it") {
		t.Errorf("summary = %q, want the cached-image lie said plainly", r.Summary)
	}

	// The first detailed "Failed to pull image" of each pod is kept and
	// classified; the back-off is there too but says nothing.
	detailed := 0
	for _, e := range r.Events {
		if strings.HasPrefix(e.Message, "Failed to pull image") {
			detailed++
			if e.Verdict == nil || e.Verdict.Cause != "route.timeout" {
				t.Errorf("event %q verdict = %+v, want route.timeout", e.Message, e.Verdict)
			}
		}
		if e.Reason == "BackOff" && (e.Verdict == nil || e.Verdict.Cause != "unknown.backoff") {
			t.Errorf("back-off event verdict = %+v, want unknown.backoff", e.Verdict)
		}
	}
	if detailed != 2 {
		t.Errorf("detailed pull failures kept = %d, want 2 (one per failing pod)", detailed)
	}

	// The pull identity, and no secret of it.
	type psRow struct {
		Source         string
		Found, Matches bool
		Entry          string
	}
	gotPS := map[string]psRow{}
	for _, ps := range r.Identity.PullSecrets {
		gotPS[ps.Name] = psRow{ps.Source, ps.Found, ps.Matches, ps.Entry}
	}
	wantPS := map[string]psRow{
		"acr-pull":       {"pod", true, true, "myacr.azurecr.io"},
		"legacy-pull":    {"serviceaccount", false, false, ""},
		"dockerhub-pull": {"serviceaccount", true, false, ""},
	}
	if diff := cmp.Diff(wantPS, gotPS); diff != "" {
		t.Errorf("pull secrets (-want +got):\n%s", diff)
	}
	if r.Identity.Relevant {
		t.Errorf("identity relevant = true, want false for a route timeout (credentials are irrelevant)")
	}
	if !strings.Contains(r.Identity.Provider, "acr-credential-provider") {
		t.Errorf("provider = %q, want acr-credential-provider", r.Identity.Provider)
	}
	js, _ := json.Marshal(r)
	for _, secret := range []string{clustertest.SecretToken, "MDAwMDAwMDAtMDAw", "aHViOmh1Yi1wYXNzd29yZA"} {
		if strings.Contains(string(js), secret) {
			t.Errorf("report JSON contains secret material %q", secret)
		}
	}
}

func TestAnalyzeBarePodUnauthorized(t *testing.T) {
	f := clustertest.AKS(fixtureNow)
	r := diagnoseFake(t, f, WorkloadRef{Kind: KindPod, Name: clustertest.BarePod, Namespace: clustertest.Namespace})
	// "failed to fetch oauth token": containerd sent credentials (the
	// OAuth POST), and they were refused.
	if r.Verdict.Cause != "auth.bad-credentials" || r.Verdict.Owner != verdict.OwnerIdentity {
		t.Errorf("verdict = %+v, want auth.bad-credentials owned by identity", r.Verdict)
	}
	if !r.Identity.Relevant {
		t.Errorf("identity relevant = false, want true for a 401")
	}
	if len(r.Identity.PullSecrets) != 0 || r.Identity.ServiceAccount != "default" || !r.Identity.ServiceAccountFound {
		t.Errorf("identity = %+v, want no pull secrets and the default service account", r.Identity)
	}
	if r.Trigger.Kind != TriggerNone || !strings.Contains(r.Trigger.Evidence, "never pulled anywhere") {
		t.Errorf("trigger = %+v, want none: no node ever held the image", r.Trigger)
	}
	if !slices.ContainsFunc(r.Next, func(s string) bool { return strings.Contains(s, "acr-credential-provider") }) {
		t.Errorf("next = %q, want the credential provider expectation", r.Next)
	}
}

func TestAnalyzeNoFailure(t *testing.T) {
	f := clustertest.AKS(fixtureNow)
	// Keep only the running replicas.
	f.Pods = f.Pods[:3]
	r := diagnoseFake(t, f, WorkloadRef{Kind: KindDeployment, Name: clustertest.Deployment, Namespace: clustertest.Namespace})
	if !r.Verdict.OK || r.Trigger.Kind != TriggerNone {
		t.Errorf("verdict = %+v, trigger = %+v, want ok and none", r.Verdict, r.Trigger)
	}
	if !strings.Contains(r.Summary, "run it from their cache") {
		t.Errorf("summary = %q, want the cache caveat", r.Summary)
	}
	for _, rp := range r.Replicas {
		if rp.CacheOnly {
			t.Errorf("replica %s cache-only with no failure anywhere", rp.Pod)
		}
	}
}

// TestTriggerKinds turns the fixture's scale-up into a pool upgrade and a
// node replacement.
func TestTriggerKinds(t *testing.T) {
	ref := WorkloadRef{Kind: KindDeployment, Name: clustertest.Deployment, Namespace: clustertest.Namespace}
	moveToUser1 := func(f *clustertest.Fixture, version string) {
		for i := range f.Nodes {
			if n := &f.Nodes[i]; n.Name == clustertest.NewNode || n.Name == clustertest.NewNode2 {
				n.Labels["kubernetes.azure.com/agentpool"] = "user1"
				n.Labels["kubernetes.azure.com/node-image-version"] = version
			}
		}
	}
	dropScaleUpEvents := func(f *clustertest.Fixture) {
		f.Events = slices.DeleteFunc(f.Events, func(e corev1.Event) bool { return e.Reason == "TriggeredScaleUp" })
	}
	tests := []struct {
		name   string
		mutate func(f *clustertest.Fixture)
		want   TriggerKind
		detail string
	}{
		{"scale-up", func(*clustertest.Fixture) {}, TriggerScaleUp, "TriggeredScaleUp"},
		{"scale-up without autoscaler event", dropScaleUpEvents, TriggerScaleUp, "the 3 node(s) that hold the image"},
		{"pool upgrade", func(f *clustertest.Fixture) {
			moveToUser1(f, "AKSUbuntu-2204gen2containerd-202411.12.0")
			dropScaleUpEvents(f)
		}, TriggerPoolUpgrade, "runs node image AKSUbuntu-2204gen2containerd-202411.12.0"},
		{"node replacement", func(f *clustertest.Fixture) {
			moveToUser1(f, "AKSUbuntu-2204gen2containerd-202409.23.0")
			dropScaleUpEvents(f)
			gone := "aks-user1-23456789-vmss000003"
			f.Events = append(f.Events, corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{Name: gone + ".removing", Namespace: "default"},
				InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: gone},
				Reason:         "RemovingNode", Type: "Normal", Message: "Node " + gone + " event: Removing Node " + gone + " from Controller",
				FirstTimestamp: metav1.NewTime(fixtureNow.Add(-3*time.Hour - 10*time.Minute)),
				LastTimestamp:  metav1.NewTime(fixtureNow.Add(-3*time.Hour - 10*time.Minute)),
			})
		}, TriggerNodeReplacement, "aks-user1-23456789-vmss000003 is gone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := clustertest.AKS(fixtureNow)
			tt.mutate(f)
			r := diagnoseFake(t, f, ref)
			if r.Trigger.Kind != tt.want || !strings.Contains(r.Trigger.Evidence, tt.detail) {
				t.Errorf("trigger = %+v, want %s with evidence containing %q", r.Trigger, tt.want, tt.detail)
			}
		})
	}
}

func TestGatherNotFound(t *testing.T) {
	f := clustertest.AKS(fixtureNow)
	_, err := Gather(context.Background(), fakeClientset(f), WorkloadRef{Kind: KindDeployment, Name: "nope", Namespace: clustertest.Namespace})
	if err == nil || !strings.Contains(err.Error(), "deployment/nope") {
		t.Fatalf("Gather(missing) error = %v, want not found naming deployment/nope", err)
	}
}

// TestAnalyzeWithProbes feeds probe results as RunProbes would return them:
// the probe on the landed node outranks the event text (the node's own
// evidence beats the kubelet's message), a passing probe
// makes its pool fine, and a platform failure shows up on the arm64 pool.
func TestAnalyzeWithProbes(t *testing.T) {
	f := clustertest.AKS(fixtureNow)
	in, err := Gather(context.Background(), fakeClientset(f), WorkloadRef{Kind: KindDeployment, Name: clustertest.Deployment, Namespace: clustertest.Namespace})
	if err != nil {
		t.Fatal(err)
	}
	done := func(cause string) *ProbeResult {
		v := verdict.OKVerdict("the pull path works")
		if cause != "" {
			v = verdict.FromError(verdict.Errorf(cause, verdict.RoleRegistry, "myacr.azurecr.io:443", ""))
		}
		return &ProbeResult{Job: "j", Status: ProbeDone, Verdict: v}
	}
	in.Probes = map[string]*ProbeResult{
		clustertest.NewNode:               done("route.unreachable"),
		clustertest.NewNode2:              done("route.unreachable"),
		"aks-user1-23456789-vmss000002":   done(""),
		"aks-armpool-45678901-vmss000000": done("manifest.platform"),
	}
	r := Analyze(in, WithClassifier(classify), WithNow(fixtureNow))
	if r.Verdict.Cause != "route.unreachable" {
		t.Errorf("verdict = %s, want the landed node's probe (route.unreachable) over the event's route.timeout", r.Verdict.Cause)
	}
	want := map[string]PoolStatus{"system": PoolIneligible, "user1": PoolFine, "user2": PoolBroken, "armpool": PoolBroken}
	if diff := poolDiff(r, want); diff != "" {
		t.Error(diff)
	}
	for _, rp := range r.Replicas {
		if rp.CacheOnly || !strings.Contains(rp.Basis, "works") {
			t.Errorf("replica %+v: want not cache-only, a probe in its pool pulled", rp)
		}
	}
	if !strings.Contains(r.Summary, "Fine (probed): user1") || !strings.Contains(r.Summary, "Broken: armpool, user2") {
		t.Errorf("summary = %q, want broken and fine pools named", r.Summary)
	}
	for _, n := range r.Next {
		if strings.Contains(n, "--probe`") {
			t.Errorf("next steps still suggest --probe after probing: %q", n)
		}
	}
}
