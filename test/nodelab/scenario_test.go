package nodelab_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/pullpath/pullpath/internal/cluster"
	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/test/nodelab"
)

// The nodes of the scenario, AKS style.
var (
	systemNode = nodelab.NodeSpec{Name: "aks-system-10000000-vmss000000", Pool: "system", Mode: "System", NodeImageVersion: imageV1, Index: 1, Taints: []string{"CriticalAddonsOnly=true:NoSchedule"}}
	poolA0     = nodelab.NodeSpec{Name: "aks-poola-20000000-vmss000000", Pool: "poola", Mode: "User", NodeImageVersion: imageV1, Index: 2}
	poolA1     = nodelab.NodeSpec{Name: "aks-poola-20000000-vmss000001", Pool: "poola", Mode: "User", NodeImageVersion: imageV1, Index: 3}
	poolB0     = nodelab.NodeSpec{Name: "aks-poolb-30000000-vmss000000", Pool: "poolb", Mode: "User", NodeImageVersion: imageV1, Index: 4}
	poolC0     = nodelab.NodeSpec{Name: "aks-poolc-40000000-vmss000000", Pool: "poolc", Mode: "User", NodeImageVersion: imageV1, Index: 5}
	poolD0     = nodelab.NodeSpec{Name: "aks-poold-50000000-vmss000000", Pool: "poold", Mode: "User", NodeImageVersion: imageV1, Index: 7}
	poolA2     = nodelab.NodeSpec{Name: "aks-poola-20000000-vmss000002", Pool: "poola", Mode: "User", NodeImageVersion: imageV1, Index: 6}
)

