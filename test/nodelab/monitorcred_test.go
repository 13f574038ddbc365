package nodelab_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/internal/monitor"
	"github.com/pullpath/pullpath/internal/nodeview/credtest"
	"github.com/pullpath/pullpath/internal/tiers"
	"github.com/pullpath/pullpath/test/nodelab"
)

// identityFile is where the lab's provider reads its credential, as AKS's
// acr-credential-provider reads /etc/kubernetes/azure.json. It is under
// /var/lib/kubelet, next to AKS's provider config and bin dir, because the
// lab binds node directories only over directories this machine has, and
// it has no /etc/kubernetes.
const identityFile = "/var/lib/kubelet/identity.json"

// providerCache is the provider answers' cacheDuration, for the kubelet
// and the agents alike: short, so that a broken identity shows within the
// test, and longer than the agents' interval, so that the agents' cache
// is used.
const providerCache = 10 * time.Second

// annotationScrape is Prometheus' annotation discovery of pods as the
// kubernetes-pods job of Prometheus' example configuration and of the
// prometheus-community chart set it up: keep the pods annotated
// prometheus.io/scrape "true", scrape the annotated port and path, map every
// pod label onto the target, and add namespace, pod and node.
//
// Debian's Prometheus (2.42) is built without Kubernetes service discovery,
// so the targets come from sdFile, which podTargets fills with what the
// kubernetes_sd pod role gives for the cluster's pods: the same addresses
// and __meta_kubernetes_pod_* labels. The relabelling is the job's own.
func annotationScrape(sdFile string) string {
	return fmt.Sprintf(`  - job_name: kubernetes-pods
    file_sd_configs:
      - files: [%q]
        refresh_interval: 1s
    relabel_configs:
      - source_labels: [__meta_kubernetes_pod_annotation_prometheus_io_scrape]
        action: keep
        regex: "true"
      - source_labels: [__meta_kubernetes_pod_annotation_prometheus_io_path]
        regex: (.+)
        target_label: __metrics_path__
      - source_labels: [__address__, __meta_kubernetes_pod_annotation_prometheus_io_port]
        regex: '([^:]+)(?::\d+)?;(\d+)'
        replacement: $1:$2
        target_label: __address__
      - action: labelmap
        regex: __meta_kubernetes_pod_label_(.+)
      - source_labels: [__meta_kubernetes_namespace]
        target_label: namespace
      - source_labels: [__meta_kubernetes_pod_name]
        target_label: pod
      - source_labels: [__meta_kubernetes_pod_node_name]
        target_label: node
`, sdFile)
}

// podTargets writes to file the targets Prometheus' kubernetes_sd_configs
// role pod makes of every pod of the cluster (its documented meta labels):
// one per container port at podIP:port, one at podIP for a container
// without ports, with the pod's labels and annotations (names sanitised as
// Prometheus does), namespace, name, node, IP, phase, readiness and the
// container and port.
func (w *world) podTargets(ctx context.Context, file string) {
	w.t.Helper()
	l, err := w.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	type group struct {
		Targets []string          `json:"targets"`
		Labels  map[string]string `json:"labels"`
	}
	var groups []group
	for _, p := range l.Items {
		if p.Status.PodIP == "" {
			continue
		}
		base := map[string]string{
			"__meta_kubernetes_namespace":           p.Namespace,
			"__meta_kubernetes_pod_name":            p.Name,
			"__meta_kubernetes_pod_ip":              p.Status.PodIP,
			"__meta_kubernetes_pod_node_name":       p.Spec.NodeName,
			"__meta_kubernetes_pod_host_ip":         p.Status.HostIP,
			"__meta_kubernetes_pod_uid":             string(p.UID),
			"__meta_kubernetes_pod_phase":           string(p.Status.Phase),
			"__meta_kubernetes_pod_ready":           "false",
			"__meta_kubernetes_pod_controller_kind": "",
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady {
				base["__meta_kubernetes_pod_ready"] = strings.ToLower(string(c.Status))
			}
		}
		for _, o := range p.OwnerReferences {
			if o.Controller != nil && *o.Controller {
				base["__meta_kubernetes_pod_controller_kind"], base["__meta_kubernetes_pod_controller_name"] = o.Kind, o.Name
			}
		}
		for k, v := range p.Labels {
			base["__meta_kubernetes_pod_label_"+promName(k)] = v
			base["__meta_kubernetes_pod_labelpresent_"+promName(k)] = "true"
		}
		for k, v := range p.Annotations {
			base["__meta_kubernetes_pod_annotation_"+promName(k)] = v
			base["__meta_kubernetes_pod_annotationpresent_"+promName(k)] = "true"
		}
		for _, c := range p.Spec.Containers {
			withC := maps.Clone(base)
			withC["__meta_kubernetes_pod_container_name"] = c.Name
			withC["__meta_kubernetes_pod_container_image"] = c.Image
			withC["__meta_kubernetes_pod_container_init"] = "false"
			if len(c.Ports) == 0 {
				groups = append(groups, group{[]string{p.Status.PodIP}, withC})
			}
			for _, port := range c.Ports {
				lb := maps.Clone(withC)
				lb["__meta_kubernetes_pod_container_port_name"] = port.Name
				lb["__meta_kubernetes_pod_container_port_number"] = fmt.Sprint(port.ContainerPort)
				lb["__meta_kubernetes_pod_container_port_protocol"] = string(port.Protocol)
				groups = append(groups, group{[]string{net.JoinHostPort(p.Status.PodIP, fmt.Sprint(port.ContainerPort))}, lb})
			}
		}
	}
	b, err := json.MarshalIndent(groups, "", "  ")
	if err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o644); err != nil {
		w.t.Fatal(err)
	}
	w.t.Logf("kubernetes_sd pod role: %d targets from %d pods", len(groups), len(l.Items))
}

