package nodelab_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pullpath/pullpath/internal/cluster"
	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/test/nodelab"
)

// privateZonePhase is the tier's last phase, on the nodes already there:
//
//   - pool A's path is repaired (its routes come back);
//   - pool B's route comes back, but its resolver is now the public view,
//     a network not linked to the lab's private zone: registry.lab.test
//     does not exist there;
//   - pool D gets the sandbox (pause) image by a real `ctr -n k8s.io images
//     import` of the image the tier built, while it still cannot reach MCR,
//     so the probe pod's sandbox starts and only the probe image fails.
//
// The replicas on pool B and on pool A's new node are replaced (the other
// free pools cordoned meanwhile), so the kubelets pull afresh: pool B's
// writes containerd's DNS failure, pool A's new node pulls. diagnose
// --probe must then name the DNS layer (owner dns) for pool B, on the
// kubelet's event and on pool B's probe Job, say ok on the repaired pool A,
// and report pool D's ErrImagePull of the probe image as evidence about
// that node's path.
func privateZonePhase(t *testing.T, ctx context.Context, w *world) {
	phase := time.Now()
	// containerd resolves with Go's resolver, which rereads resolv.conf at
	// most every 5 s: change it first, and pull no sooner than that.
	if err := w.nodes[poolB0.Name].SetResolvers(nodelab.PublicDNS); err != nil {
		t.Fatal(err)
	}
	resolverSeen := time.Now().Add(6 * time.Second)
	if err := w.nodes[poolD0.Name].ImportImage(ctx, pauseImage, w.pause); err != nil {
		t.Fatal(err)
	}
	t.Logf("pause imported into %s's containerd in %v", poolD0.Name, time.Since(phase).Round(time.Millisecond))
	for _, name := range []string{poolA0.Name, poolA1.Name, poolA2.Name, poolB0.Name} {
		if err := w.nodes[name].Fault(ctx, "route", "del", "throw", nodelab.RegistrySubnet.String()); err != nil {
			t.Fatal(err)
		}
	}

	// Replace the replicas on pool B and pool A's new node; the pools that
	// run none stay cordoned until the new ones are placed.
	w.cordon(ctx, poolC0.Name, true)
	w.cordon(ctx, poolD0.Name, true)
	time.Sleep(time.Until(resolverSeen))
	old := map[string]bool{}
	for _, p := range w.pods(ctx) {
		if p.Spec.NodeName == poolB0.Name || p.Spec.NodeName == poolA2.Name {
			old[p.Name] = true
			if err := w.cs.CoreV1().Pods(namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(old) != 2 {
		t.Fatalf("replicas on %s and %s = %d, want 2", poolB0.Name, poolA2.Name, len(old))
	}
	fresh := map[string]corev1.Pod{}
	w.poll(ctx, time.Minute, "new replicas on pool B and pool A's new node", func() bool {
		clear(fresh)
		for _, p := range w.pods(ctx) {
			switch {
			case old[p.Name] || p.DeletionTimestamp != nil:
			case p.Spec.NodeName == poolB0.Name || p.Spec.NodeName == poolA2.Name:
				fresh[p.Spec.NodeName] = p
			case p.Spec.NodeName == poolC0.Name || p.Spec.NodeName == poolD0.Name:
				t.Fatalf("the scheduler placed the new replica %s on cordoned %s", p.Name, p.Spec.NodeName)
			}
		}
		return len(fresh) == 2
	})
	w.cordon(ctx, poolC0.Name, false)
	w.cordon(ctx, poolD0.Name, false)
	ev := w.failedPull(ctx, fresh[poolB0.Name].Name)
	t.Logf("kubelet on pool B, resolver without the private zone: %s", ev.Message)
	w.record("private-zone", "poolb", ev)
	w.poll(ctx, time.Minute, "the new replica on pool A's repaired new node to run", func() bool {
		for _, p := range w.pods(ctx) {
			if p.Name == fresh[poolA2.Name].Name {
				return running(&p)
			}
		}
		return false
	})
	t.Logf("phase 7 (pool A repaired, pool B's resolver cannot see the private zone, pause on pool D): %v", time.Since(phase).Round(time.Millisecond))

	r := w.diagnose(ctx, "diagnosis of the private zone", "--keep")
	t.Logf("summary: %s", r.Summary)
	v := r.Verdict
	if v.OK || v.Layer != "dns" || v.Cause != "dns.nxdomain" || v.Owner != "dns" || v.Role != "registry" {
		t.Errorf("verdict = %s/%s role %s owner %s, want dns/dns.nxdomain at the registry, owner dns (the kubelet's event)", v.Layer, v.Cause, v.Role, v.Owner)
	}
	if r.Node != poolB0.Name {
		t.Errorf("landed node = %q, want %s", r.Node, poolB0.Name)
	}
	probed := newestProbes(t, r)
	w.probed = probed
	for pool, x := range map[string]struct {
		status             cluster.ProbeStatus
		ok                 bool
		layer, cause, role string
	}{
		"poola": {status: cluster.ProbeDone, ok: true},
		"poolb": {status: cluster.ProbeDone, layer: "dns", cause: "dns.nxdomain", role: "registry"},
		"poolc": {status: cluster.ProbeDone, layer: "route", cause: "route.unreachable", role: "blob"},
		"poold": {status: cluster.ProbeImagePull, layer: "route", cause: "route.unreachable", role: "registry"},
	} {
		nd := probed[pool]
		if nd == nil {
			t.Errorf("no probe ran on pool %s", pool)
			continue
		}
		pv := nd.Probe.Verdict
		if nd.Probe.Status != x.status || pv.OK != x.ok || !x.ok && (string(pv.Layer) != x.layer || pv.Cause != x.cause || string(pv.Role) != x.role) {
			t.Errorf("probe on %s (%s) = %s ok=%v %s/%s role %s, want %s ok=%v %s/%s role %s", nd.Name, pool, nd.Probe.Status, pv.OK, pv.Layer, pv.Cause, pv.Role, x.status, x.ok, x.layer, x.cause, x.role)
		}
		if pool == "poolb" && pv.Owner != "dns" {
			t.Errorf("probe on pool B: owner %s, want dns", pv.Owner)
		}
	}
	if nd := probed["poold"]; nd != nil && (!strings.Contains(nd.Probe.Error, "could not pull the probe image "+probeImage) || !strings.Contains(nd.Probe.Error, mcrHost)) {
		t.Errorf("probe on pool D: %q, want the probe image's own pull failure at %s (the sandbox image is there now)", nd.Probe.Error, mcrHost)
	}
	for _, rp := range r.Replicas {
		if rp.Pool == "poola" && rp.CacheOnly {
			t.Errorf("replica %s on repaired pool A: cache-only (%s)", rp.Pod, rp.Basis)
		}
	}
	w.probeImageEvents(ctx)
	checkProbePods(t, ctx, w, r)
	if _, stderr, code := w.runPullpath(ctx, "diagnose", "-n", namespace, "--cleanup"); code != 0 {
		t.Errorf("diagnose --cleanup: exit %d\n%s", code, stderr)
	}
	w.noProbesLeft(ctx, "after the private-zone diagnosis")
	w.checkExplain()
}

// probeImageEvents checks the kept probe pod on pool D: its sandbox ran
// (the imported pause), its container waits in ErrImagePull or
// ImagePullBackOff, and the kubelet's "Failed to pull image" event about
// the probe image is recorded as a golden input for explain, with the
// verdict of the node's real path (no route to MCR's network).
func (w *world) probeImageEvents(ctx context.Context) {
	w.t.Helper()
	pods, err := w.cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: cluster.LabelManagedBy + "=pullpath"})
	if err != nil {
		w.t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName != poolD0.Name {
			continue
		}
		reason := ""
		for _, cs := range p.Status.ContainerStatuses {
			if cs.State.Waiting != nil {
				reason = cs.State.Waiting.Reason
			}
		}
		if reason != "ErrImagePull" && reason != "ImagePullBackOff" {
			w.t.Errorf("probe pod %s on pool D waits with %q, want ErrImagePull or ImagePullBackOff", p.Name, reason)
		}
		var pull *corev1.Event
		for _, e := range w.podEvents(ctx, p.Name) {
			if e.Reason == "FailedCreatePodSandBox" {
				w.t.Errorf("probe pod %s on pool D: %s after pause was imported: %s", p.Name, e.Reason, e.Message)
			}
			if e.Reason == "Failed" && strings.HasPrefix(e.Message, "Failed to pull image \""+probeImage+"\"") {
				pull = &e
			}
		}
		if pull == nil {
			w.t.Errorf("probe pod %s on pool D: no kubelet event about pulling %s", p.Name, probeImage)
			return
		}
		w.t.Logf("kubelet on pool D, probe image: %s", pull.Message)
		if res := explain.Classify(pull.Message); res.Verdict.Layer != "route" || res.Verdict.Cause != "route.unreachable" || res.Verdict.Role != "registry" {
			w.t.Errorf("explain(kubelet's probe image failure on pool D) = %s/%s role %s, want route/route.unreachable at the registry (MCR)", res.Verdict.Layer, res.Verdict.Cause, res.Verdict.Role)
		}
		w.events = append(w.events, recorded{Scenario: "probe-image-unreachable", Pool: "poold", Reason: pull.Reason, Message: pull.Message,
			Layer: "route", Cause: "route.unreachable", Role: "registry"})
		return
	}
	w.t.Errorf("no kept probe pod on %s", poolD0.Name)
}