// TestRealNodes is diagnose's scale-up onto a broken pool, on real kubelets:
//
//  1. pool A's two nodes pull and run the app while the path works; the
//     tainted system pool runs nothing of it;
//  2. the autoscaler's TriggeredScaleUp (posted as the autoscaler writes
//     it) names pool B's scale set, and pool B's node, whose route to the
//     registry network is missing, gets the third replica: the kubelet
//     writes containerd's failure;
//  3. pool C, eligible and forgotten, runs nothing, and its route to the
//     blob host is missing;
//  4. once the kubelets have refreshed status.images (every 30 s),
//     `pullpath diagnose deployment/app -n shop --probe` runs next to the
//     cluster: its verdict must name the layer and role the kubelet's
//     event shows, pool A's replicas must be running only because cached,
//     the eligible pools must be those the scheduler uses, and the probe
//     Jobs on the landed node and on the newest node of every eligible pool
//     must agree with each pool's real failure (ok on pool A);
//  5. the lie: pool A's path goes away after its pull, a third pool A node
//     is added and gets the fourth replica: the cached nodes keep running,
//     the new one fails, and diagnose now marks pool A's replicas as
//     running only because cached, with the probe on pool A's newest node
//     failing as the kubelet does;
//  6. `--cleanup` leaves no Job or Pod, and the machine's sysctls and
//     iptables are as before.
func TestRealNodes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	w := startWorldFor(t, ctx, []nodelab.NodeSpec{systemNode, poolA0, poolA1, poolB0, poolC0, poolA2, poolD0})
	phase := time.Now()
	for _, s := range []nodelab.NodeSpec{systemNode, poolA0, poolA1} {
		w.addNode(ctx, s)
	}
	if _, err := w.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.cs.AppsV1().Deployments(namespace).Create(ctx, appDeployment(w.image, 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w.poll(ctx, 2*time.Minute, "2 replicas running on pool A", func() bool {
		n := 0
		for _, p := range w.pods(ctx) {
			if running(&p) && strings.HasPrefix(p.Spec.NodeName, "aks-poola-") {
				n++
			}
		}
		return n == 2
	})
	t.Logf("phase 1 (pool A pulls while the path works): %v", time.Since(phase).Round(time.Millisecond))

	// 2. Scale up: the third replica cannot be placed (one per node, the
	// system pool is tainted); the autoscaler names pool B's scale set.
	phase = time.Now()
	w.scale(ctx, 3)
	var pending corev1.Pod
	w.poll(ctx, time.Minute, "a pending third replica", func() bool {
		for _, p := range w.pods(ctx) {
			if p.Spec.NodeName == "" {
				pending = p
				return true
			}
		}
		return false
	})
	postScaleUp(t, ctx, w, &pending, "aks-poolb-30000000-vmss")
	w.addNode(ctx, poolB0, []string{"route", "add", "throw", nodelab.RegistrySubnet.String()})
	ev := w.failedPull(ctx, pending.Name)
	t.Logf("kubelet on pool B: %s", ev.Message)
	w.record("missing-route", "poolb", ev)
	t.Logf("phase 2 (scale-up onto pool B, no route to the registry): %v", time.Since(phase).Round(time.Millisecond))

	// 3. The forgotten pool: eligible, runs nothing, no route to the blob host.
	w.addNode(ctx, poolC0, []string{"route", "add", "throw", nodelab.Blob.String() + "/32"})

	// 4. status.images is refreshed every 30 s: wait for pool A to list it.
	phase = time.Now()
	w.poll(ctx, 90*time.Second, "pool A's status.images to list the app image", func() bool {
		return w.cachedOn(ctx, poolA0.Name, w.image) && w.cachedOn(ctx, poolA1.Name, w.image)
	})
	t.Logf("status.images listed the image after %v", time.Since(phase).Round(time.Millisecond))

	w.diagnoseText(ctx, "first diagnosis", scaleUpText())
	r := w.diagnose(ctx, "first diagnosis")
	checkDiagnosis(t, w, r, expectation{
		landed:    []string{poolB0.Name},
		verdict:   want{layer: "route", role: "registry"},
		byPool:    map[string]want{"poola": {ok: true}, "poolb": {layer: "route", role: "registry"}, "poolc": {layer: "route", role: "blob"}},
		cacheOnly: false,
	})
	w.checkExplain()

	// 5. The lie: pool A loses its path after the pull; a new pool A node
	// gets the next replica. The forgotten pool is cordoned while the
	// scheduler places it (one replica per node would otherwise put it
	// there), and uncordoned before diagnose runs.
	phase = time.Now()
	for _, name := range []string{poolA0.Name, poolA1.Name} {
		if err := w.nodes[name].Fault(ctx, "route", "add", "throw", nodelab.RegistrySubnet.String()); err != nil {
			t.Fatal(err)
		}
	}
	w.cordon(ctx, poolC0.Name, true)
	w.scale(ctx, 4)
	w.poll(ctx, time.Minute, "a pending fourth replica", func() bool {
		for _, p := range w.pods(ctx) {
			if p.Spec.NodeName == "" {
				pending = p
				return true
			}
		}
		return false
	})
	postScaleUp(t, ctx, w, &pending, "aks-poola-20000000-vmss")
	w.addNode(ctx, poolA2, []string{"route", "add", "throw", nodelab.RegistrySubnet.String()})
	ev = w.failedPull(ctx, pending.Name)
	t.Logf("kubelet on pool A's new node: %s", ev.Message)
	w.record("cache-lie", "poola", ev)
	w.cordon(ctx, poolC0.Name, false)
	// Pool D cannot reach MCR: the probe image itself cannot be pulled there.
	w.addNode(ctx, poolD0, []string{"route", "add", "throw", nodelab.MCRSubnet.String()})
	for _, p := range w.pods(ctx) {
		if strings.HasPrefix(p.Spec.NodeName, "aks-poola-2") && p.Spec.NodeName != poolA2.Name && !running(&p) {
			t.Errorf("replica %s on cached node %s stopped running after the path went away", p.Name, p.Spec.NodeName)
		}
	}
	t.Logf("phase 5 (pool A loses its path, a new pool A node fails): %v", time.Since(phase).Round(time.Millisecond))
	w.diagnoseText(ctx, "diagnosis of the lie", lieText())
	r = w.diagnose(ctx, "diagnosis of the lie", "--keep")
	checkDiagnosis(t, w, r, expectation{
		landed:    []string{poolB0.Name, poolA2.Name},
		verdict:   want{layer: "route", role: "registry"},
		byPool:    map[string]want{"poola": {layer: "route", role: "registry"}, "poolb": {layer: "route", role: "registry"}, "poolc": {layer: "route", role: "blob"}},
		newest:    map[string]string{"poola": poolA2.Name},
		cacheOnly: true,
	})
	w.checkExplain()
	// The probe image's own pull failure on pool D is evidence about that
	// node's path (the kubelet's text, classified), not a tool error.
	if nd := w.probed["poold"]; nd == nil {
		t.Errorf("no probe ran on pool D")
	} else if v := nd.Probe.Verdict; nd.Probe.Status != cluster.ProbeImagePull || string(v.Layer) != "route" || !strings.Contains(nd.Probe.Error, mcrHost) {
		t.Errorf("probe on pool D = %s %s/%s (%s), want %s with the route failure to %s", nd.Probe.Status, v.Layer, v.Cause, nd.Probe.Error, cluster.ProbeImagePull, mcrHost)
	}

	// The kept Jobs show where and how the probes ran.
	checkProbePods(t, ctx, w, r)

	// 6. --cleanup, then nothing of pullpath's is left.
	if _, stderr, code := w.runPullpath(ctx, "diagnose", "-n", namespace, "--cleanup"); code != 0 {
		t.Errorf("diagnose --cleanup: exit %d\n%s", code, stderr)
	}
	w.noProbesLeft(ctx, "after --cleanup")

	// Ctrl-C while the probes run leaves nothing either.
	p, out := w.startPullpath(ctx, "diagnose", "deployment/app", "-n", namespace, "--probe", "--probe-image", probeImage, "-o", "json")
	sel := metav1.ListOptions{LabelSelector: cluster.LabelManagedBy + "=pullpath"}
	w.poll(ctx, time.Minute, "diagnose to create its probe Jobs", func() bool {
		jobs, err := w.cs.BatchV1().Jobs(namespace).List(ctx, sel)
		return err == nil && len(jobs.Items) > 0
	})
	if err := p.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	code := p.Wait()
	stderr, _ := os.ReadFile(out + ".err")
	t.Logf("diagnose --probe after Ctrl-C: exit %d\n%s", code, stderr)
	w.noProbesLeft(ctx, "after Ctrl-C")

	// The blob fault in the kubelet's words: a pod pinned to the forgotten
	// pool, after the diagnoses, so that pool ran nothing while they ran.
	blob := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "blob-check", Namespace: namespace},
		Spec: corev1.PodSpec{NodeName: poolC0.Name, AutomountServiceAccountToken: ptr(false),
			Containers: []corev1.Container{{Name: "app", Image: w.image, ImagePullPolicy: corev1.PullIfNotPresent}}},
	}
	if _, err := w.cs.CoreV1().Pods(namespace).Create(ctx, blob, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ev = w.failedPull(ctx, blob.Name)
	t.Logf("kubelet on pool C: %s", ev.Message)
	w.record("blob-unreachable", "poolc", ev)
	w.checkExplain()

	// 7. The private zone not visible on pool B, the probe image (not
	// pause) unreachable on pool D, pool A repaired.
	privateZonePhase(t, ctx, w)
	w.writeGolden()
	t.Logf("whole scenario: %v", time.Since(w.start).Round(time.Millisecond))
}

