package netlab_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/cri"
	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/tiers"
	"github.com/pullpath/pullpath/test/netlab"
)

var update = flag.Bool("update", false, "rewrite testdata/containerd-errors.jsonl from the runtime's own errors")

// row is one scenario of the ground-truth table: a lab scenario, optionally
// with network faults on top, and what each column must say.
type row struct {
	name string
	// scenario is the lab scenario giving the image, the node root, the
	// identity and (unless want is set) the expected verdict.
	scenario string
	// faults break the network under the scenario.
	faults func(a netlab.Addrs) []netlab.Fault
	// node2Root pulls from node2 with that scenario's root (node2 has a
	// different view: no hosts entry) instead of from node.
	node2Root string
	// want replaces the lab scenario's expected verdict (network rows).
	want *expect
	// containerd is what containerd's error must show for the layer and
	// role (a regexp); empty means the runtime must pull the image.
	containerd string
	// explain replaces want for the explain column where containerd's text
	// cannot show what the probe sees; why says why.
	explain *expect
	why     string
	// runtimePlatformOK marks a row whose fault depends on the node's
	// platform: when the runtime's own platform is in the image, its pull
	// succeeds and only the probe (told the lab node's platform) can fail.
	runtimePlatformOK bool
	// slow marks a row that waits on containerd's 30 s dial timeout.
	slow bool
	// criDeadline bounds containerd's CRI pull (as the kubelet's deadline
	// would) for rows where containerd waits on it; 0: the row's own.
	criDeadline time.Duration
	// strictCause makes a cause that differs from want's an error, not a
	// note (rows whose point is the cause, e.g. MTU or not MTU).
	strictCause bool
	// needs lists commands the row's faults run besides ip.
	needs []string
	// check runs after the faults, before any pull.
	check func(t *testing.T, ctx context.Context, n *netlab.Net)
}

func fail(cause, role string) *expect {
	layer, _, _ := strings.Cut(cause, ".")
	return &expect{Layer: layer, Cause: cause, Role: role}
}

func faults(f ...func(a netlab.Addrs) netlab.Fault) func(a netlab.Addrs) []netlab.Fault {
	return func(a netlab.Addrs) []netlab.Fault {
		var out []netlab.Fault
		for _, x := range f {
			out = append(out, x(a))
		}
		return out
	}
}

// Regexps for containerd's evidence. Host names show the role: the
// registry API host in the HEAD/GET of the manifest, the token realm in the
// token fetch, the blob host in the redirected GET.
const (
	headReg = `failed to do request: Head "https://registry\.lab\.test/v2/`
)

