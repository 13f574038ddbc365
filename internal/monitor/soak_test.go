package monitor

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pullpath/pullpath/internal/cluster/clustertest"
	"github.com/pullpath/pullpath/test/nodelab"
)

// Environment of TestAgentSoak.
const (
	envSoak     = "PULLPATH_MONITOR_SOAK"      // how long, e.g. 60m
	envSoakBins = "PULLPATH_MONITOR_SOAK_BINS" // label=binary,... (default: this tree's pullpath-node)
)

// TestAgentSoak is the agent's idle cost over a long run, as the real-node
// tier runs it but on loopback and without network namespaces, so that it
// can run for an hour without holding the namespace lock: each binary of
// $PULLPATH_MONITOR_SOAK_BINS runs `monitor` as the DaemonSet does (the
// ConfigMap's settings, with the lab's image and a 5 s interval as on the
// tier), in-cluster against a real kube-apiserver with the service account
// and RBAC of deploy/monitor (its token and CA mounted at the in-cluster
// path in a private mount namespace), and is scraped every second with gzip
// accepted, as the tier's Prometheus does. Every 100 ms it samples each
// agent's /proc status; each minute it logs the median VmRSS, RssAnon and
// RssFile, the max, and the Go heap from the agent's own /metrics; at the
// end, min / median / max of the minute medians and the trend (least
// squares, MiB per hour). The figures are logged, not asserted; what is
// asserted is that every agent kept probing, its target stayed healthy and
// its node condition True.
//
//	go build -o /tmp/pn ./cmd/pullpath-node
//	PULLPATH_KUBE_BIN=$(bash tools/kube/build.sh) PULLPATH_MONITOR_SOAK=60m \
//	PULLPATH_MONITOR_SOAK_BINS=new=/tmp/pn go test -timeout 80m -run TestAgentSoak -v ./internal/monitor/
func TestAgentSoak(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv(envSoak))
	if err != nil || d <= 0 {
		t.Skipf("monitor soak: skipped: %s is not set to a duration (e.g. %s=60m; hack/test.sh does not run it)", envSoak, envSoak)
	}
	if os.Geteuid() != 0 {
		t.Skip("monitor soak: skipped: needs root (a private mount namespace for the service-account files)")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("monitor soak: skipped: unshare (util-linux) is not installed")
	}
	bins := soakBinaries(t)
	srv := clustertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), d+5*time.Minute)
	defer cancel()
	cs := srv.Clientset
	applyRBAC(t, ctx, cs)
	exp := int64(7200)
	tr, err := cs.CoreV1().ServiceAccounts("pullpath").CreateToken(ctx, "pullpath-monitor", &authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest: %v", err)
	}
	sa := t.TempDir()
	ca, err := os.ReadFile(srv.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(filepath.Join(sa, "token"), []byte(tr.Status.Token), 0o600))
	must(t, os.WriteFile(filepath.Join(sa, "ca.crt"), ca, 0o600))
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}

	l := startLab(t)
	healthy := scenario(t, l, "healthy")
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	// deploy/monitor/configmap.yaml, with the lab's image and the tier's
	// interval.
	must(t, os.WriteFile(cfg, []byte("targets:\n  - {name: app, image: "+healthy.Image+"}\ninterval: 5s\nblobs: head\nfull_interval: 6h\n"+
		"full_byte_budget: 1073741824\ndocker_config: /etc/pullpath/pull/.dockerconfigjson\n"), 0o600))

	agents := make([]*soakAgent, len(bins))
	for i, b := range bins {
		node := "soak-" + b.label
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node, Labels: map[string]string{"kubernetes.azure.com/agentpool": "pool" + b.label}}}
		if _, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		// The service-account files at the in-cluster path, in a mount
		// namespace of the agent's own (a tmpfs over /run, where
		// /var/run points): nothing changes on the machine.
		script := `mount -t tmpfs -o size=1m soak /run && mkdir -p /run/secrets/kubernetes.io/serviceaccount && ` +
			`cp "$SA/token" "$SA/ca.crt" /run/secrets/kubernetes.io/serviceaccount/ && exec "$@"`
		cmd := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh",
			b.path, "monitor", "--config="+cfg, "--root="+healthy.Root, "--listen="+addr, "--dns-port="+strconv.Itoa(l.DNSPort))
		cmd.Env = append(os.Environ(), "SA="+sa, "NODE_NAME="+node, "KUBERNETES_SERVICE_HOST="+u.Hostname(), "KUBERNETES_SERVICE_PORT="+u.Port())
		logf, _ := os.Create(filepath.Join(t.TempDir(), "agent.log"))
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		a := &soakAgent{label: b.label, node: node, metrics: "http://" + addr + "/metrics", sh: cmd, log: logf.Name()}
		agents[i] = a
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			if t.Failed() {
				out, _ := os.ReadFile(a.log)
				t.Logf("agent %s log:\n%s", a.label, out)
			}
		})
	}
	// The sh execs the agent in place: its pid stays the child's.
	for _, a := range agents {
		a.pid = a.sh.Process.Pid
		if err := waitMetrics(ctx, a.metrics); err != nil {
			t.Fatalf("agent %s: %v", a.label, err)
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", a.pid))
		if !strings.Contains(string(cmdline), "monitor") {
			t.Fatalf("agent %s: pid %d runs %q, not the agent", a.label, a.pid, cmdline)
		}
	}
	tick, _ := nodelab.ClockTicks()
	for _, a := range agents {
		u0, err := nodelab.ReadProcUsage(a.pid)
		if err != nil {
			t.Fatal(err)
		}
		a.cpu0, a.probes0 = u0.CPUTicks, a.scrape(t)["pullpath_probes_total"]
	}

	// Scrapes every second (Go's transport asks for gzip, as Prometheus
	// does), and samples every 100 ms.
	var wg sync.WaitGroup
	sctx, stop := context.WithCancel(ctx)
	for _, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for tk := time.NewTicker(time.Second); sctx.Err() == nil; <-tk.C {
				a.scrape(nil)
			}
		}()
	}
	start := time.Now()
	minute := start.Add(time.Minute)
	for time.Since(start) < d {
		for _, a := range agents {
			if u, err := nodelab.ReadProcUsage(a.pid); err == nil {
				a.rss, a.anon, a.file = append(a.rss, u.RSSKiB), append(a.anon, u.AnonKiB), append(a.file, u.FileKiB)
			}
		}
		if time.Now().After(minute) {
			minute = minute.Add(time.Minute)
			for _, a := range agents {
				a.endMinute(t, time.Since(start))
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop()
	wg.Wait()
	for _, a := range agents {
		a.endMinute(t, time.Since(start)) // the last, partial minute
	}

	for _, a := range agents {
		m := a.scrape(t)
		u1, err := nodelab.ReadProcUsage(a.pid)
		if err != nil {
			t.Fatalf("agent %s is gone: %v", a.label, err)
		}
		probes := m["pullpath_probes_total"] - a.probes0
		if want := d.Seconds() / 5 * 0.8; probes < want {
			t.Errorf("agent %s probed %v times in %s, want at least %v (every 5 s)", a.label, probes, d, want)
		}
		if m["pullpath_probe_success"] != 1 {
			t.Errorf("agent %s: pullpath_probe_success = %v at the end, want 1", a.label, m["pullpath_probe_success"])
		}
		n, err := cs.CoreV1().Nodes().Get(ctx, a.node, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ready := false
		for _, c := range n.Status.Conditions {
			ready = ready || (c.Type == ConditionType && c.Status == corev1.ConditionTrue)
		}
		if !ready {
			t.Errorf("agent %s: node %s has no %s=True condition: %+v", a.label, a.node, ConditionType, n.Status.Conditions)
		}
		cpu := float64(u1.CPUTicks-a.cpu0) / float64(max(tick, 1))
		mins := len(a.minRSS)
		t.Logf("soak %s (%s, %d minutes, %v probes): idle RSS (minute medians of VmRSS) min %.1f / median %.1f / max %.1f MiB; "+
			"RssAnon median %.1f, RssFile median %.1f; max VmRSS %.1f MiB; trend %+.2f MiB/hour; first 10 min %.1f, last 10 min %.1f; CPU %.1f ms per probe",
			a.label, filepath.Base(bins[slices.IndexFunc(bins, func(b soakBin) bool { return b.label == a.label })].path), mins, probes,
			mib(slices.Min(a.minRSS)), mib(median(a.minRSS)), mib(slices.Max(a.minRSS)), mib(median(a.minAnon)), mib(median(a.minFile)),
			mib(slices.Max(a.minMax)), slope(a.minRSS)/1024*60, mib(mean(a.minRSS[:min(10, mins)])), mib(mean(a.minRSS[max(0, mins-10):])), 1000*cpu/max(probes, 1))
	}
}

type soakBin struct{ label, path string }

func soakBinaries(t *testing.T) []soakBin {
	t.Helper()
	v := os.Getenv(envSoakBins)
	if v == "" {
		p := filepath.Join(t.TempDir(), "pullpath-node")
		if out, err := exec.Command("go", "build", "-o", p, "../../cmd/pullpath-node").CombinedOutput(); err != nil {
			t.Fatalf("go build ./cmd/pullpath-node: %v\n%s", err, out)
		}
		return []soakBin{{"tree", p}}
	}
	var bins []soakBin
	for _, kv := range strings.Split(v, ",") {
		label, path, ok := strings.Cut(kv, "=")
		if !ok || label == "" || strings.ContainsAny(label, "_. ") {
			t.Fatalf("%s=%q: want label=binary,... (labels in [a-z0-9-])", envSoakBins, v)
		}
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("%s: %v", envSoakBins, err)
		}
		bins = append(bins, soakBin{label, path})
	}
	return bins
}

type soakAgent struct {
	label, node, metrics, log string
	sh                        *exec.Cmd
	pid                       int
	cpu0                      int64
	probes0                   float64

	mu              sync.Mutex
	last            map[string]float64 // the latest scrape
	rss, anon, file []int64            // this minute's samples, KiB
	minRSS, minAnon []int64            // medians of each minute
	minFile, minMax []int64
}

// scrape reads the agent's /metrics into name → value (summed over label
// sets); t nil means best effort.
func (a *soakAgent) scrape(t *testing.T) map[string]float64 {
	m, err := readMetrics(a.metrics)
	if err != nil {
		if t != nil {
			t.Fatalf("agent %s: %v", a.label, err)
		}
		return nil
	}
	a.mu.Lock()
	a.last = m
	a.mu.Unlock()
	return m
}

func (a *soakAgent) endMinute(t *testing.T, at time.Duration) {
	if len(a.rss) == 0 {
		return
	}
	a.minRSS, a.minAnon, a.minFile, a.minMax = append(a.minRSS, median(a.rss)), append(a.minAnon, median(a.anon)), append(a.minFile, median(a.file)), append(a.minMax, slices.Max(a.rss))
	a.mu.Lock()
	m := a.last
	a.mu.Unlock()
	t.Logf("soak %s %3.0f min: VmRSS median %.1f max %.1f MiB (RssAnon %.1f, RssFile %.1f); Go heap in use %.1f, idle not released %.1f, stacks %.1f MiB, %v goroutines, %v probes",
		a.label, at.Minutes(), mib(median(a.rss)), mib(slices.Max(a.rss)), mib(median(a.anon)), mib(median(a.file)),
		m["go_memstats_heap_inuse_bytes"]/(1<<20), (m["go_memstats_heap_idle_bytes"]-m["go_memstats_heap_released_bytes"])/(1<<20),
		m["go_memstats_stack_inuse_bytes"]/(1<<20), m["go_goroutines"], m["pullpath_probes_total"])
	a.rss, a.anon, a.file = a.rss[:0], a.anon[:0], a.file[:0]
}

func readMetrics(u string) (map[string]float64, error) {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	m := map[string]float64{}
	s := bufio.NewScanner(resp.Body)
	for s.Scan() {
		line := s.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name := line[:strings.IndexAny(line+" ", "{ ")]
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err == nil {
			m[name] += v
		}
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return m, s.Err()
}

func waitMetrics(ctx context.Context, u string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		m, err := readMetrics(u)
		if err == nil && m["pullpath_probes_total"] > 0 {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("no probe on %s within 30 s: %v", u, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func mib(kib int64) float64 { return float64(kib) / 1024 }

func median(v []int64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func mean(v []int64) int64 {
	var sum int64
	for _, x := range v {
		sum += x
	}
	return sum / int64(max(len(v), 1))
}

// slope is the least-squares slope of v over its index (per minute).
func slope(v []int64) float64 {
	n := float64(len(v))
	if n < 2 {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for i, y := range v {
		x := float64(i)
		sx, sy, sxx, sxy = sx+x, sy+float64(y), sxx+x*x, sxy+x*float64(y)
	}
	return (n*sxy - sx*sy) / (n*sxx - sx*sx)
}