// postScaleUp writes the cluster autoscaler's TriggeredScaleUp event on pod
// exactly as the autoscaler does: reason TriggeredScaleUp, message
// "pod triggered scale-up: %v" of its ScaleUpInfos, each "{%v %v->%v (max:
// %v)}" (kubernetes/autoscaler cluster-autoscaler/processors/status/
// eventing_scale_up_processor.go, processors/nodegroupset/
// nodegroup_set_processor.go). The autoscaler cannot run here.
func postScaleUp(t *testing.T, ctx context.Context, w *world, pod *corev1.Pod, group string) {
	now := metav1.Now()
	_, err := w.cs.CoreV1().Events(namespace).Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: pod.Name + ".", Namespace: namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: namespace, Name: pod.Name, UID: pod.UID, APIVersion: "v1"},
		Reason:         "TriggeredScaleUp", Type: corev1.EventTypeNormal,
		Message:        "pod triggered scale-up: [{" + group + " 0->1 (max: 3)}]",
		Source:         corev1.EventSource{Component: "cluster-autoscaler"},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

type want struct {
	ok          bool
	layer, role string
}

// expectation is what one diagnose run must find.
type expectation struct {
	landed  []string // any of these
	verdict want
	// byPool is each eligible pool's probe verdict.
	byPool map[string]want
	// newest names the node a pool's probe must run on, where it is not
	// the pool's only node.
	newest map[string]string
	// cacheOnly is whether pool A's first two replicas run only because
	// their nodes hold the image.
	cacheOnly bool
}