var rows = []row{
	{name: "healthy", scenario: "healthy"},
	{name: "healthy-auth", scenario: "healthy-auth"},
	{name: "no-route", scenario: "healthy",
		faults:     faults(func(netlab.Addrs) netlab.Fault { return netlab.NoRoute(netlab.RegistrySubnet) }),
		want:       fail("route.unreachable", "registry"),
		containerd: headReg + `.*dial tcp 198\.18\.10\.10:443: connect: network is unreachable$`},
	{name: "no-return-route", slow: true, scenario: "healthy",
		faults: faults(func(a netlab.Addrs) netlab.Fault {
			return netlab.NoReturnRoute(a.Registry, netlab.NodeSubnet)
		}),
		want:       fail("route.timeout", "registry"),
		containerd: headReg + `.*dial tcp 198\.18\.10\.10:443: i/o timeout$`},
	// The control of the MTU rows: a plain silent drop is route.timeout,
	// never route.mtu (strictCause).
	{name: "silent-drop", slow: true, scenario: "healthy", strictCause: true,
		faults:     faults(func(a netlab.Addrs) netlab.Fault { return netlab.Drop(a.Registry) }),
		want:       fail("route.timeout", "registry"),
		containerd: headReg + `.*dial tcp 198\.18\.10\.10:443: i/o timeout$`},
	// A path-MTU black hole toward the registry network (router
	// routes to and from its hosts locked at 1280, ICMP frag-needed
	// dropped, node interfaces at 1500). Only the probe can name it:
	// containerd waits until its deadline and says only "context deadline
	// exceeded". The whole registry network is behind the hop: Debian's
	// containerd 1.6 (Go 1.19) offers no post-quantum key share, so the
	// registry's handshake flight fits in 1280 bytes and its pull stalls
	// only on the blob; the probe's Go 1.26 ClientHello draws a larger
	// flight and stalls at the registry's handshake.
	mtuRow("mtu-registry", "registry", func(a netlab.Addrs) []netip.Addr { return []netip.Addr{a.Registry, a.Auth, a.Blob} }),
	mtuRow("mtu-blob", "blob", func(a netlab.Addrs) []netip.Addr { return []netip.Addr{a.Blob} }),
	// The second control: the connection opens and nothing after the
	// SYN-ACK arrives, small or large; the small MSS does not help, so the
	// verdict stays tls.timeout (and containerd's own handshake timeout
	// says the same).
	{name: "drop-after-connect", slow: true, scenario: "healthy", strictCause: true, criDeadline: 25 * time.Second, needs: []string{"nft"},
		faults:     faults(func(a netlab.Addrs) netlab.Fault { return netlab.DropAfterConnect(a.Registry) }),
		want:       fail("tls.timeout", "registry"),
		containerd: headReg + `.*net/http: TLS handshake timeout$`},
	{name: "dns-nxdomain", scenario: "dns-nxdomain",
		containerd: `Head "https://nx\.lab\.test/v2/.*dial tcp: lookup nx\.lab\.test on 198\.18\.20\.53:53: no such host$`},
	{name: "dns-private-zone", scenario: "dns-private-zone",
		containerd: `Head "https://privreg\.lab\.test/v2/.*dial tcp 198\.19\.0\.10:443: connect: network is unreachable$`,
		explain:    fail("route.unreachable", "registry"),
		why:        "the runtime's text shows only the dial to the public address; the CNAME chain that makes it a private-zone problem is visible only to a resolver query"},
	{name: "dns-resolver-down", scenario: "dns-resolver-down",
		containerd: `dial tcp: lookup registry\.lab\.test on 198\.18\.20\.55:53: read udp [0-9.:]+->198\.18\.20\.55:53: read: connection refused$`},
	{name: "dns-resolver-dropped", scenario: "healthy",
		faults:     faults(func(a netlab.Addrs) netlab.Fault { return netlab.Drop(a.DNS) }),
		want:       fail("dns.timeout", "registry"),
		containerd: `dial tcp: lookup registry\.lab\.test on 198\.18\.20\.53:53: read udp [0-9.:]+->198\.18\.20\.53:53: i/o timeout$`},
	{name: "route-refused", scenario: "route-refused",
		containerd: `Head "https://refused\.lab\.test/v2/.*dial tcp 198\.18\.10\.14:443: connect: connection refused$`},
	{name: "tls-untrusted", scenario: "tls-untrusted",
		containerd: `Head "https://untrusted\.lab\.test/v2/.*x509: certificate signed by unknown authority`},
	{name: "tls-name", scenario: "tls-name",
		containerd: `Head "https://wrongname\.lab\.test/v2/.*x509: certificate is valid for other\.lab\.test, not wrongname\.lab\.test$`},
	{name: "tls-expired", scenario: "tls-expired",
		containerd: `Head "https://expired\.lab\.test/v2/.*x509: certificate has expired or is not yet valid`},
	{name: "auth-anonymous", scenario: "auth-anonymous",
		containerd: `failed to authorize: failed to fetch anonymous token: unexpected status: 401 Unauthorized$`},
	{name: "auth-bad-credentials", scenario: "auth-bad-credentials",
		containerd: `failed to authorize: failed to fetch (oauth|anonymous) token: unexpected status: 401 Unauthorized$`},
	{name: "authz-scope", scenario: "authz-scope",
		containerd: `(insufficient_scope|401 Unauthorized|authorization failed)`},
	{name: "authz-denied", scenario: "authz-denied",
		containerd: `403 Forbidden`},
	{name: "manifest-unknown", scenario: "manifest-unknown",
		containerd: `code = NotFound desc = .*registry\.lab\.test/team/app:nope: not found$`},
	// foreign/app's index holds two platforms that are not this machine's,
	// and containerd pulls for the platform it runs on: it fails like a node
	// of another architecture.
	{name: "manifest-platform", scenario: "manifest-platform",
		containerd: `no match for platform in manifest`},
	// containerd's systemd drop-in sets HTTPS_PROXY (and NO_PROXY): the
	// service runs with that environment, the probe reads the same unit.
	{name: "proxy", scenario: "proxy"},
	{name: "proxy-down", scenario: "proxy-down",
		containerd: `proxyconnect tcp: dial tcp 198\.18\.10\.14:\d+: connect: connection refused$`},
	{name: "proxy-denied", scenario: "proxy-denied",
		containerd: `manifests/1\.0": Forbidden$`},
	{name: "proxy-bypass", scenario: "proxy-bypass"},
	{name: "auth-host-down", scenario: "auth-host-down",
		containerd: `failed to fetch (oauth|anonymous) token: Post "https://authdown\.lab\.test/token": dial tcp 198\.18\.10\.14:443: connect: connection refused$`},
	{name: "auth-host-dropped", slow: true, scenario: "healthy",
		faults:     faults(func(a netlab.Addrs) netlab.Fault { return netlab.Drop(a.Auth) }),
		want:       fail("route.timeout", "auth"),
		containerd: `failed to fetch anonymous token: Get "https://auth\.lab\.test/token\?.*dial tcp 198\.18\.10\.11:443: i/o timeout$`},
	{name: "blob-nxdomain", scenario: "blob-nxdomain",
		containerd: `Get "https://nxblob\.lab\.test/.*lookup nxblob\.lab\.test on 198\.18\.20\.53:53: no such host$`},
	{name: "blob-refused", scenario: "blob-refused",
		containerd: `Get "https://deadblob\.lab\.test/.*dial tcp 198\.18\.10\.14:443: connect: connection refused$`},
	{name: "blob-dropped", slow: true, scenario: "healthy",
		faults:     faults(func(a netlab.Addrs) netlab.Fault { return netlab.Drop(a.Blob) }),
		want:       fail("route.timeout", "blob"),
		containerd: `Get "https://blob\.lab\.test/.*dial tcp 198\.18\.10\.12:443: i/o timeout$`},
	{name: "blob-corrupt", scenario: "blob-corrupt",
		containerd: `(unexpected commit digest|digest mismatch|failed commit)`},
	{name: "ratelimit", scenario: "ratelimit",
		containerd: `429 Too Many Requests`},
	{name: "server-error", scenario: "server-error",
		containerd: `503 Service Unavailable`},
	{name: "mirror-fallback", scenario: "mirror-fallback"},
	{name: "mirror-dropped", slow: true, scenario: "mirror-fallback",
		faults: faults(func(a netlab.Addrs) netlab.Fault { return netlab.Drop(a.Dead) })},
	{name: "hosts-entry", scenario: "hosts-entry"},
	{name: "hosts-entry-node2", scenario: "hosts-entry", node2Root: "healthy",
		want:       fail("dns.nxdomain", "registry"),
		containerd: `Head "https://hostsonly\.lab\.test/v2/.*lookup hostsonly\.lab\.test on 198\.18\.20\.53:53: no such host$`},
	{name: "split-answer", scenario: "split-answer"},
}

