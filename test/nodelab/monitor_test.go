package nodelab_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/pullpath/pullpath/internal/monitor"
	"github.com/pullpath/pullpath/internal/tiers"
	"github.com/pullpath/pullpath/test/nodelab"
)

const (
	monitorNS       = "pullpath"
	monitorInterval = 5 * time.Second
	scrapeInterval  = time.Second
	agentPort       = 9808
	// monitorJob is the scrape job the alerting rules name (up{job=...}).
	monitorJob = "pullpath-monitor"
)

// TestMonitorOnRealNodes runs the monitor on real kubelets: three pools
// (the tainted system pool, pool A, pool B), the DaemonSet of deploy/monitor
// applied as its files say (only the image and the ConfigMap's targets and
// interval replaced), and a real Prometheus in the control-plane namespace
// scraping the agents at the node addresses:
//
//  1. every node, the tainted one too, runs an agent in its pod's cgroup,
//     and the agent reports the pool of the node's agentpool label;
//  2. the agents' idle RSS, RSS while probing and CPU per probe are
//     measured from /proc (logged, not asserted);
//  3. pool B loses its route to the registry: within two intervals its
//     pullpath_probe_success is 0 with layer route, cause route.unreachable
//     in pullpath_probe_failure_info, PullPathReady is False, the
//     PullPathBroken alert is pending, `pullpath monitor status` names
//     pool B and its owner; the other pools stay at 1;
//  4. the route comes back: success 1, condition True, status healthy.
func TestMonitorOnRealNodes(t *testing.T) {
	tiers.Require(t, tiers.Nodelab, tiers.File(tiers.PrometheusBin))
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	specs := []nodelab.NodeSpec{systemNode, poolA0, poolB0}
	w := startWorldFor(t, ctx, specs)
	var targets []string
	instance := map[string]string{} // scrape instance → node
	for _, s := range specs {
		nd := w.addNode(ctx, s)
		if err := nd.RouteKubernetesService(ctx); err != nil {
			t.Fatal(err)
		}
		in := fmt.Sprintf("%s:%d", nd.Addr, agentPort)
		targets = append(targets, in)
		instance[in] = s.Name
	}

	phase := time.Now()
	applyMonitor(t, ctx, w)
	pods := w.waitAgents(ctx, len(specs))
	t.Logf("DaemonSet: %d agents Ready %v after apply", len(pods), time.Since(phase).Round(time.Millisecond))

	prom, err := nodelab.StartPrometheus(ctx, w.net, nodelab.PrometheusConfig{
		Job: monitorJob, Targets: targets, Interval: scrapeInterval,
		RuleFiles: []string{filepath.Join(moduleRoot(t), "deploy", "monitor", "rules.yaml")},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(prom.Logs(3000))
			for _, p := range pods {
				t.Log(w.agentLog(ctx, p))
			}
			c := prom.HTTPClient()
			for _, in := range targets {
				if resp, err := c.Get("http://" + in + "/results"); err == nil {
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					t.Logf("%s/results: %s", in, b)
				}
			}
		}
		prom.Stop()
	})
	q := &promQuery{t: t, p: prom}

	// 1. Every node runs an agent that reports its pool.
	phase = time.Now()
	w.poll(ctx, 30*time.Second, "every agent scraped with pullpath_probe_success 1", func() bool {
		return len(q.series(ctx, `pullpath_probe_success{job="`+monitorJob+`"} == 1`)) == len(specs)
	})
	t.Logf("Prometheus sees every agent healthy %v after it started", time.Since(phase).Round(time.Millisecond))
	for _, s := range q.series(ctx, `pullpath_build_info{job="`+monitorJob+`"}`) {
		node := instance[s.Metric["instance"]]
		n, err := w.cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("scrape instance %s: %v", s.Metric["instance"], err)
		}
		want := n.Labels["kubernetes.azure.com/agentpool"]
		if s.Metric["node"] != node || s.Metric["pool"] != want {
			t.Errorf("the agent at %s reports node %q pool %q; the node there is %s, pool %q (its agentpool label)", s.Metric["instance"], s.Metric["node"], s.Metric["pool"], node, want)
		}
		t.Logf("agent at %s: node %s pool %s version %s", s.Metric["instance"], s.Metric["node"], s.Metric["pool"], s.Metric["version"])
		delete(instance, s.Metric["instance"])
	}
	if len(instance) > 0 {
		t.Errorf("no pullpath_build_info from %v", instance)
	}
	w.waitCondition(ctx, specs, "True", 2*monitorInterval+5*time.Second)

	// 2. Its own cost, from /proc.
	w.measureAgents(ctx, specs, 6*monitorInterval)

	// 3. Pool B loses its route to the registry network.
	broken := w.nodes[poolB0.Name]
	if err := broken.Fault(ctx, "route", "add", "throw", nodelab.RegistrySubnet.String()); err != nil {
		t.Fatal(err)
	}
	fault := time.Now()
	limit := 2*monitorInterval + 2*scrapeInterval
	var failure promSeries
	w.poll(ctx, limit+10*time.Second, "pool B's failure in Prometheus", func() bool {
		f := q.series(ctx, `pullpath_probe_failure_info{pool="poolb"} == 1`)
		s := q.series(ctx, `pullpath_probe_success{pool="poolb"} == 0`)
		if len(f) == 1 && len(s) == 1 {
			failure = f[0]
			return true
		}
		return false
	})
	took := time.Since(fault)
	t.Logf("pool B failing in Prometheus %v after the route went away (interval %v, scrape %v): %v", took.Round(time.Millisecond), monitorInterval, scrapeInterval, failure.Metric)
	if took > limit {
		t.Errorf("pool B's failure took %v to reach Prometheus, want within two intervals (%v, plus %v of scrapes)", took, 2*monitorInterval, 2*scrapeInterval)
	}
	m := failure.Metric
	if m["layer"] != "route" || m["cause"] != "route.unreachable" || m["role"] != "registry" || m["owner"] != "network" || m["endpoint"] != "registry.lab.test:443" {
		t.Errorf("pullpath_probe_failure_info = %v, want layer route, cause route.unreachable, role registry, owner network at registry.lab.test:443", m)
	}
	if got := len(q.series(ctx, `pullpath_probe_success{pool!="poolb"} == 1`)); got != 2 {
		t.Errorf("healthy pools with pullpath_probe_success 1: %d, want 2 (system, poola)", got)
	}
	if f := q.series(ctx, `pullpath_probe_failure_info{pool!="poolb"}`); len(f) > 0 {
		t.Errorf("failures reported from the healthy pools: %v", f)
	}
	w.waitCondition(ctx, []nodelab.NodeSpec{poolB0}, "False", limit+10*time.Second)
	c := w.condition(ctx, poolB0.Name)
	if c.Reason != monitor.CamelReason(m["cause"]) || !strings.Contains(c.Message, "layer route cause route.unreachable owner network role registry") {
		t.Errorf("PullPathReady on %s: reason %q message %q, want reason %s naming the layer, cause and owner", poolB0.Name, c.Reason, c.Message, monitor.CamelReason(m["cause"]))
	}
	t.Logf("PullPathReady on %s: %s %s: %s", poolB0.Name, c.Status, c.Reason, c.Message)
	w.waitCondition(ctx, []nodelab.NodeSpec{systemNode, poolA0}, "True", time.Second)
	w.waitEvent(ctx, poolB0.Name, "PullPathBroken")
	w.poll(ctx, 30*time.Second, "the PullPathBroken alert pending for pool B", func() bool {
		return len(q.series(ctx, `ALERTS{alertname="PullPathBroken",alertstate="pending",pool="poolb",cause="route.unreachable"}`)) == 1
	})
	st, code := w.monitorStatus(ctx)
	if code != 1 || st.Healthy {
		t.Errorf("monitor status while pool B is broken: exit %d healthy %v, want exit 1", code, st.Healthy)
	}
	pools := map[string]monitor.PoolStatus{}
	for _, p := range st.Pools {
		pools[p.Name] = p
	}
	if p := pools["poolb"]; p.State != monitor.PoolBroken || p.Owner != "network" || p.Cause != "route.unreachable" || p.Layer != "route" || !strings.Contains(p.Warning, "next scale-up") {
		t.Errorf("monitor status, pool B = %+v; want broken, route.unreachable, owner network, with the next-scale-up warning (nothing runs the image there)", p)
	}
	for _, name := range []string{"system", "poola"} {
		if p := pools[name]; p.State != monitor.PoolHealthy || p.Reporting != 1 {
			t.Errorf("monitor status, pool %s = %+v, want healthy with its agent reporting", name, p)
		}
	}

	// 4. Repair: everything recovers.
	if err := broken.Fault(ctx, "route", "del", "throw", nodelab.RegistrySubnet.String()); err != nil {
		t.Fatal(err)
	}
	repair := time.Now()
	w.poll(ctx, limit+10*time.Second, "pool B healthy again in Prometheus", func() bool {
		return len(q.series(ctx, `pullpath_probe_success{pool="poolb"} == 1`)) == 1 && len(q.series(ctx, `pullpath_probe_failure_info{pool="poolb"}`)) == 0
	})
	t.Logf("pool B healthy in Prometheus %v after the route came back", time.Since(repair).Round(time.Millisecond))
	if took := time.Since(repair); took > limit {
		t.Errorf("pool B's recovery took %v to reach Prometheus, want within %v", took, limit)
	}
	w.waitCondition(ctx, specs, "True", limit+10*time.Second)
	w.waitEvent(ctx, poolB0.Name, "PullPathRepaired")
	if got := len(q.series(ctx, `pullpath_probe_success{job="`+monitorJob+`"} == 1`)); got != len(specs) {
		t.Errorf("agents at pullpath_probe_success 1 after the repair: %d, want %d", got, len(specs))
	}
	if st, code := w.monitorStatus(ctx); code != 0 || !st.Healthy {
		t.Errorf("monitor status after the repair: exit %d %+v, want healthy", code, st)
	}
	if up := q.series(ctx, `up{job="`+monitorJob+`"} == 1`); len(up) != len(specs) {
		t.Errorf("up == 1 for %d agents, want %d", len(up), len(specs))
	}
	t.Logf("whole monitor scenario: %v", time.Since(w.start).Round(time.Millisecond))
}

