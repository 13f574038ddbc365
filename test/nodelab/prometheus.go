package nodelab

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/tiers"
)

// PrometheusBin is Debian's prometheus package's server.
const PrometheusBin = tiers.PrometheusBin

// PrometheusPort is the port Prometheus listens on inside the
// control-plane namespace (127.0.0.1 there, so only the lab reaches it).
const PrometheusPort = 9090

// Prometheus is a real Prometheus server running in the control-plane
// namespace with the lab's resolv.conf and hosts, like the control plane.
type Prometheus struct {
	// URL is http://127.0.0.1:9090 inside the control-plane namespace;
	// reach it with DialContext.
	URL  string
	proc *Proc
	net  *Net
}

// PrometheusConfig is what StartPrometheus scrapes.
type PrometheusConfig struct {
	// Job is the scrape job's name; Targets are its static_configs
	// (host:port, addresses inside the lab).
	Job     string
	Targets []string
	// Interval is the scrape and rule evaluation interval.
	Interval time.Duration
	// RuleFiles are loaded as rule_files.
	RuleFiles []string
	// ScrapeConfigs, when set, are the scrape_configs entries (YAML, each
	// beginning "  - job_name:") in place of the static job: a discovery
	// as a real install configures it.
	ScrapeConfigs string
}

// StartPrometheus writes a configuration with one static scrape job (or
// c.ScrapeConfigs) and
// starts Prometheus in the control-plane namespace, returning once it is
// ready (/-/ready).
func StartPrometheus(ctx context.Context, n *Net, c PrometheusConfig) (p *Prometheus, err error) {
	if _, err := os.Stat(PrometheusBin); err != nil {
		return nil, fmt.Errorf("the monitor tier needs %s (apt-get install prometheus): %w", PrometheusBin, err)
	}
	dir := filepath.Join(n.Dir, "prometheus")
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return nil, err
	}
	iv := c.Interval.String()
	var rules strings.Builder
	if len(c.RuleFiles) > 0 {
		rules.WriteString("rule_files:\n")
		for _, f := range c.RuleFiles {
			fmt.Fprintf(&rules, "  - %q\n", f)
		}
	}
	scrape := c.ScrapeConfigs
	if scrape == "" {
		scrape = fmt.Sprintf("  - job_name: %q\n    static_configs:\n      - targets: [%s]\n", c.Job, quoteList(c.Targets))
	}
	cfg := fmt.Sprintf(`global:
  scrape_interval: %[1]s
  scrape_timeout: %[1]s
  evaluation_interval: %[1]s
%[2]sscrape_configs:
%[3]s`, iv, rules.String(), scrape)
	file := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(file, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	cp := filepath.Join(n.Dir, "control")
	p = &Prometheus{URL: fmt.Sprintf("http://127.0.0.1:%d", PrometheusPort), net: n}
	p.proc, err = Start(ctx, Spec{
		NS:    n.Control,
		Binds: []Bind{{filepath.Join(cp, "resolv.conf"), "/etc/resolv.conf"}, {filepath.Join(cp, "hosts"), "/etc/hosts"}},
		Args: []string{PrometheusBin, "--config.file=" + file, "--storage.tsdb.path=" + filepath.Join(dir, "data"),
			fmt.Sprintf("--web.listen-address=127.0.0.1:%d", PrometheusPort), "--log.level=warn"},
		Env: baseEnv(),
		Log: filepath.Join(dir, "prometheus.log"),
	})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			p.Stop()
		}
	}()
	c2 := p.HTTPClient()
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := waitFor(wctx, p.proc, 200*time.Millisecond, func() bool {
		req, _ := http.NewRequestWithContext(wctx, http.MethodGet, p.URL+"/-/ready", nil)
		resp, err := c2.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}); err != nil {
		return nil, fmt.Errorf("waiting for prometheus: %w\n%s", err, p.proc.Tail(3000))
	}
	return p, nil
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}

// DialContext dials from inside the control-plane namespace.
func (p *Prometheus) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	return p.net.Control.DialContext(ctx, network, address)
}

// HTTPClient returns a client that dials from inside the control-plane
// namespace (for Prometheus' HTTP API and the agents' /metrics).
func (p *Prometheus) HTTPClient() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: p.DialContext, Proxy: nil}}
}

// Logs returns the tail of Prometheus' log.
func (p *Prometheus) Logs(n int) string { return p.proc.Tail(n) }

// Stop ends Prometheus.
func (p *Prometheus) Stop() {
	if p != nil && p.proc != nil {
		p.proc.Stop(10 * time.Second)
	}
}