// mtuRow is a path-MTU row: the hosts behind a hop locked at 1280 with ICMP
// frag-needed dropped; the probe must say route.mtu for role; containerd's
// CRI pull runs into its 25 s deadline with nothing but "context deadline
// exceeded", which explain can only call unknown.deadline.
func mtuRow(name, role string, hosts func(a netlab.Addrs) []netip.Addr) row {
	return row{name: name, slow: true, scenario: "healthy", strictCause: true, criDeadline: 25 * time.Second, needs: []string{"nft"},
		faults:     func(a netlab.Addrs) []netlab.Fault { return []netlab.Fault{netlab.MTUBlackHole(1280, hosts(a)...)} },
		check:      nodeMTU1500,
		want:       fail("route.mtu", role),
		containerd: `context deadline exceeded$`,
		explain:    fail("unknown.deadline", ""),
		why:        "containerd's text names no step (its pull only ran into the CRI deadline); only the probe's small-MSS redial can tell a path-MTU black hole"}
}

// nodeMTU1500 checks that a path-MTU row leaves the nodes' own interfaces
// at 1500: the small MTU is a hop on the path, not the node's.
func nodeMTU1500(t *testing.T, ctx context.Context, n *netlab.Net) {
	t.Helper()
	for _, ns := range []*netlab.Netns{n.Node, n.Node2} {
		mtu, err := ns.LinkMTU(ctx, "eth0")
		if err != nil {
			t.Fatal(err)
		}
		if mtu != 1500 {
			t.Errorf("%s eth0 mtu = %d, want 1500", ns.Name, mtu)
		}
	}
}