// applyMonitor creates the objects of deploy/monitor's files as they are,
// except the DaemonSet's image (the tier's probe image, built from
// cmd/pullpath-node) and the ConfigMap's targets (the tier's app image) and
// interval.
func applyMonitor(t *testing.T, ctx context.Context, w *world) {
	t.Helper()
	dir := filepath.Join(moduleRoot(t), "deploy", "monitor")
	for _, f := range []string{"namespace.yaml", "rbac.yaml", "configmap.yaml", "daemonset.yaml"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(b), "\n---") {
			if strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if err := w.create(ctx, obj); err != nil {
				t.Fatalf("%s: creating %T: %v", f, obj, err)
			}
		}
	}
}

func stripComments(doc string) string {
	var out []string
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func (w *world) create(ctx context.Context, obj runtime.Object) error {
	cs := w.cs
	var err error
	switch o := obj.(type) {
	case *corev1.Namespace:
		_, err = cs.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{})
	case *corev1.ServiceAccount:
		_, err = cs.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.ClusterRole:
		_, err = cs.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.ClusterRoleBinding:
		_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.Role:
		_, err = cs.RbacV1().Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.RoleBinding:
		_, err = cs.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *corev1.ConfigMap:
		var cfg map[string]any
		if err := yaml.Unmarshal([]byte(o.Data["config.yaml"]), &cfg); err != nil {
			return fmt.Errorf("the ConfigMap's config.yaml: %w", err)
		}
		cfg["targets"] = []map[string]string{{"name": "app", "image": w.image}}
		cfg["interval"] = monitorInterval.String()
		b, err := yaml.Marshal(cfg)
		if err != nil {
			return err
		}
		o.Data["config.yaml"] = string(b)
		w.t.Logf("monitor ConfigMap:\n%s", b)
		_, err = cs.CoreV1().ConfigMaps(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		return err
	case *appsv1.DaemonSet:
		c := &o.Spec.Template.Spec.Containers[0]
		c.Image = probeImage
		w.t.Logf("DaemonSet %s: image %s, args %v", o.Name, c.Image, c.Args)
		_, err = cs.AppsV1().DaemonSets(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	default:
		return fmt.Errorf("no creator for %T", obj)
	}
	return err
}

// waitAgents waits until the DaemonSet runs one Ready agent per node, and
// checks each is the DaemonSet's command in its pod's cgroup under the
// node's cgroup root.
func (w *world) waitAgents(ctx context.Context, n int) []corev1.Pod {
	w.t.Helper()
	var pods []corev1.Pod
	w.poll(ctx, 2*time.Minute, fmt.Sprintf("%d Ready monitor agents", n), func() bool {
		l, err := w.cs.CoreV1().Pods(monitorNS).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=pullpath-monitor"})
		if err != nil {
			return false
		}
		pods = l.Items
		ready := map[string]bool{}
		for _, p := range pods {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					ready[p.Spec.NodeName] = true
				}
			}
		}
		return len(ready) == n
	})
	for _, p := range pods {
		nd := w.nodes[p.Spec.NodeName]
		if nd == nil {
			w.t.Errorf("agent %s runs on %q, not a lab node", p.Name, p.Spec.NodeName)
			continue
		}
		procs, err := nd.FindProcess(ctx, agentArgv(p)...)
		if err != nil {
			w.t.Fatal(err)
		}
		if len(procs) != 1 {
			w.t.Errorf("node %s: %d processes run %v, want 1", nd.Spec.Name, len(procs), agentArgv(p))
		}
		for pid, cg := range procs {
			if !strings.Contains(cg, string(p.UID)) && !strings.Contains(cg, strings.ReplaceAll(string(p.UID), "-", "_")) {
				w.t.Errorf("node %s: agent pid %d is in cgroup %q, not under %s in pod %s's", nd.Spec.Name, pid, cg, nd.CgroupRoot, p.UID)
			}
			w.t.Logf("node %s: agent pid %d in cgroup %s", nd.Spec.Name, pid, cg)
		}
	}
	return pods
}

