package nodelab_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pullpath/pullpath/internal/cli/clustercmd"
	"github.com/pullpath/pullpath/internal/cluster"
	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/test/nodelab"
)

// The nodes of the pod-view rows, one pool each, so that each is the
// newest eligible node of its pool and gets both probes.
var (
	// pvDNS: the node's resolver is the public view (NXDOMAIN for the
	// private zone); its pods ask the cluster DNS, which forwards the zone.
	pvDNS = nodelab.NodeSpec{Name: "aks-pvdns-60000000-vmss000000", Pool: "pvdns", Mode: "User", NodeImageVersion: imageV1, Index: 11,
		ClusterDNS: []netip.Addr{nodelab.ClusterDNSAddr}, RootFiles: map[string][]byte{"etc/resolv.conf": []byte("nameserver " + nodelab.PublicDNS.String() + "\n")}}
	// pvRoute: no route from the node to the registry network; the pod
	// network has one (policy routing for the pod subnet, the "VPN
	// sidecar" path).
	pvRoute = nodelab.NodeSpec{Name: "aks-pvroute-61000000-vmss000000", Pool: "pvroute", Mode: "User", NodeImageVersion: imageV1, Index: 12,
		ClusterDNS: []netip.Addr{nodelab.ClusterDNSAddr}}
	// pvSame: no route to the registry network for the node nor its pods.
	pvSame = nodelab.NodeSpec{Name: "aks-pvsame-62000000-vmss000000", Pool: "pvsame", Mode: "User", NodeImageVersion: imageV1, Index: 13,
		ClusterDNS: []netip.Addr{nodelab.ClusterDNSAddr}}
	// pvOK: both paths work.
	pvOK = nodelab.NodeSpec{Name: "aks-pvok-63000000-vmss000000", Pool: "pvok", Mode: "User", NodeImageVersion: imageV1, Index: 14,
		ClusterDNS: []netip.Addr{nodelab.ClusterDNSAddr}}
	// pvPods: the node resolves privately, its pods ask a cluster DNS
	// without the forward zone.
	pvPods = nodelab.NodeSpec{Name: "aks-pvpods-64000000-vmss000000", Pool: "pvpods", Mode: "User", NodeImageVersion: imageV1, Index: 15,
		ClusterDNS: []netip.Addr{nodelab.PublicDNS}}
)

// podViewProbeImage is the probe image with a trust store of its own (the
// lab's CAs at /etc/ssl/certs/ca-certificates.crt, as a real image ships
// the public roots): the pod-view probe reads the pod's own /etc.
const podViewProbeImage = mcrHost + "/pullpath/pullpath-node:podview"