// result is one row's outcome in every column.
type result struct {
	row                string
	image              string
	containerd         string // verbatim CRI error, "" when the pull worked
	containerdMs       int64
	probe, explain     string // "layer cause role" or a note
	probeMs, explainMs int64
	version            string
}

var (
	resultsMu sync.Mutex
	results   []result
)

func TestScenarios(t *testing.T) {
	tiers.Require(t, tiers.Netlab)
	if runLabHelper == nil {
		t.Fatal("the embedded lab's helper (runLabHelper) is not linked into this test binary")
	}
	if err := netlab.Sweep(context.Background()); err != nil {
		t.Logf("sweeping stale lab namespaces: %v", err)
	}
	bin := buildPullpath(t)
	t.Cleanup(func() { report(t) })
	start := time.Now()
	t.Cleanup(func() { t.Logf("tier took %v", time.Since(start).Round(time.Second)) })
	// Rows run concurrently, independent of -parallel: most of a row's time
	// is spent waiting on containerd's 30 s dial timeout, not on the CPU.
	sem := make(chan struct{}, rowParallelism())
	var wg sync.WaitGroup
	// The rows that wait on timeouts start first.
	order := slices.Clone(rows)
	sort.SliceStable(order, func(i, j int) bool { return order[i].slow && !order[j].slow })
	for _, r := range order {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			t.Run(r.name, func(t *testing.T) { runRow(t, r, bin) })
		}()
	}
	wg.Wait()
}

// rowParallelism is how many rows run at once: PULLPATH_NETLAB_PARALLEL, or
// 8 (each row is one lab process and one containerd).
func rowParallelism() int {
	if n, err := strconv.Atoi(os.Getenv("PULLPATH_NETLAB_PARALLEL")); err == nil && n > 0 {
		return n
	}
	return 8
}