// promName is Prometheus' label name sanitising: every character outside
// [a-zA-Z0-9_] becomes _.
func promName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}

// shortRules copies deploy/monitor/rules.yaml with every alert's `for`
// shortened to 10s, so that the alerts fire within the test.
func shortRules(t *testing.T) string {
	b, err := os.ReadFile(filepath.Join(moduleRoot(t), "deploy", "monitor", "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "for: ") {
			l = l[:strings.Index(l, "for: ")] + "for: 10s"
			n++
		}
		out = append(out, l)
	}
	if n != 2 {
		t.Fatalf("rules.yaml has %d `for:` lines, want 2 (PullPathBroken, PullPathAgentDown)", n)
	}
	f := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(f, []byte(strings.Join(out, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestMonitorKubeletProvider is the monitor on AKS with ACR and the
// kubelet's credential provider, in miniature. A pool of two AKS-like nodes pulls from a private repository
// that refuses anonymous pulls, with no pull Secret: the kubelets get
// credentials from a kubelet credential provider laid out as on AKS (config
// and binary under /var/lib/kubelet, flags in /etc/default/kubelet), which
// reads its identity from a node file. The DaemonSet is deploy/monitor's,
// as shipped (its securityContext: drop ALL, add SYS_CHROOT; only the image
// and the ConfigMap's target and interval replaced). A real Prometheus
// finds the agents by the DaemonSet's annotations (annotationScrape: the
// kubernetes-pods job's relabelling over the pod role's targets), and
// evaluates rules.yaml with shortened `for`s.
//
//  1. The kubelets pull the image; the agents report success (the registry
//     refuses anonymous pulls, so they pulled with the provider's
//     credentials, running it chrooted into /host), PullPathReady True.
//  2. The provider's identity turns wrong on both nodes: the pool's
//     pullpath_probe_failure_info and PullPathReady turn to
//     auth.bad-credentials, and a new pod's kubelet event, explained, is
//     the same cause.
//  3. One agent is stopped (SIGSTOP): PullPathAgentDown fires for it under
//     the discovered job name (kubernetes-pods), not pullpath-monitor.
func TestMonitorKubeletProvider(t *testing.T) {
	tiers.Require(t, tiers.Nodelab, tiers.File(tiers.PrometheusBin))
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	specs := []nodelab.NodeSpec{
		{Name: "aks-acrpool-60000000-vmss000000", Pool: "acrpool", NodeImageVersion: imageV1, Mode: "User", Index: 8},
		{Name: "aks-acrpool-60000000-vmss000001", Pool: "acrpool", NodeImageVersion: imageV1, Mode: "User", Index: 9},
	}
	w := startWorldFor(t, ctx, specs)
	provider := credtest.Build(t)
	app, err := nodelab.BinaryImage(filepath.Join(w.tools, "pause"), "/app")
	if err != nil {
		t.Fatal(err)
	}
	image, err := w.lab.Push(ctx, "private/shop", "1", app)
	if err != nil {
		t.Fatal(err)
	}
	w.image = image // the agents' target (applyMonitor)
	env := map[string]string{"PP_PASS_FILE": identityFile, "PP_CACHE_DURATION": providerCache.String()}
	for _, s := range specs {
		s = credSpecEnv(s, provider, w.lab.Registry, w.lab.Username, "good", "unused: the identity file has it", env)
		s.RootFiles[identityFile[1:]] = []byte(w.lab.Password + "\n")
		nd := w.addNode(ctx, s)
		if err := nd.RouteKubernetesService(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pull := func(name, node string) corev1.Event {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
			Spec: corev1.PodSpec{NodeName: node, AutomountServiceAccountToken: ptr(false), TerminationGracePeriodSeconds: ptr(int64(1)),
				Containers: []corev1.Container{{Name: "app", Image: image, ImagePullPolicy: corev1.PullAlways}}}}
		if _, err := w.cs.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var ev corev1.Event
		w.poll(ctx, 2*time.Minute, "the kubelet's pull of "+name, func() bool {
			for _, e := range w.podEvents(ctx, name) {
				if e.Reason == "Pulled" || (e.Reason == "Failed" && strings.HasPrefix(e.Message, "Failed to pull image")) {
					ev = e
					return true
				}
			}
			return false
		})
		t.Logf("%s on %s: the kubelet's %s: %s", name, node, ev.Reason, ev.Message)
		return ev
	}

	// 1. The kubelets pull with the provider; so do the agents.
	for i, s := range specs {
		if ev := pull(fmt.Sprintf("app-%d", i), s.Name); ev.Reason != "Pulled" {
			t.Fatalf("the kubelet on %s did not pull %s with its credential provider: %s %s", s.Name, image, ev.Reason, ev.Message)
		}
	}
	applyMonitor(t, ctx, w)
	pods := w.waitAgents(ctx, len(specs))
	for _, p := range pods {
		sc := p.Spec.Containers[0].SecurityContext
		if sc == nil || sc.Capabilities == nil || fmt.Sprint(sc.Capabilities.Add) != "[SYS_CHROOT]" || fmt.Sprint(sc.Capabilities.Drop) != "[ALL]" {
			t.Errorf("agent %s runs with securityContext %+v, want deploy/monitor's drop ALL, add SYS_CHROOT", p.Name, sc)
		}
	}
	sd := filepath.Join(t.TempDir(), "kubernetes-pods.json")
	w.podTargets(ctx, sd)
	prom, err := nodelab.StartPrometheus(ctx, w.net, nodelab.PrometheusConfig{
		Interval: scrapeInterval, ScrapeConfigs: annotationScrape(sd), RuleFiles: []string{shortRules(t)}})
	if err != nil {
		t.Fatal(err)
	}
	var stopped int
	t.Cleanup(func() {
		if stopped != 0 {
			_ = syscall.Kill(stopped, syscall.SIGCONT)
		}
		if t.Failed() {
			t.Log(prom.Logs(3000))
			for _, p := range pods {
				t.Log(w.agentLog(ctx, p))
			}
		}
		prom.Stop()
	})
	q := &promQuery{t: t, p: prom}
	const agents = `app_kubernetes_io_name="pullpath-monitor"`
	w.poll(ctx, time.Minute, "Prometheus discovering both agents by their annotations", func() bool {
		return len(q.series(ctx, `up{job="kubernetes-pods",`+agents+`} == 1`)) == len(specs)
	})
	w.poll(ctx, 2*monitorInterval+30*time.Second, "both agents at pullpath_probe_success 1", func() bool {
		return len(q.series(ctx, `pullpath_probe_success{pool="acrpool"} == 1`)) == len(specs)
	})
	w.waitCondition(ctx, specs, "True", 2*monitorInterval+10*time.Second)
	poolSeries := `{__name__=~"pullpath_probe_success|pullpath_probe_failure_info",pool="acrpool"}`
	logSeries(t, "before the provider breaks", q.series(ctx, poolSeries))

	// 2. The provider's identity goes wrong on every node of the pool.
	for _, s := range specs {
		if err := os.WriteFile(filepath.Join(w.nodes[s.Name].Root, identityFile), []byte("pp-wrong-Id3ntity-secret\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	broke := time.Now()
	limit := providerCache + 2*monitorInterval + 2*scrapeInterval
	w.poll(ctx, limit+30*time.Second, "the pool's failure in Prometheus", func() bool {
		return len(q.series(ctx, `pullpath_probe_failure_info{pool="acrpool"} == 1`)) == len(specs) &&
			len(q.series(ctx, `pullpath_probe_success{pool="acrpool"} == 0`)) == len(specs)
	})
	t.Logf("the pool failing in Prometheus %v after the identity broke (provider cacheDuration %v, interval %v)", time.Since(broke).Round(time.Millisecond), providerCache, monitorInterval)
	after := q.series(ctx, poolSeries)
	logSeries(t, "after the provider breaks", after)
	ev := pull("app-broken", specs[0].Name)
	kubelet := explain.Classify(ev.Message).Verdict
	if ev.Reason != "Failed" || kubelet.Cause != "auth.bad-credentials" {
		t.Errorf("the kubelet's pull with the broken provider: %s, explained %s/%s; want Failed, auth.bad-credentials", ev.Reason, kubelet.Layer, kubelet.Cause)
	}
	for _, s := range q.series(ctx, `pullpath_probe_failure_info{pool="acrpool"} == 1`) {
		m := s.Metric
		if m["cause"] != kubelet.Cause || m["layer"] != string(kubelet.Layer) {
			t.Errorf("the agent on %s reports %s/%s; the kubelet's event, explained, %s/%s", m["node"], m["layer"], m["cause"], kubelet.Layer, kubelet.Cause)
		}
		if m["cause"] == monitor.AgentProviderCause || m["cause"] == "auth.no-credentials" {
			t.Errorf("the agent on %s reports %s: it did not pull with the provider's credentials", m["node"], m["cause"])
		}
	}
	w.waitCondition(ctx, specs, "False", limit)
	for _, s := range specs {
		c := w.condition(ctx, s.Name)
		t.Logf("PullPathReady on %s: %s %s: %s", s.Name, c.Status, c.Reason, c.Message)
		if c.Reason != monitor.CamelReason("auth.bad-credentials") {
			t.Errorf("PullPathReady on %s: reason %s, want %s", s.Name, c.Reason, monitor.CamelReason("auth.bad-credentials"))
		}
	}
	w.poll(ctx, 30*time.Second, "PullPathBroken for the pool", func() bool {
		return len(q.series(ctx, `ALERTS{alertname="PullPathBroken",pool="acrpool",cause="auth.bad-credentials"}`)) == 1
	})

	// 3. One agent stops: PullPathAgentDown fires under the discovered job.
	down := specs[1]
	stopped = w.agentPid(ctx, down.Name)
	if err := syscall.Kill(stopped, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	instance := fmt.Sprintf("%s:%d", w.nodes[down.Name].Addr, agentPort)
	stop := time.Now()
	var alert promSeries
	w.poll(ctx, time.Minute, "PullPathAgentDown firing for "+instance, func() bool {
		a := q.series(ctx, `ALERTS{alertname="PullPathAgentDown",alertstate="firing"}`)
		if len(a) == 1 {
			alert = a[0]
		}
		return len(a) == 1
	})
	t.Logf("PullPathAgentDown firing %v after the agent on %s stopped: %v", time.Since(stop).Round(time.Millisecond), down.Name, alert.Metric)
	if m := alert.Metric; m["instance"] != instance || m["job"] != "kubernetes-pods" || m["node"] != down.Name || m["namespace"] != monitorNS {
		t.Errorf("PullPathAgentDown fired with %v, want instance %s, job kubernetes-pods, node %s, namespace %s", m, instance, down.Name, monitorNS)
	}
	t.Logf("whole row: %v", time.Since(w.start).Round(time.Millisecond))
}

// logSeries logs series sorted, one a line.
func logSeries(t *testing.T, when string, ss []promSeries) {
	var lines []string
	for _, s := range ss {
		var labels []string
		for k, v := range s.Metric {
			labels = append(labels, k+"="+v)
		}
		sort.Strings(labels)
		lines = append(lines, fmt.Sprintf("  %v {%s}", s.Value[1], strings.Join(labels, ",")))
	}
	sort.Strings(lines)
	t.Logf("pool acrpool's series %s:\n%s", when, strings.Join(lines, "\n"))
}