// agentArgv is the agent's command line: the probe image's entrypoint and
// the DaemonSet's args.
func agentArgv(p corev1.Pod) []string {
	return append([]string{"/pullpath"}, p.Spec.Containers[0].Args...)
}

func (w *world) agentPid(ctx context.Context, node string) int {
	w.t.Helper()
	l, err := w.cs.CoreV1().Pods(monitorNS).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil || len(l.Items) != 1 {
		w.t.Fatalf("the agent pod on %s: %v (%d pods)", node, err, len(l.Items))
	}
	procs, err := w.nodes[node].FindProcess(ctx, agentArgv(l.Items[0])...)
	if err != nil || len(procs) != 1 {
		w.t.Fatalf("the agent process on %s: %v (%d)", node, err, len(procs))
	}
	for pid := range procs {
		return pid
	}
	return 0
}

// agentLog returns the agent container's log, read from the node's
// pod-logs directory.
func (w *world) agentLog(ctx context.Context, p corev1.Pod) string {
	nd := w.nodes[p.Spec.NodeName]
	if nd == nil {
		return ""
	}
	var b strings.Builder
	_ = filepath.WalkDir(filepath.Join(nd.Dir, "pod-logs"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(path, p.Name) {
			data, _ := os.ReadFile(path)
			if len(data) > 3000 {
				data = data[len(data)-3000:]
			}
			fmt.Fprintf(&b, "=== %s\n%s\n", path, data)
		}
		return nil
	})
	return b.String()
}