// diagnose runs `pullpath diagnose deployment/app -n shop --probe` next to
// the cluster and decodes its report.
func (w *world) diagnose(ctx context.Context, what string, extra ...string) *cluster.Report {
	w.t.Helper()
	phase := time.Now()
	out, stderr, code := w.runPullpath(ctx, append([]string{"diagnose", "deployment/app", "-n", namespace, "--probe", "--probe-image", probeImage,
		"--probe-deadline", "60s", "-o", "json"}, extra...)...)
	w.t.Logf("%s: diagnose --probe exit %d after %v\n%s", what, code, time.Since(phase).Round(time.Millisecond), stderr)
	var r cluster.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		w.t.Fatalf("diagnose output is not a report: %v\n%s", err, out)
	}
	w.last = &r
	return &r
}

// noProbesLeft waits until no Job or Pod of pullpath's is left in the
// namespace, as the API server says.
func (w *world) noProbesLeft(ctx context.Context, when string) {
	w.t.Helper()
	sel := metav1.ListOptions{LabelSelector: cluster.LabelManagedBy + "=pullpath"}
	var left []string
	deadline := time.Now().Add(time.Minute)
	for {
		jobs, err1 := w.cs.BatchV1().Jobs(namespace).List(ctx, sel)
		pods, err2 := w.cs.CoreV1().Pods(namespace).List(ctx, sel)
		if err1 == nil && err2 == nil && len(jobs.Items) == 0 && len(pods.Items) == 0 {
			return
		}
		left = left[:0]
		if err1 == nil {
			for _, j := range jobs.Items {
				left = append(left, "job/"+j.Name)
			}
		}
		if err2 == nil {
			for _, p := range pods.Items {
				left = append(left, fmt.Sprintf("pod/%s on %s (%s, deleting %v)", p.Name, p.Spec.NodeName, p.Status.Phase, p.DeletionTimestamp != nil))
			}
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("probe objects left %s after 1m: %v (errors %v, %v)", when, left, err1, err2)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// checkProbePods checks the kept probe pods: one per probed node, bound to
// it, run to the end by its kubelet (unless it could not pull the probe
// image), on the host network with the node's
// resolver and the host's directories mounted read-only.
func checkProbePods(t *testing.T, ctx context.Context, w *world, r *cluster.Report) {
	t.Helper()
	pods, err := w.cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: cluster.LabelManagedBy + "=pullpath"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	noImage := map[string]bool{}
	for _, n := range r.Nodes {
		if n.Probe != nil {
			want[n.Name] = true
			noImage[n.Name] = n.Probe.Status == cluster.ProbeImagePull
		}
	}
	got := map[string]bool{}
	for _, p := range pods.Items {
		got[p.Spec.NodeName] = true
		if !p.Spec.HostNetwork || p.Spec.DNSPolicy != corev1.DNSDefault {
			t.Errorf("probe pod %s: hostNetwork %v, dnsPolicy %s; want the host network and the node's resolver", p.Name, p.Spec.HostNetwork, p.Spec.DNSPolicy)
		}
		for _, m := range p.Spec.Containers[0].VolumeMounts {
			if strings.HasPrefix(m.MountPath, cluster.HostRoot) && !m.ReadOnly {
				t.Errorf("probe pod %s mounts %s read-write", p.Name, m.MountPath)
			}
		}
		ran := false
		for _, cs := range p.Status.ContainerStatuses {
			ran = ran || cs.State.Terminated != nil && !cs.State.Terminated.StartedAt.IsZero()
		}
		if !ran && !noImage[p.Spec.NodeName] {
			t.Errorf("probe pod %s on %s: the kubelet did not run it to the end: %+v", p.Name, p.Spec.NodeName, p.Status.ContainerStatuses)
		}
	}
	if !maps.Equal(want, got) {
		t.Errorf("probe pods ran on %v, want the probed nodes %v", got, want)
	}
}

// scale sets the Deployment's replicas through its scale subresource,
// again when the deployment controller changed the object in between (a
// conflict).
func (w *world) scale(ctx context.Context, replicas int32) {
	w.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sc, err := w.cs.AppsV1().Deployments(namespace).GetScale(ctx, "app", metav1.GetOptions{})
		if err != nil {
			return err
		}
		sc.Spec.Replicas = replicas
		_, err = w.cs.AppsV1().Deployments(namespace).UpdateScale(ctx, "app", sc, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		w.t.Fatalf("scaling to %d: %v", replicas, err)
	}
}

func (w *world) cordon(ctx context.Context, node string, on bool) {
	w.t.Helper()
	n, err := w.cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	n.Spec.Unschedulable = on
	if _, err := w.cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

func checkDiagnosis(t *testing.T, w *world, r *cluster.Report, x expectation) {
	t.Helper()
	t.Logf("summary: %s", r.Summary)
	if r.Verdict.OK || string(r.Verdict.Layer) != x.verdict.layer || string(r.Verdict.Role) != x.verdict.role {
		t.Errorf("verdict = %s/%s role %s, want %s at the %s (the kubelet's event)", r.Verdict.Layer, r.Verdict.Cause, r.Verdict.Role, x.verdict.layer, x.verdict.role)
	}
	if !slices.Contains(x.landed, r.Node) {
		t.Errorf("landed node = %q, want one of %v", r.Node, x.landed)
	}
	if r.Trigger.Kind != cluster.TriggerScaleUp || !strings.Contains(r.Trigger.Evidence, "TriggeredScaleUp") {
		t.Errorf("trigger = %+v, want scale-up from the autoscaler's event", r.Trigger)
	}
	// Eligible pools are where the scheduler placed or could place pods.
	eligible := map[string]bool{}
	for _, p := range r.Pools {
		eligible[p.Name] = p.Eligible
	}
	for pool, want := range map[string]bool{"system": false, "poola": true, "poolb": true, "poolc": true} {
		if eligible[pool] != want {
			t.Errorf("pool %s eligible = %v, want %v (the scheduler's placement)", pool, eligible[pool], want)
		}
	}
	for _, p := range w.pods(context.Background()) {
		if p.Spec.NodeName != "" && !eligible[poolOf(p.Spec.NodeName)] {
			t.Errorf("the scheduler placed %s on %s, a pool diagnose calls ineligible", p.Name, p.Spec.NodeName)
		}
	}
	// Pool A's cached replicas: running only because cached, or not.
	n := 0
	for _, rp := range r.Replicas {
		if rp.Node == poolA0.Name || rp.Node == poolA1.Name {
			t.Logf("replica %s on %s: cache-only %v (%s)", rp.Pod, rp.Node, rp.CacheOnly, rp.Basis)
			if rp.CacheOnly != x.cacheOnly {
				t.Errorf("replica %s on %s: cache-only = %v, want %v (%s)", rp.Pod, rp.Node, rp.CacheOnly, x.cacheOnly, rp.Basis)
			}
			n++
		}
	}
	if n != 2 {
		t.Errorf("replicas on pool A's cached nodes = %d, want 2: %+v", n, r.Replicas)
	}
	// Probe Jobs: on the landed node and the newest node of every eligible
	// pool, each agreeing with that pool's real path.
	probed := newestProbes(t, r)
	if probed["system"] != nil {
		t.Errorf("a probe ran on the ineligible system pool")
	}
	for pool, want := range x.byPool {
		nd := probed[pool]
		if nd == nil {
			t.Errorf("no probe ran on pool %s", pool)
			continue
		}
		if name := x.newest[pool]; name != "" && nd.Name != name {
			t.Errorf("pool %s's newest probe ran on %s, want %s", pool, nd.Name, name)
		}
		v := nd.Probe.Verdict
		switch {
		case nd.Probe.Status != cluster.ProbeDone:
			t.Errorf("probe on %s: status %s (%s), want done", nd.Name, nd.Probe.Status, nd.Probe.Error)
		case want.ok && !v.OK:
			t.Errorf("probe on %s (%s): %s/%s, want ok", nd.Name, pool, v.Layer, v.Cause)
		case !want.ok && (v.OK || string(v.Layer) != want.layer || string(v.Role) != want.role):
			t.Errorf("probe on %s (%s): %s/%s role %s, want %s at %s", nd.Name, pool, v.Layer, v.Cause, v.Role, want.layer, want.role)
		}
	}
	w.probed = probed
}

// checkExplain classifies the kubelets' own text offline: it must agree
// with the probe Job on the same pool.
func (w *world) checkExplain() {
	for i := range w.events {
		e := &w.events[i]
		if e.Layer != "" {
			continue
		}
		if nd := w.probed[e.Pool]; nd != nil {
			e.Layer, e.Cause, e.Role = string(nd.Probe.Verdict.Layer), nd.Probe.Verdict.Cause, string(nd.Probe.Verdict.Role)
		}
		res := explain.Classify(e.Message)
		if string(res.Verdict.Layer) != e.Layer || string(res.Verdict.Role) != e.Role || res.Verdict.Cause != e.Cause {
			w.t.Errorf("explain(kubelet's %s on %s) = %s/%s role %s, the probe says %s/%s role %s", e.Reason, e.Pool, res.Verdict.Layer, res.Verdict.Cause, res.Verdict.Role, e.Layer, e.Cause, e.Role)
		}
	}
}

func poolOf(node string) string {
	parts := strings.Split(node, "-")
	if len(parts) < 2 {
		return ""
	}
	return parts[1]
}

func (w *world) record(scenario, pool string, e corev1.Event) {
	w.events = append(w.events, recorded{Scenario: scenario, Pool: pool, Reason: e.Reason, Message: e.Message})
}

const goldenFile = "testdata/kubelet-messages.json"

// writeGolden keeps the kubelets' messages (with -update) as golden inputs
// for explain (TestKubeletMessagesExplain).
func (w *world) writeGolden() {
	if !*update {
		return
	}
	b, err := json.MarshalIndent(w.events, "", "  ")
	if err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(goldenFile), append(b, '\n'), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// TestKubeletMessagesExplain classifies what real kubelets and containerd
// wrote in the node tier (testdata/kubelet-messages.json, recorded with
// -update) and checks explain gives the verdict the probe Job gave on the
// same pool. It needs no root.
func TestKubeletMessagesExplain(t *testing.T) {
	b, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Skipf("no recorded kubelet messages (%v): run the node tier with -update", err)
	}
	var recs []recorded
	if err := json.Unmarshal(b, &recs); err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 {
		t.Fatal("no recorded kubelet messages")
	}
	for _, e := range recs {
		t.Run(e.Scenario, func(t *testing.T) {
			res := explain.Classify(e.Message)
			if string(res.Verdict.Layer) != e.Layer || string(res.Verdict.Role) != e.Role || res.Verdict.Cause != e.Cause {
				t.Errorf("Classify(%q) = %s/%s role %s, the probe said %s/%s role %s", e.Message, res.Verdict.Layer, res.Verdict.Cause, res.Verdict.Role, e.Layer, e.Cause, e.Role)
			}
		})
	}
}

// newestProbes logs every probe of r and returns, per pool, the probed node
// created last (the pool's newest node; a same-pool landed node is older).
func newestProbes(t *testing.T, r *cluster.Report) map[string]*cluster.Node {
	t.Helper()
	probed := map[string]*cluster.Node{}
	for i := range r.Nodes {
		nd := &r.Nodes[i]
		if nd.Probe == nil {
			continue
		}
		v := nd.Probe.Verdict
		t.Logf("probe on %s (%s): %s ok=%v %s/%s role %s owner %s endpoint %s %s", nd.Name, nd.Pool, nd.Probe.Status, v.OK, v.Layer, v.Cause, v.Role, v.Owner, v.Endpoint, nd.Probe.Error)
		if cur := probed[nd.Pool]; cur == nil || nd.Created.After(cur.Created) {
			probed[nd.Pool] = nd
		}
	}
	return probed
}
