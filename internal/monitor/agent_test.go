package monitor

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/probe"
	"github.com/pullpath/pullpath/internal/tiers"
	"github.com/pullpath/pullpath/internal/verdict"
)

func failing(cause, layer, owner, role, endpoint string) verdict.Verdict {
	return verdict.Verdict{Layer: verdict.Layer(layer), Cause: cause, Owner: verdict.Owner(owner), Role: verdict.Role(role), Endpoint: endpoint, Summary: "the summary", Next: []string{}}
}

func okVerdict() verdict.Verdict { return verdict.OKVerdict("ok") }

// startLab starts the embedded lab (TLS registry, token host, redirecting
// blob host, DNS on loopback) for one test.
func startLab(t *testing.T) *lab.Lab {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	l, err := lab.Start(ctx, lab.Options{})
	if err != nil {
		t.Fatalf("starting the lab: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func scenario(t *testing.T, l *lab.Lab, name string) lab.Scenario {
	t.Helper()
	sc, ok := l.Scenario(name)
	if !ok {
		t.Fatalf("the lab has no scenario %q", name)
	}
	return sc
}

func newAgent(l *lab.Lab, root string, cfg Config) *Agent {
	cfg.defaults()
	return &Agent{Config: cfg, Node: "node-a", Pool: "poola", Root: root, DNSPort: l.DNSPort,
		Metrics: NewMetrics("node-a", "poola", "test")}
}

// TestAgentBreakAndRepair probes the lab's healthy image from the healthy
// node root, then from a root whose only nameserver is dead, then from the
// healthy root again, and checks the metrics and the results at each step.
func TestAgentBreakAndRepair(t *testing.T) {
	l := startLab(t)
	healthy := scenario(t, l, "healthy")
	broken := scenario(t, l, "dns-resolver-down")
	if broken.Image != healthy.Image {
		t.Fatalf("the scenarios pull different images (%s, %s): the test needs one image and two roots", healthy.Image, broken.Image)
	}
	a := newAgent(l, healthy.Root, Config{Targets: []Target{{Name: "app", Image: healthy.Image, Platform: healthy.Platform}}, Timeout: Duration(2 * time.Second)})
	ctx := context.Background()

	res := a.Round(ctx)
	if len(res) != 1 || !res[0].Verdict.OK || res[0].Mode != BlobsHead {
		t.Fatalf("healthy round: %+v", res)
	}
	if got := testutil.ToFloat64(a.Metrics.success.WithLabelValues("app")); got != 1 {
		t.Errorf("pullpath_probe_success = %v after a healthy round, want 1", got)
	}
	for _, step := range []string{"dns", "connect", "tls", "token", "manifest", "blob"} {
		if testutil.ToFloat64(a.Metrics.step.WithLabelValues("app", step)) <= 0 {
			t.Errorf("pullpath_step_duration_seconds{step=%q} is not positive after a healthy head probe", step)
		}
	}
	if n := testutil.CollectAndCount(a.Metrics.certExpiry); n < 2 {
		t.Errorf("pullpath_tls_cert_expiry_timestamp_seconds has %d series, want one per TLS endpoint (registry, token, blob)", n)
	}

	a.Root = broken.Root
	res = a.Round(ctx)
	if res[0].Verdict.OK || res[0].Verdict.Cause != "dns.unreachable" {
		t.Fatalf("broken round: %+v", res[0].Verdict)
	}
	if got := testutil.ToFloat64(a.Metrics.success.WithLabelValues("app")); got != 0 {
		t.Errorf("pullpath_probe_success = %v after a broken round, want 0", got)
	}
	v := res[0].Verdict
	if got := testutil.ToFloat64(a.Metrics.failure.WithLabelValues("app", string(v.Layer), v.Cause, string(v.Role), string(v.Owner), v.Endpoint)); got != 1 {
		t.Errorf("pullpath_probe_failure_info for %s = %v, want 1", v.Cause, got)
	}
	brokenSince := res[0].Since
	time.Sleep(5 * time.Millisecond)
	res = a.Round(ctx)
	if !res[0].Since.Equal(brokenSince) {
		t.Errorf("a second failing round with the same cause moved since from %v to %v", brokenSince, res[0].Since)
	}

	a.Root = healthy.Root
	res = a.Round(ctx)
	if !res[0].Verdict.OK {
		t.Fatalf("repaired round: %+v", res[0].Verdict)
	}
	if n := testutil.CollectAndCount(a.Metrics.failure); n != 0 {
		t.Errorf("pullpath_probe_failure_info still has %d series after the repair", n)
	}
	if got := testutil.ToFloat64(a.Metrics.probes.WithLabelValues("app", "failure")); got != 2 {
		t.Errorf("pullpath_probes_total{result=failure} = %v, want 2", got)
	}

	// The exposition is valid for Prometheus' own linter.
	body := scrape(t, a)
	for _, s := range []string{`pullpath_probe_success{node="node-a",pool="poola",target="app"} 1`, `pullpath_build_info{`, `pullpath_dns_resolved_private{`} {
		if !strings.Contains(body, s) {
			t.Errorf("/metrics lacks %q", s)
		}
	}
	promtoolCheck(t, body)
}

// TestAgentPrivateZone checks pullpath_dns_resolved_private on the lab's
// privatelink scenario: the node's resolver answers with a public address.
func TestAgentPrivateZone(t *testing.T) {
	l := startLab(t)
	sc := scenario(t, l, "dns-private-zone")
	a := newAgent(l, sc.Root, Config{Targets: []Target{{Name: "priv", Image: sc.Image, Platform: sc.Platform}}, Timeout: Duration(2 * time.Second)})
	res := a.Round(context.Background())
	if res[0].Verdict.Cause != "dns.private-zone" {
		t.Fatalf("verdict %+v", res[0].Verdict)
	}
	host := strings.Split(sc.Expect.Endpoint, ":")[0]
	if got := testutil.ToFloat64(a.Metrics.dnsPrivate.WithLabelValues("priv", host)); got != 0 {
		t.Errorf("pullpath_dns_resolved_private{host=%q} = %v, want 0 (public answer)", host, got)
	}
}

// TestAgentFullBudget checks the schedule of full rounds: none on the first
// round, one after FullInterval, and a target over the byte budget stays in
// head mode and is counted.
func TestAgentFullBudget(t *testing.T) {
	l := startLab(t)
	sc := scenario(t, l, "healthy")
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	cfg := Config{Targets: []Target{{Name: "a", Image: sc.Image, Platform: sc.Platform}, {Name: "b", Image: sc.Image, Platform: sc.Platform}},
		FullInterval: Duration(time.Hour), Timeout: Duration(2 * time.Second)}
	a := newAgent(l, sc.Root, cfg)
	a.Now = func() time.Time { return now }
	first := a.Round(context.Background())
	if first[0].Mode != BlobsHead || first[1].Mode != BlobsHead {
		t.Fatalf("first round modes %s, %s; want head (full only after full_interval)", first[0].Mode, first[1].Mode)
	}
	size := a.sizes["a"]
	if size <= 0 {
		t.Fatalf("no image size learned from the head round")
	}
	// A budget for one copy of the image: a goes full, b stays head.
	a.Config.FullByteBudget = size + size/2
	now = now.Add(time.Hour)
	second := a.Round(context.Background())
	if second[0].Mode != BlobsFull || second[1].Mode != BlobsHead || !second[0].Verdict.OK {
		t.Fatalf("second round: a %s %v, b %s; want a full and ok, b head", second[0].Mode, second[0].Verdict.OK, second[1].Mode)
	}
	if got := testutil.ToFloat64(a.Metrics.fullSkipped.WithLabelValues("b")); got != 1 {
		t.Errorf("pullpath_full_skipped_total{target=b} = %v, want 1", got)
	}
	now = now.Add(time.Minute)
	if third := a.Round(context.Background()); third[0].Mode == BlobsFull {
		t.Errorf("a round one minute after a full round is %s, want head or none", third[0].Mode)
	}
}

func scrape(t *testing.T, a *Agent) string {
	t.Helper()
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// promtoolCheck runs `promtool check metrics` (Debian's prometheus package)
// over an exposition; it skips the check, saying so, without promtool.
func promtoolCheck(t *testing.T, body string) {
	t.Helper()
	pt := tiers.PromtoolBin
	if err := tiers.Prometheus.Missing(); err != nil {
		if tiers.Prometheus.Requested() {
			t.Fatalf("tier prometheus: promtool check metrics: the tier is requested but %v", err)
		}
		t.Logf("tier prometheus: promtool check metrics skipped: %v (apt-get install prometheus)", err)
		return
	}
	cmd := exec.Command(pt, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
	t.Logf("promtool check metrics: ok")
}

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAgentMissingDockerConfig: the shipped ConfigMap names the pull
// Secret's file, which the DaemonSet mounts only when the Secret exists.
// Without it the probe is anonymous (before, every probe on the node tier
// failed with config.credentials: open /etc/pullpath/pull/.dockerconfigjson:
// no such file or directory); with it the file is read.
func TestAgentMissingDockerConfig(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, ".dockerconfigjson")
	var got []string
	cfg := Config{Targets: []Target{{Name: "app", Image: "registry.example/team/app:1"}}, DockerConfig: file}
	cfg.defaults()
	a := &Agent{Config: cfg, Node: "n", Pool: "p", Metrics: NewMetrics("n", "p", "test"),
		Probe: func(_ context.Context, image string, o probe.Options) (*probe.Report, error) {
			got = append(got, o.DockerConfig)
			return &probe.Report{Image: image, Verdict: okVerdict()}, nil
		}}
	a.Round(context.Background())
	if err := os.WriteFile(file, []byte(`{"auths":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	a.Round(context.Background())
	if len(got) != 2 || got[0] != "" || got[1] != file {
		t.Errorf("docker config given to the probe = %q, want \"\" while %s is missing, then the file", got, file)
	}
}