func runRow(t *testing.T, r row, bin string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	n := newNet(t)
	info := startLab(t, ctx, n)
	sc, ok := info.scenario(r.scenario)
	if !ok {
		t.Fatalf("the lab has no scenario %q", r.scenario)
	}
	want := sc.Expect
	if r.want != nil {
		want = *r.want
	}
	node, rootScenario := n.Node, sc
	if r.node2Root != "" {
		node = n.Node2
		if rootScenario, ok = info.scenario(r.node2Root); !ok {
			t.Fatalf("the lab has no scenario %q", r.node2Root)
		}
	}
	root := rootScenario.Root
	checkRoot(t, root)
	if err := node.SetEtc(filepath.Join(root, "etc")); err != nil {
		t.Fatal(err)
	}
	for _, bin := range r.needs {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("row %s needs %s on PATH (apt-get install -y --no-upgrade nftables; hack/test.sh's netlab line): %v", r.name, bin, err)
		}
	}
	if r.faults != nil {
		if err := n.Apply(ctx, r.faults(n.Addrs)...); err != nil {
			t.Fatal(err)
		}
	}
	if r.check != nil {
		r.check(t, ctx, n)
	}
	cd, err := netlab.StartContainerd(ctx, node, filepath.Join(n.Dir, "containerd"), serviceEnv(root)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cd.Stop)
	res := result{row: r.name, image: sc.Image, version: cd.Version}
	defer func() {
		resultsMu.Lock()
		results = append(results, res)
		resultsMu.Unlock()
	}()

	// 1. containerd, through CRI, as the kubelet asks it.
	var auth *cri.AuthConfig
	if sc.Username != "" {
		auth = &cri.AuthConfig{Username: sc.Username, Password: sc.Password}
	}
	c, err := cri.Dial(ctx, cd.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pullCtx := ctx
	if r.criDeadline > 0 {
		var cancelPull context.CancelFunc
		pullCtx, cancelPull = context.WithTimeout(ctx, r.criDeadline)
		defer cancelPull()
	}
	began := time.Now()
	_, err = c.Pull(pullCtx, sc.Image, auth)
	res.containerdMs = time.Since(began).Milliseconds()
	var pe *cri.PullError
	switch {
	case err == nil && r.runtimePlatformOK:
		t.Logf("containerd pulled %s for its own platform %s/%s; the lab node is %s", sc.Image, goruntime.GOOS, goruntime.GOARCH, sc.Platform)
	case err == nil:
		if r.containerd != "" {
			t.Errorf("containerd pulled %s; want an error matching %q", sc.Image, r.containerd)
		}
	case errors.As(err, &pe):
		res.containerd = pe.Text
		t.Logf("containerd (%d ms): %s", res.containerdMs, pe.Text)
		if sc.Password != "" && strings.Contains(pe.Text, sc.Password) {
			t.Errorf("containerd's error shows the password")
		}
		if r.containerd == "" {
			t.Errorf("containerd failed to pull %s: %s; want success\ncontainerd log:\n%s", sc.Image, pe.Text, readTail(cd.Log))
		} else if !regexp.MustCompile(r.containerd).MatchString(pe.Text) {
			t.Errorf("containerd error = %q, want a match for %q", pe.Text, r.containerd)
		}
	default:
		t.Fatalf("Pull(%s) = %v, want a CRI answer", sc.Image, err)
	}

	// 2. pullpath probe in the same namespace, reading the same node root.
	probeRow(t, ctx, r, bin, node, root, sc, want, &res)

	// 2b. probe --runtime-pull: the probe asks this containerd itself and
	// must agree with it; after step 1 a healthy image is already cached.
	if runtimePullRows[r.name] {
		runtimePullRow(t, ctx, bin, node, root, sc, cd.Socket)
	}

	// 3. pullpath explain on containerd's own event text.
	if pe != nil {
		explainWant := want
		if r.explain != nil {
			explainWant = *r.explain
			t.Logf("explain expectation differs from the probe's: %s", r.why)
		}
		explainRow(t, ctx, bin, pe.Event(), explainWant, &res)
	}
}

// serviceEnv is the proxy environment the node root's containerd unit
// gives the service, as systemd would start it.
func serviceEnv(root string) []string {
	v, _ := nodeview.Load(root)
	var env []string
	if v.Proxy.HTTPSProxy != "" {
		env = append(env, "HTTPS_PROXY="+v.Proxy.HTTPSProxy)
	}
	if v.Proxy.HTTPProxy != "" {
		env = append(env, "HTTP_PROXY="+v.Proxy.HTTPProxy)
	}
	if v.Proxy.NoProxy != "" {
		env = append(env, "NO_PROXY="+v.Proxy.NoProxy)
	}
	return env
}

// runtimePullRows are the rows where `probe --runtime-pull` is run too (the
// fast ones: each costs one more containerd pull).
var runtimePullRows = map[string]bool{"healthy": true, "dns-nxdomain": true, "tls-untrusted": true, "auth-anonymous": true, "blob-refused": true}