// measureAgents samples every agent's /proc/<pid>/status every 50 ms over
// window and logs idle RSS (the median sample: the agent is idle most of
// the time), the highest RSS seen (during a probe), VmHWM, and CPU per
// probe: utime+stime over the window divided by the probes it ran
// (pullpath_probes_total read from the agent itself). The CPU includes
// everything the agent did meanwhile: the probes, one condition patch per
// round and the 1 s scrapes.
func (w *world) measureAgents(ctx context.Context, specs []nodelab.NodeSpec, window time.Duration) {
	w.t.Helper()
	hz, err := nodelab.ClockTicks()
	if err != nil {
		w.t.Fatal(err)
	}
	type sample struct {
		pid          int
		addr         string
		rss          []int64
		anon, file   []int64
		cpu0, probe0 int64
	}
	var all []*sample
	for _, s := range specs {
		nd := w.nodes[s.Name]
		all = append(all, &sample{pid: w.agentPid(ctx, s.Name), addr: fmt.Sprintf("%s:%d", nd.Addr, agentPort)})
	}
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: w.cp.DialContext}}
	for _, a := range all {
		u, err := nodelab.ReadProcUsage(a.pid)
		if err != nil {
			w.t.Fatal(err)
		}
		a.cpu0, a.probe0 = u.CPUTicks, w.probesTotal(ctx, c, a.addr)
	}
	var mu sync.Mutex
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			for _, a := range all {
				if u, err := nodelab.ReadProcUsage(a.pid); err == nil {
					mu.Lock()
					a.rss = append(a.rss, u.RSSKiB)
					a.anon = append(a.anon, u.AnonKiB)
					a.file = append(a.file, u.FileKiB)
					mu.Unlock()
				}
			}
		}
	}()
	time.Sleep(window)
	close(done)
	wg.Wait()
	for i, a := range all {
		u, err := nodelab.ReadProcUsage(a.pid)
		if err != nil {
			w.t.Fatal(err)
		}
		probes := w.probesTotal(ctx, c, a.addr) - a.probe0
		if probes <= 0 || len(a.rss) == 0 {
			w.t.Errorf("agent on %s: %d probes and %d RSS samples in %v", specs[i].Name, probes, len(a.rss), window)
			continue
		}
		sorted := slices.Clone(a.rss)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
		cpuMs := float64(u.CPUTicks-a.cpu0) * 1000 / float64(hz)
		w.t.Logf("agent cost on %s (pool %s, pid %d, HEAD mode, %v window): idle RSS %.1f MiB (median of %d samples; RssAnon %.1f, RssFile %.1f), max RSS %.1f MiB, VmHWM %.1f MiB; CPU %.0f ms over %d probes = %.1f ms per probe (with 1 s scrapes and a condition patch per round)",
			specs[i].Name, specs[i].Pool, a.pid, window, mib(sorted[len(sorted)/2]), len(sorted), mib(median(a.anon)), mib(median(a.file)),
			mib(sorted[len(sorted)-1]), mib(u.HWMKiB), cpuMs, probes, cpuMs/float64(probes))
	}
}

