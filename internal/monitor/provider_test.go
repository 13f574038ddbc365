package monitor

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/nodeview/credtest"
	"github.com/pullpath/pullpath/internal/verdict"
)

// providerHelperEnv makes the test binary run one agent round and print its
// results (TestAgentKubeletProvider runs it without CAP_SYS_CHROOT).
const providerHelperEnv = "PULLPATH_TEST_AGENT_ROUND"

// TestAgentKubeletProvider runs the agent on a node root whose kubelet pulls
// the lab's private image with a credential provider (AKS's layout, no pull
// Secret), as the DaemonSet runs it: root, the node's root at a path other
// than /, so the provider runs chrooted there.
//
//  1. With CAP_SYS_CHROOT (the DaemonSet's one capability) the agent pulls
//     with the provider's credentials, and a second round within the
//     answer's cacheDuration does not run the provider again.
//  2. Without it (the agent re-run under setpriv with the capability out of
//     its bounding set, as the DaemonSet without it) the agent reports its
//     own cause, config.monitor-credential-provider, owner node, never the
//     anonymous pull's auth.no-credentials.
//  3. A provider the agent does not run unasked (group-writable) is the
//     same cause.
func TestAgentKubeletProvider(t *testing.T) {
	if os.Getenv(providerHelperEnv) != "" {
		agentRoundHelper(t)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("agent provider test skipped: the provider runs chrooted in the node root, which needs root (hack/test.sh runs it as root)")
	}
	l := startLab(t)
	sc := scenario(t, l, "healthy-auth")
	host := sc.Image[:strings.IndexByte(sc.Image, '/')]
	provider := credtest.Build(t)
	// The provider logs each request to a node path (it runs chrooted).
	cfg := credtest.Config(credtest.Provider{MatchImages: []string{host}, Mode: "good", Key: host, User: sc.Username, Pass: sc.Password}) +
		"      - {name: PP_REQUEST_LOG, value: /requests}\n"
	root := credtest.NodeRoot(t, sc.Root, provider, cfg, 0o755)
	runs := func() int {
		b, _ := os.ReadFile(filepath.Join(root, "requests"))
		return strings.Count(string(b), "\n")
	}
	target := []Target{{Name: "app", Image: sc.Image, Platform: sc.Platform}}

	// 1. With the capability.
	a := newAgent(l, root, Config{Targets: target, Timeout: Duration(5 * time.Second)})
	ctx := context.Background()
	for round := 1; round <= 2; round++ {
		res := a.Round(ctx)
		if len(res) != 1 || !res[0].Verdict.OK {
			t.Fatalf("round %d with the provider: %+v, want ok", round, res)
		}
		if got := runs(); got != 1 {
			t.Errorf("after round %d the provider ran %d times, want 1 (its answer is kept 5m, as the kubelet keeps it)", round, got)
		}
	}
	if b, _ := json.Marshal(a.Results()); strings.Contains(string(b), sc.Password) {
		t.Errorf("the agent's results hold the provider's password")
	}

	// 2. Without CAP_SYS_CHROOT.
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Fatalf("setpriv (util-linux) is needed to drop CAP_SYS_CHROOT: %v", err)
	}
	cmd := exec.Command(setpriv, "--bounding-set", "-sys_chroot", "--inh-caps", "-sys_chroot", os.Args[0], "-test.run", "^TestAgentKubeletProvider$")
	cmd.Env = append(os.Environ(), providerHelperEnv+"=1", "PP_ROOT="+root, "PP_IMAGE="+sc.Image, "PP_PLATFORM="+sc.Platform, "PP_DNSPORT="+strconv.Itoa(l.DNSPort))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the agent round without CAP_SYS_CHROOT: %v\n%s", err, out)
	}
	line := out
	if i := strings.Index(string(out), "\n"); i >= 0 {
		line = out[:i]
	}
	var res []Result
	if err := json.Unmarshal(line, &res); err != nil || len(res) != 1 {
		t.Fatalf("the helper's results: %v\n%s", err, out)
	}
	checkAgentCause(t, "without CAP_SYS_CHROOT", res[0].Verdict, "CAP_SYS_CHROOT")
	if got := runs(); got != 1 {
		t.Errorf("the provider ran without the capability (%d runs in all)", got)
	}

	// 3. A provider it does not run unasked.
	loose := credtest.NodeRoot(t, sc.Root, provider, cfg, 0o775)
	b := newAgent(l, loose, Config{Targets: target, Timeout: Duration(5 * time.Second)})
	r := b.Round(ctx)
	if len(r) != 1 {
		t.Fatalf("round: %+v", r)
	}
	checkAgentCause(t, "group-writable provider", r[0].Verdict, "writable by group or others")
	c := NodeCondition(b.Results())
	if c.Status != "False" || c.Reason != "ConfigMonitorCredentialProvider" || !strings.Contains(c.Message, "owner node") {
		t.Errorf("PullPathReady = %+v, want False with reason ConfigMonitorCredentialProvider, owner node", c)
	}
}

func checkAgentCause(t *testing.T, what string, v verdict.Verdict, detail string) {
	t.Helper()
	if v.OK || v.Cause != AgentProviderCause || v.Owner != verdict.OwnerNode || v.Layer != verdict.LayerConfig {
		t.Errorf("%s: verdict %s/%s owner %s, want %s (config, owner node): %s", what, v.Layer, v.Cause, v.Owner, AgentProviderCause, v.Summary)
	}
	if !strings.Contains(v.Summary, detail) {
		t.Errorf("%s: the summary does not say why (%q): %s", what, detail, v.Summary)
	}
	t.Logf("%s: %s owner %s: %s", what, v.Cause, v.Owner, v.Summary)
}

// agentRoundHelper runs one round from the environment's root and image and
// prints the results as one JSON line.
func agentRoundHelper(t *testing.T) {
	port, _ := strconv.Atoi(os.Getenv("PP_DNSPORT"))
	cfg := Config{Targets: []Target{{Name: "app", Image: os.Getenv("PP_IMAGE"), Platform: os.Getenv("PP_PLATFORM")}}, Timeout: Duration(5 * time.Second)}
	cfg.defaults()
	a := &Agent{Config: cfg, Node: "node-a", Pool: "poola", Root: os.Getenv("PP_ROOT"), DNSPort: port, Metrics: NewMetrics("node-a", "poola", "test")}
	b, err := json.Marshal(a.Round(context.Background()))
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.Write(append(b, '\n'))
}
