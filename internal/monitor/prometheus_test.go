package monitor

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/tiers"
)

// TestPrometheusScrapesAgent runs a real Prometheus (Debian's package) that
// scrapes a running agent on loopback, and queries it over its HTTP API
// while the agent's pull path works, breaks and is repaired.
func TestPrometheusScrapesAgent(t *testing.T) {
	tiers.Require(t, tiers.Prometheus)
	prom := tiers.PrometheusBin
	l := startLab(t)
	healthy, broken := scenario(t, l, "healthy"), scenario(t, l, "dns-resolver-down")
	a := newAgent(l, healthy.Root, Config{Targets: []Target{{Name: "app", Image: healthy.Image, Platform: healthy.Platform}},
		Interval: Duration(time.Second), Timeout: Duration(2 * time.Second)})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, ln) }()
	defer func() { cancel(); <-done }()

	dir := t.TempDir()
	promLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	promAddr := promLn.Addr().String()
	promLn.Close()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: pullpath-monitor
    static_configs:
      - targets: [%q]
`, ln.Addr().String())), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prom, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	log, _ := os.Create(filepath.Join(dir, "prometheus.log"))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("prometheus log:\n%s", b)
		}
	}()

	query := func(q string) (float64, map[string]string, bool) {
		resp, err := http.Get("http://" + promAddr + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil {
			return 0, nil, false
		}
		defer resp.Body.Close()
		var r struct {
			Data struct {
				Result []struct {
					Metric map[string]string `json:"metric"`
					Value  [2]any            `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		if json.NewDecoder(resp.Body).Decode(&r) != nil || len(r.Data.Result) == 0 {
			return 0, nil, false
		}
		var v float64
		fmt.Sscan(r.Data.Result[0].Value[1].(string), &v)
		return v, r.Data.Result[0].Metric, true
	}
	waitFor := func(what, q string, want float64) map[string]string {
		t.Helper()
		deadline := time.Now().Add(45 * time.Second)
		for time.Now().Before(deadline) {
			if v, m, ok := query(q); ok && v == want {
				return m
			}
			time.Sleep(300 * time.Millisecond)
		}
		v, _, ok := query(q)
		t.Fatalf("%s: %s = %v (found %v), want %v within 45 s", what, q, v, ok, want)
		return nil
	}
	m := waitFor("healthy", `pullpath_probe_success{target="app"}`, 1)
	if m["node"] != "node-a" || m["pool"] != "poola" || m["job"] != "pullpath-monitor" {
		t.Errorf("labels of the scraped series: %v", m)
	}
	a.SetRoot(broken.Root)
	waitFor("broken", `pullpath_probe_success{target="app"}`, 0)
	m = waitFor("failure info", `pullpath_probe_failure_info{target="app"}`, 1)
	if m["cause"] != "dns.unreachable" || m["layer"] != "dns" || m["role"] != "registry" || m["owner"] != "dns" {
		t.Errorf("pullpath_probe_failure_info labels: %v", m)
	}
	a.SetRoot(healthy.Root)
	waitFor("repaired", `pullpath_probe_success{target="app"}`, 1)
	if _, _, ok := query(`pullpath_probe_failure_info{target="app"} == 1`); ok {
		// Prometheus marks the series stale on the next scrape after it
		// disappears; give it that scrape.
		time.Sleep(2 * time.Second)
		if _, _, ok := query(`pullpath_probe_failure_info{target="app"} == 1`); ok {
			t.Errorf("pullpath_probe_failure_info is still 1 after the repair")
		}
	}
}