func median(v []int64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func mib(kib int64) float64 { return float64(kib) / 1024 }

// probesTotal reads the sum of pullpath_probes_total from an agent's
// /metrics, dialing from the control-plane namespace.
func (w *world) probesTotal(ctx context.Context, c *http.Client, addr string) int64 {
	w.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	resp, err := c.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		w.t.Fatal(err)
	}
	var n int64
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "pullpath_probes_total{") {
			continue
		}
		f := strings.Fields(l)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			w.t.Fatalf("%s: %q", addr, l)
		}
		n += int64(v)
	}
	return n
}

func (w *world) condition(ctx context.Context, node string) corev1.NodeCondition {
	n, err := w.cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return corev1.NodeCondition{}
	}
	for _, c := range n.Status.Conditions {
		if string(c.Type) == monitor.ConditionType {
			return c
		}
	}
	return corev1.NodeCondition{}
}

// waitCondition waits until every node's PullPathReady has status.
func (w *world) waitCondition(ctx context.Context, specs []nodelab.NodeSpec, status string, limit time.Duration) {
	w.t.Helper()
	w.poll(ctx, limit, "PullPathReady "+status, func() bool {
		for _, s := range specs {
			if string(w.condition(ctx, s.Name).Status) != status {
				return false
			}
		}
		return true
	})
}

// waitEvent waits for the agent's event with reason on node (namespace
// default, where node events live).
func (w *world) waitEvent(ctx context.Context, node, reason string) {
	w.t.Helper()
	w.poll(ctx, 20*time.Second, "a "+reason+" event on "+node, func() bool {
		l, err := w.cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + node + ",reason=" + reason})
		return err == nil && len(l.Items) > 0 && l.Items[0].Source.Component == "pullpath-monitor"
	})
}

// monitorStatus runs the full binary's `pullpath monitor status` next to
// the cluster, with the watched image.
func (w *world) monitorStatus(ctx context.Context) (monitor.Status, int) {
	w.t.Helper()
	out, stderr, code := w.runPullpath(ctx, "monitor", "status", "--image", w.image, "-o", "json")
	var st monitor.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		w.t.Fatalf("monitor status (exit %d) is not a MonitorStatus: %v\n%s\n%s", code, err, out, stderr)
	}
	text, _, _ := w.runPullpath(ctx, "monitor", "status", "--image", w.image)
	w.t.Logf("pullpath monitor status (exit %d):\n%s", code, text)
	return st, code
}

// promQuery queries Prometheus' HTTP API (/api/v1/query) from inside the
// control-plane namespace.
type promQuery struct {
	t *testing.T
	p *nodelab.Prometheus
}

type promSeries struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

func (q *promQuery) series(ctx context.Context, expr string) []promSeries {
	q.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, q.p.URL+"/api/v1/query?query="+url.QueryEscape(expr), nil)
	resp, err := q.p.HTTPClient().Do(req)
	if err != nil {
		q.t.Fatalf("querying %s: %v", expr, err)
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string       `json:"resultType"`
			Result     []promSeries `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Status != "success" || r.Data.ResultType != "vector" {
		q.t.Fatalf("querying %s: %v %s %s (%s)", expr, err, r.Status, r.Error, r.Data.ResultType)
	}
	return r.Data.Result
}