func runtimePullRow(t *testing.T, ctx context.Context, bin string, node *netlab.Netns, root string, sc labScenario, socket string) {
	t.Helper()
	args := []string{"probe", sc.Image, "--root", root, "-o", "json", "--timeout", "3s", "--deadline", "60s", "--runtime-pull", "--cri-socket", socket}
	if sc.Platform != "" {
		args = append(args, "--platform", sc.Platform)
	}
	var stdin string
	if sc.Username != "" {
		args = append(args, "--username", sc.Username, "--password-stdin")
		stdin = sc.Password + "\n"
	}
	cmd := node.Command(ctx, bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run()
	if sc.Password != "" && strings.Contains(stdout.String()+stderr.String(), sc.Password) {
		t.Errorf("probe --runtime-pull output shows the password")
	}
	var rep struct {
		Verdict struct {
			OK bool `json:"ok"`
		} `json:"verdict"`
		Runtime *struct {
			OK      bool   `json:"ok"`
			Cached  bool   `json:"cached"`
			Agrees  bool   `json:"agrees"`
			Error   string `json:"error"`
			Note    string `json:"note"`
			Verdict *struct {
				Layer string `json:"layer"`
			} `json:"verdict"`
		} `json:"runtime"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || rep.Runtime == nil {
		t.Errorf("probe --runtime-pull %s: no runtime result (%v); stderr %q", sc.Image, err, stderr.String())
		return
	}
	rt := rep.Runtime
	t.Logf("probe --runtime-pull: runtime ok=%v cached=%v agrees=%v error=%q note=%q", rt.OK, rt.Cached, rt.Agrees, rt.Error, rt.Note)
	if !rt.Agrees {
		t.Errorf("probe --runtime-pull %s: the runtime and the probe disagree: %s", sc.Image, rt.Note)
	}
	if sc.Expect.OK && !rt.Cached {
		t.Errorf("probe --runtime-pull %s: containerd pulled it in step 1, want cached=true", sc.Image)
	}
	if !sc.Expect.OK && (rt.OK || rt.Verdict == nil) {
		t.Errorf("probe --runtime-pull %s: want a failed runtime pull with a verdict, got ok=%v", sc.Image, rt.OK)
	}
}

// probeReport is the part of probe.Report the table reads.
type probeReport struct {
	Verdict struct {
		OK       bool   `json:"ok"`
		Layer    string `json:"layer"`
		Cause    string `json:"cause"`
		Role     string `json:"role"`
		Endpoint string `json:"endpoint"`
	} `json:"verdict"`
	Endpoints []struct {
		Host string `json:"host"`
		Role string `json:"role"`
	} `json:"endpoints"`
	Warnings []struct {
		Code string `json:"code"`
	} `json:"warnings"`
}

func probeRow(t *testing.T, ctx context.Context, r row, bin string, node *netlab.Netns, root string, sc labScenario, want expect, res *result) {
	args := []string{"probe", sc.Image, "--root", root, "-o", "json", "--timeout", "3s", "--deadline", "60s"}
	if sc.Platform != "" {
		args = append(args, "--platform", sc.Platform)
	}
	var stdin string
	if sc.Username != "" {
		args = append(args, "--username", sc.Username, "--password-stdin")
		stdin = sc.Password + "\n"
	}
	if !commandReady(bin, "probe", "--root") {
		res.probe = "(not built)"
		t.Log("probe column skipped: pullpath probe --root is not on this branch yet")
		return
	}
	cmd := node.Command(ctx, bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	began := time.Now()
	err := cmd.Run()
	res.probeMs = time.Since(began).Milliseconds()
	if notBuilt(err, stderr.String()) {
		t.Errorf("probe %s: %s", sc.Image, strings.TrimSpace(stderr.String()))
		return
	}
	var rep probeReport
	if jerr := json.Unmarshal(stdout.Bytes(), &rep); jerr != nil {
		t.Errorf("probe %s: %v; stdout %q, stderr %q", sc.Image, jerr, stdout.String(), stderr.String())
		res.probe = "(no report)"
		return
	}
	v := rep.Verdict
	res.probe = verdictText(v.OK, v.Layer, v.Cause, v.Role)
	t.Logf("probe (%d ms): %s %s", res.probeMs, res.probe, v.Endpoint)
	if sc.Password != "" && (strings.Contains(stdout.String(), sc.Password) || strings.Contains(stderr.String(), sc.Password)) {
		t.Errorf("probe output shows the password")
	}
	if v.OK != want.OK || v.Layer != want.Layer {
		t.Errorf("probe %s verdict = %s, want %s", sc.Image, res.probe, verdictText(want.OK, want.Layer, want.Cause, want.Role))
	}
	if want.Role != "" && v.Role != want.Role {
		t.Errorf("probe %s role = %q, want %q", sc.Image, v.Role, want.Role)
	}
	if want.Cause != "" && v.Cause != want.Cause && r.strictCause {
		t.Errorf("probe %s cause = %q, want %q (this row's point is the cause)", sc.Image, v.Cause, want.Cause)
	} else if want.Cause != "" && v.Cause != want.Cause {
		t.Logf("probe %s cause = %q, lab expects %q (layer agrees)", sc.Image, v.Cause, want.Cause)
	}
	if r.strictCause {
		// The text report too, for the README's worked example.
		text := node.Command(ctx, bin, append(slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == "-o" || a == "json" }), "--no-color")...)
		text.Stdin = strings.NewReader(stdin)
		out, _ := text.Output()
		t.Logf("probe text:\n%s", out)
	}
	var codes []string
	for _, w := range rep.Warnings {
		codes = append(codes, w.Code)
	}
	for _, w := range want.Warnings {
		if !slices.Contains(codes, w) {
			t.Errorf("probe %s warnings = %q, want %q among them", sc.Image, codes, w)
		}
	}
	if r.name == "healthy" {
		var roles []string
		for _, e := range rep.Endpoints {
			roles = append(roles, e.Role)
		}
		for _, role := range []string{"registry", "auth", "blob"} {
			if !slices.Contains(roles, role) {
				t.Errorf("probe %s endpoint roles = %q, want %q among them", sc.Image, roles, role)
			}
		}
	}
}

// explainResult is the part of explain's JSON the table reads: the verdict
// fields, at the top level or under "verdict".
// explainResult is the first finding of explain's ExplainReport (one
// document whatever the number of findings; docs/contract.md).
type explainResult struct {
	Findings []struct {
		Verdict struct {
			OK    bool   `json:"ok"`
			Layer string `json:"layer"`
			Cause string `json:"cause"`
			Role  string `json:"role"`
		} `json:"verdict"`
	} `json:"findings"`
}

func explainRow(t *testing.T, ctx context.Context, bin, event string, want expect, res *result) {
	if !commandReady(bin, "explain", "--output") {
		res.explain = "(not built)"
		t.Log("explain column skipped: pullpath explain -o is not on this branch yet")
		return
	}
	cmd := exec.CommandContext(ctx, bin, "explain", "-", "-o", "json")
	cmd.Stdin = strings.NewReader(event + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	began := time.Now()
	err := cmd.Run()
	res.explainMs = time.Since(began).Milliseconds()
	if notBuilt(err, stderr.String()) {
		t.Errorf("explain: %s", strings.TrimSpace(stderr.String()))
		return
	}
	var er explainResult
	if jerr := json.Unmarshal(stdout.Bytes(), &er); jerr != nil {
		t.Errorf("explain: %v; stdout %q, stderr %q", jerr, stdout.String(), stderr.String())
		res.explain = "(no result)"
		return
	}
	var v struct {
		OK                 bool
		Layer, Cause, Role string
	}
	v.OK = true // no finding: explain saw no failure
	if len(er.Findings) > 0 {
		f := er.Findings[0].Verdict
		v.OK, v.Layer, v.Cause, v.Role = f.OK, f.Layer, f.Cause, f.Role
	}
	res.explain = verdictText(v.OK, v.Layer, v.Cause, v.Role)
	t.Logf("explain: %s", res.explain)
	if v.Layer != want.Layer {
		t.Errorf("explain(%q) layer = %q, want %q", event, v.Layer, want.Layer)
	}
	// The role only where the text shows it.
	if v.Role != "" && want.Role != "" && v.Role != want.Role {
		t.Errorf("explain(%q) role = %q, want %q", event, v.Role, want.Role)
	}
}

func verdictText(ok bool, layer, cause, role string) string {
	if ok {
		return "ok"
	}
	s := layer
	if cause != "" {
		s += " " + cause
	}
	if role != "" {
		s += " (" + role + ")"
	}
	return s
}

// notBuilt reports a command that is still a placeholder on this branch.
func notBuilt(err error, stderr string) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.ExitCode() == 3 && strings.Contains(stderr, "not built yet")
}

var (
	readyMu sync.Mutex
	ready   = map[string]bool{}
)

// commandReady reports whether `pullpath <cmd> --help` lists flag, i.e. the
// command is more than this branch's placeholder. A column whose command is
// not built yet is reported as such, not failed.
func commandReady(bin, cmd, flag string) bool {
	readyMu.Lock()
	defer readyMu.Unlock()
	if v, ok := ready[cmd]; ok {
		return v
	}
	out, _ := exec.Command(bin, cmd, "--help").CombinedOutput()
	ready[cmd] = strings.Contains(string(out), flag)
	return ready[cmd]
}

var pullpathBuild binBuild

// buildPullpath builds ./cmd/pullpath once per test binary, or returns
// $PULLPATH_NETLAB_BIN when that names a pullpath binary to use instead.
// The binary is shared by every test of this package; TestMain removes it.
func buildPullpath(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("PULLPATH_NETLAB_BIN"); bin != "" {
		return bin
	}
	return pullpathBuild.get(t, "pullpath", "./cmd/pullpath", nil)
}

// report logs the table and, with -update, rewrites the corpus of
// containerd's error texts.
func report(t *testing.T) {
	resultsMu.Lock()
	defer resultsMu.Unlock()
	sort.Slice(results, func(i, j int) bool { return rowIndex(results[i].row) < rowIndex(results[j].row) })
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-22s %8s %8s  %-40s %-40s %s\n", "scenario", "ctrd ms", "probe ms", "probe", "explain", "containerd error")
	for _, r := range results {
		fmt.Fprintf(&b, "%-22s %8d %8d  %-40s %-40s %s\n", r.row, r.containerdMs, r.probeMs, r.probe, r.explain, trim(r.containerd))
	}
	t.Log(b.String())
	if !*update {
		return
	}
	var out bytes.Buffer
	for _, r := range results {
		if r.containerd == "" {
			continue
		}
		line, _ := json.Marshal(struct {
			Scenario          string `json:"scenario"`
			ContainerdVersion string `json:"containerd_version"`
			Image             string `json:"image"`
			Error             string `json:"error"`
		}{r.row, r.version, r.image, r.containerd})
		out.Write(append(line, '\n'))
	}
	if err := os.WriteFile(filepath.Join("testdata", "containerd-errors.jsonl"), out.Bytes(), 0o644); err != nil {
		t.Errorf("writing corpus: %v", err)
	}
}

func rowIndex(name string) int {
	return slices.IndexFunc(rows, func(r row) bool { return r.name == name })
}

// trim shortens containerd's text for the table: the wrapper prefix that
// every row shares goes.
func trim(s string) string {
	if i := strings.Index(s, "desc = "); i >= 0 {
		s = s[i+len("desc = "):]
	}
	s = regexp.MustCompile(`^failed to pull and unpack image "[^"]*": `).ReplaceAllString(s, "")
	return s
}