// TestPodViewOnRealNodes compares the pod's path and the node's on real
// kubelets: five pools, one row each, a Deployment with one replica per
// node, and one `diagnose --probe --pod-view` whose node probe and pod-view
// probe on each pool's node must part at the hop the row builds, with the
// kubelet's own event beside:
//
//   - pvdns: pods resolve the registry privately through the cluster DNS,
//     the node's resolver answers NXDOMAIN: parting hop dns, node-fails;
//   - pvroute: the pod subnet has a route to the registry network, the node
//     none: parting hop route, node-fails;
//   - pvsame: neither has a route: no parting hop, same;
//   - pvok: both work: ok;
//   - pvpods: the node pulls, pods cannot resolve the registry: parting hop
//     dns, pods-fail (the pull is fine; the application check is separate).
func TestPodViewOnRealNodes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	rows := []nodelab.NodeSpec{pvDNS, pvRoute, pvSame, pvOK, pvPods}
	w := startWorldFor(t, ctx, rows)
	added := time.Now()
	zone := w.lab.Registry[strings.Index(w.lab.Registry, ".")+1:]
	cdns, err := w.net.ServeClusterDNS(zone, netip.AddrPortFrom(nodelab.DNS, 53))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cdns.Close() })
	w.pushPodViewProbe(ctx)

	gw := func(s nodelab.NodeSpec) string {
		return netip.AddrFrom4([4]byte{198, 18, byte(100 + s.Index), 1}).String()
	}
	throw := []string{"route", "add", "throw", nodelab.RegistrySubnet.String()}
	faults := map[string][][]string{
		pvRoute.Name: {throw,
			{"rule", "add", "from", nodelab.PodSubnet(pvRoute.Index).String(), "lookup", "100", "pref", "100"},
			{"route", "add", nodelab.RegistrySubnet.String(), "via", gw(pvRoute), "table", "100"}},
		pvSame.Name: {throw},
	}
	for _, s := range rows {
		nd := w.addNode(ctx, s, faults[s.Name]...)
		if err := w.net.RoutePods(ctx, nd); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.cs.AppsV1().Deployments(namespace).Create(ctx, appDeployment(w.image, int32(len(rows))), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The kubelet's own event on every row's node.
	onNode := map[string]corev1.Pod{}
	w.poll(ctx, 2*time.Minute, "one replica on every row's node", func() bool {
		clear(onNode)
		for _, p := range w.pods(ctx) {
			if p.Spec.NodeName != "" {
				onNode[p.Spec.NodeName] = p
			}
		}
		return len(onNode) == len(rows)
	})
	for _, x := range []struct {
		s                  nodelab.NodeSpec
		layer, cause, role string // "" layer: the kubelet pulls
	}{
		{pvDNS, "dns", "dns.nxdomain", "registry"},
		{pvRoute, "route", "route.unreachable", "registry"},
		{pvSame, "route", "route.unreachable", "registry"},
		{pvOK, "", "", ""},
		{pvPods, "", "", ""},
	} {
		pod := onNode[x.s.Name]
		if x.layer == "" {
			ev := w.pulled(ctx, pod.Name)
			t.Logf("kubelet on %s: %s: %s", x.s.Pool, ev.Reason, ev.Message)
			continue
		}
		ev := w.failedPull(ctx, pod.Name)
		t.Logf("kubelet on %s: %s", x.s.Pool, ev.Message)
		if res := explain.Classify(ev.Message); string(res.Verdict.Layer) != x.layer || res.Verdict.Cause != x.cause || string(res.Verdict.Role) != x.role {
			t.Errorf("explain(kubelet's event on %s) = %s/%s role %s, want %s/%s role %s", x.s.Pool, res.Verdict.Layer, res.Verdict.Cause, res.Verdict.Role, x.layer, x.cause, x.role)
		}
	}
	t.Logf("rows ready (cluster DNS, 5 nodes, kubelets' events) %v after the control plane", time.Since(added).Round(time.Millisecond))

	phase := time.Now()
	r := w.diagnosePodView(ctx)
	t.Logf("diagnose --probe --pod-view: %v", time.Since(phase).Round(time.Millisecond))
	var text bytes.Buffer
	if err := clustercmd.WriteDiagnoseText(&text, r); err != nil {
		t.Fatal(err)
	}
	t.Logf("the report as text:\n%s", text.String())
	for _, x := range []struct {
		s       nodelab.NodeSpec
		div     cluster.Divergence
		parting string
		says    []string
	}{
		{pvDNS, cluster.DivergenceNodeFails, cluster.HopDNS, []string{"through cluster DNS " + nodelab.ClusterDNSAddr.String(), nodelab.Registry.String(), nodelab.PublicDNS.String(), "NXDOMAIN", "cannot fix it"}},
		{pvRoute, cluster.DivergenceNodeFails, cluster.HopRoute, []string{"over the pod network", "cannot fix it"}},
		{pvSame, cluster.DivergenceSame, "", []string{"fail the same way", "route.unreachable"}},
		{pvOK, cluster.DivergenceOK, "", []string{"the two paths agree"}},
		{pvPods, cluster.DivergencePodsFail, cluster.HopDNS, []string{"the pull is fine", "separate check"}},
	} {
		nd := nodeOf(r, x.s.Name)
		if nd == nil || nd.Probe == nil {
			t.Errorf("%s: no node probe on %s", x.s.Pool, x.s.Name)
			continue
		}
		pv := nd.Probe.PodView
		if pv == nil {
			t.Errorf("%s: no pod view", x.s.Pool)
			continue
		}
		if nd.Probe.Status != cluster.ProbeDone || pv.Status != cluster.ProbeDone {
			t.Errorf("%s: node probe %s (%s), pod view %s (%s); want both done", x.s.Pool, nd.Probe.Status, nd.Probe.Error, pv.Status, pv.Error)
			continue
		}
		if pv.Divergence != x.div || pv.PartingHop != x.parting {
			t.Errorf("%s: divergence %s, parting hop %q; want %s, %q\n%+v", x.s.Pool, pv.Divergence, pv.PartingHop, x.div, x.parting, pv.Hops)
		}
		for _, s := range x.says {
			if !strings.Contains(pv.Consequence, s) {
				t.Errorf("%s: consequence %q lacks %q", x.s.Pool, pv.Consequence, s)
			}
		}
		if !strings.Contains(r.Summary, "Pod view on "+x.s.Name) {
			t.Errorf("summary does not name the pod view on %s: %s", x.s.Name, r.Summary)
		}
	}
	if !strings.Contains(text.String(), "◀ parting hop") {
		t.Errorf("text report marks no parting hop")
	}
	w.checkPodViewPods(ctx)
	if _, stderr, code := w.runPullpath(ctx, "diagnose", "-n", namespace, "--cleanup"); code != 0 {
		t.Errorf("diagnose --cleanup: exit %d\n%s", code, stderr)
	}
	w.noProbesLeft(ctx, "after the pod-view diagnosis")
	t.Logf("pod-view rows after the shared start: %v; whole test: %v", time.Since(added).Round(time.Millisecond), time.Since(w.start).Round(time.Millisecond))
}

// pushPodViewProbe pushes the probe image with the lab's CA bundle as its
// own trust store to MCR.
func (w *world) pushPodViewProbe(ctx context.Context) {
	w.t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, d := range []string{"etc/", "etc/ssl/", "etc/ssl/certs/"} {
		if err := tw.WriteHeader(&tar.Header{Name: d, Mode: 0o755, Typeflag: tar.TypeDir}); err != nil {
			w.t.Fatal(err)
		}
	}
	if err := tw.WriteHeader(&tar.Header{Name: "etc/ssl/certs/ca-certificates.crt", Mode: 0o644, Size: int64(len(w.files.CABundle)), Typeflag: tar.TypeReg}); err != nil {
		w.t.Fatal(err)
	}
	if _, err := tw.Write(w.files.CABundle); err != nil {
		w.t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		w.t.Fatal(err)
	}
	b := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	if err != nil {
		w.t.Fatal(err)
	}
	img, err := mutate.AppendLayers(w.probeImg, layer)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := w.pushMCR(ctx, podViewProbeImage, img); err != nil {
		w.t.Fatal(err)
	}
}

// diagnosePodView runs diagnose --probe --pod-view (JSON, Jobs kept).
func (w *world) diagnosePodView(ctx context.Context) *cluster.Report {
	w.t.Helper()
	out, stderr, code := w.runPullpath(ctx, "diagnose", "deployment/app", "-n", namespace, "--probe", "--pod-view", "--probe-image", podViewProbeImage,
		"--probe-deadline", "60s", "-o", "json", "--keep")
	w.t.Logf("diagnose --probe --pod-view: exit %d\n%s", code, stderr)
	var r cluster.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		w.t.Fatalf("diagnose output is not a report: %v\n%s", err, out)
	}
	return &r
}

// checkPodViewPods checks the kept pod-view pods: an ordinary pod on each
// probed node, on the pod network with ClusterFirst DNS, no host path, no
// capability, not root, and run to the end by the kubelet.
func (w *world) checkPodViewPods(ctx context.Context) {
	w.t.Helper()
	pods, err := w.cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: cluster.LabelView + "=" + cluster.ViewPod})
	if err != nil {
		w.t.Fatal(err)
	}
	if len(pods.Items) != 5 {
		w.t.Errorf("pod-view pods = %d, want 5 (one per row)", len(pods.Items))
	}
	for _, p := range pods.Items {
		c := p.Spec.Containers[0]
		if p.Spec.HostNetwork || p.Spec.DNSPolicy != corev1.DNSClusterFirst || c.SecurityContext == nil || c.SecurityContext.RunAsNonRoot == nil || !*c.SecurityContext.RunAsNonRoot {
			w.t.Errorf("pod-view pod %s: hostNetwork %v, dnsPolicy %s, security %+v; want the pod network, ClusterFirst, non-root", p.Name, p.Spec.HostNetwork, p.Spec.DNSPolicy, c.SecurityContext)
		}
		for _, v := range p.Spec.Volumes {
			if v.HostPath != nil {
				w.t.Errorf("pod-view pod %s mounts host path %s", p.Name, v.HostPath.Path)
			}
		}
		ran := false
		for _, cs := range p.Status.ContainerStatuses {
			ran = ran || cs.State.Terminated != nil && !cs.State.Terminated.StartedAt.IsZero()
		}
		if !ran {
			w.t.Errorf("pod-view pod %s on %s did not run to the end: %+v", p.Name, p.Spec.NodeName, p.Status.ContainerStatuses)
		}
	}
}

// pulled waits for the kubelet's Pulled event on pod (or its container
// running from an image already there).
func (w *world) pulled(ctx context.Context, pod string) corev1.Event {
	var ev corev1.Event
	w.poll(ctx, 2*time.Minute, "a Pulled event on "+pod, func() bool {
		for _, e := range w.podEvents(ctx, pod) {
			if e.Reason == "Pulled" {
				ev = e
				return true
			}
		}
		return false
	})
	return ev
}

func nodeOf(r *cluster.Report, name string) *cluster.Node {
	for i := range r.Nodes {
		if r.Nodes[i].Name == name {
			return &r.Nodes[i]
		}
	}
	return nil
}
