package monitor

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/pullpath/pullpath/internal/cluster/clustertest"
	"github.com/pullpath/pullpath/internal/lab"
)

// envScale lists the agent counts of a large run of TestScaleSimulation
// ("50,100,200,500"); without it the test runs one small N, as CI does.
const envScale = "PULLPATH_MONITOR_SCALE"

// The simulation's clock. One simulated interval stands for the default
// interval (5 minutes); full_interval is compressed 18 times more (4
// intervals instead of 72), so that a run sees several full periods; a
// token lives 12 intervals (1 hour, compressed); Retry-After is scaled so
// that "Retry-After: 30" lasts 1.5 simulated intervals.
const (
	simFullIntervals = 4  // full_interval in intervals
	simTokenInterval = 12 // token lifetime in intervals
	simLayers        = 10 // layers of the watched image
	simPools         = 5
	simK             = 1 // full_per_interval
	retryAfterSecs   = 30
	projectNodes     = 5000
)

type simRun struct {
	N         int
	Pools     int
	Interval  time.Duration // simulated
	Measure   int           // intervals measured
	Throttle  bool
	retryWait time.Duration // Retry-After: 30, scaled
}

// TestScaleSimulation runs N agents (goroutines, each with its own node
// name, node root and pool) against the embedded lab and a real
// kube-apiserver for the pools' Leases, with compressed intervals, and
// prints what the registry saw: requests per minute by kind, the peak
// second against the mean, full downloads per pool per full_interval,
// bytes per full_interval, and the projection to 5,000 nodes. It checks
// the targets: at 5,000 nodes one target costs at most 1,000
// requests a minute; no manifest GET while the digest is unchanged; at
// most k full downloads per pool per full_interval; the peak second at
// most twice the mean; after a 429 with Retry-After: 30, no request from an
// agent that received it before the (scaled) 30 s passed.
//
//	PULLPATH_KUBE_BIN=$(bash tools/kube/build.sh) PULLPATH_MONITOR_SCALE=50,100,200,500 \
//	go test -count=1 -timeout 60m -run TestScaleSimulation -v ./internal/monitor/
func TestScaleSimulation(t *testing.T) {
	// The measured window (12 intervals) holds every agent's token renewal.
	// At this N five pools' blob rounds (11 HEADs each) outweigh the
	// nodes' own HEADs; three keep the mix nearer a real cluster's.
	runs := []simRun{{N: 36, Pools: 3, Interval: 3 * time.Second, Measure: 12, Throttle: true}}
	if v := os.Getenv(envScale); v != "" {
		runs = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < simPools {
				t.Fatalf("%s=%q: want agent counts of at least %d, e.g. 50,100,200,500", envScale, v, simPools)
			}
			// About 12 agents per simulated second, whatever N: the
			// probes' CPU stays the same, the interval stretches.
			iv := max(3*time.Second, time.Duration(n)*time.Second/12)
			runs = append(runs, simRun{N: n, Pools: simPools, Interval: iv, Measure: 12, Throttle: true})
		}
	}
	dir := t.TempDir()
	resolv := filepath.Join(dir, "resolv.conf")
	if err := os.WriteFile(resolv, []byte("nameserver "+lab.DefaultAddrs().DNS.String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := clustertest.StartWith(t, clustertest.Options{ResolvConf: resolv})
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(clustertest.AdminToken), 0o600); err != nil {
		t.Fatal(err)
	}
	var tables []string
	for _, r := range runs {
		r.retryWait = time.Duration(float64(r.Interval) * 1.5)
		tables = append(tables, runSimulation(t, srv, tokenFile, r))
	}
	t.Logf("scale simulation (one simulated interval = 5 real minutes; full_interval = %d intervals; token lifetime %d intervals; %d-layer image; k = %d):\n%s",
		simFullIntervals, simTokenInterval, simLayers, simK, strings.Join(tables, "\n"))
}

// lockedBuffer collects the agents' logs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// nodeRoot copies the healthy scenario's root and adds a hosts.toml that
// names the node in a header the lab logs (hosts.toml's [header], as an
// operator sets one for a mirror).
func nodeRoot(t *testing.T, src, dst, registryHost, node string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	toml := fmt.Sprintf("server = \"https://%[1]s\"\n\n[host.\"https://%[1]s\"]\n  capabilities = [\"pull\", \"resolve\"]\n  [host.\"https://%[1]s\".header]\n    %[2]s = \"%[3]s\"\n", registryHost, lab.NodeHeader, node)
	d := filepath.Join(dst, "etc", "containerd", "certs.d", registryHost)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "hosts.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
}

func runSimulation(t *testing.T, srv *clustertest.Server, tokenFile string, r simRun) string {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, err := lab.Start(ctx, lab.Options{Layers: simLayers, TokenTTL: simTokenInterval * r.Interval})
	if err != nil {
		t.Fatalf("starting the lab: %v", err)
	}
	defer l.Close()
	sc := scenario(t, l, "healthy")

	ns := fmt.Sprintf("sim-%d", r.N)
	if _, err := srv.Clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", ns, err)
	}
	// Every full download the pools' Leases hand out, as the API server
	// records it.
	wctx, wcancel := context.WithCancel(context.Background())
	defer wcancel()
	claims := watchClaims(wctx, func(rv string) (watch.Interface, error) {
		// The client's timeout ends a watch: it is resumed from the
		// last version seen.
		return srv.Clientset.CoordinationV1().Leases(ns).Watch(wctx, metav1.ListOptions{ResourceVersion: rv})
	})
	shared := &http.Client{Timeout: 15 * time.Second}
	logs := &lockedBuffer{}
	rootDir := t.TempDir()
	poolOf := map[string]string{}
	var agents []*Agent
	for i := range r.N {
		node := fmt.Sprintf("n%d-%04d", r.N, i)
		pool := fmt.Sprintf("pool-%d", i%r.Pools)
		poolOf[node] = pool
		if _, err := srv.Clientset.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node,
			Labels: map[string]string{"agentpool": pool}}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating node %s: %v", node, err)
		}
		root := filepath.Join(rootDir, node)
		nodeRoot(t, sc.Root, root, l.Registry, node)
		nc, err := NewNodeClient(srv.URL, tokenFile, srv.CAFile, node)
		if err != nil {
			t.Fatal(err)
		}
		if shared.Transport == nil {
			shared.Transport = nc.HTTP.Transport
		}
		nc.HTTP = shared
		cfg := Config{Targets: []Target{{Name: "app", Image: sc.Image, Platform: sc.Platform}},
			Interval: Duration(r.Interval), FullInterval: Duration(simFullIntervals * r.Interval), FullPerInterval: simK,
			// Each step's timeout is generous (a loaded machine starves
			// the test process; a step cut short is tried again on the
			// next host of the plan); the probe's deadline two intervals
			// (so a pool round spreads its blobs over three quarters of
			// one, as with the defaults it does over one minute).
			Timeout: Duration(max(5*time.Second, r.Interval/2)), Deadline: Duration(2 * r.Interval)}
		cfg.defaults()
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		agents = append(agents, &Agent{Config: cfg, Node: node, Pool: pool, Root: root, DNSPort: l.DNSPort,
			Metrics: NewMetrics(node, pool, "sim"), Client: nc, Coord: &Coordinator{Client: nc, Namespace: ns},
			Log: logs, RetryAfterScale: float64(r.retryWait) / float64(retryAfterSecs*time.Second)})
	}

	// Every agent starts at once, as a DaemonSet rollout or a new pool does.
	var wg sync.WaitGroup
	start := time.Now()
	for _, a := range agents {
		wg.Add(1)
		go func() { defer wg.Done(); _ = a.Run(ctx, nil) }()
	}
	// Warm-up: every node's first round learns its token and manifest
	// (a 401, a token, a HEAD and a GET), once. The window starts when
	// every agent has had a working round, two intervals in at the
	// earliest (at most eight), just before a node's slot that ends the
	// widest gap between slots, so that no round's requests straddle
	// either end of it.
	stalls := watchStalls(ctx)
	learned := map[string]bool{}
	for time.Since(start) < 2*r.Interval || len(learned) < len(agents) && time.Since(start) < 8*r.Interval {
		time.Sleep(50 * time.Millisecond)
		for _, a := range agents {
			if res := a.Results(); len(res) == 1 && res[0].Verdict.OK {
				learned[a.Node] = true
			}
		}
	}
	if len(learned) < len(agents) {
		t.Errorf("N=%d: %d of %d agents had no working round in 8 intervals", r.N, len(agents)-len(learned), len(agents))
	}
	t0 := NextSlot(time.Now(), r.Interval, windowPhase(agents, r.Interval))
	t1 := t0.Add(time.Duration(r.Measure) * r.Interval)
	time.Sleep(time.Until(t1))

	var throttleAt, throttleEnd time.Time
	if r.Throttle {
		throttleAt = time.Now()
		throttleEnd = throttleAt.Add(r.Interval / 2)
		l.Throttle(lab.HostRegistry, throttleEnd, retryAfterSecs)
		time.Sleep(time.Until(throttleEnd.Add(r.retryWait + r.Interval)))
	}
	cancel()
	wg.Wait()
	reqs := l.Requests()
	wcancel()
	<-claims.done

	if strings.Contains(logs.String(), "instead of the pool's Lease") {
		t.Errorf("N=%d: an agent fell back from the Leases:\n%s", r.N, tail(logs.String(), 3000))
	}
	for _, a := range agents {
		res := a.Results()
		// The end of the run may cut a probe short (unknown.interrupted).
		if len(res) != 1 || !res[0].Verdict.OK && res[0].Verdict.Cause != "registry.ratelimit" && res[0].Verdict.Cause != "unknown.interrupted" {
			t.Errorf("N=%d: agent %s ended with %+v", r.N, a.Node, res)
			break
		}
	}

	st := analyse(reqs, poolOf, t0, t1, r)
	st.stalled, st.stalls, st.claims = stalls.seconds(t0, len(st.perSecond)), stalls, claims
	table := st.table(r)
	fails := st.check(r)
	if r.Throttle {
		fails = append(fails, checkRetryAfter(reqs, throttleAt, throttleEnd, r.retryWait, stalls)...)
	}
	for _, f := range fails {
		t.Errorf("N=%d: %s", r.N, f)
	}
	if len(fails) > 0 {
		t.Logf("N=%d agents' log (tail):\n%s", r.N, tail(logs.String(), 4000))
	}
	return table
}

// windowPhase is an offset in the interval 5 ms before the slot that ends
// the widest gap between the agents' slots.
func windowPhase(agents []*Agent, iv time.Duration) time.Duration {
	var offs []time.Duration
	for _, a := range agents {
		offs = append(offs, SlotOffset(a.Node, iv))
	}
	slices.Sort(offs)
	end, widest := offs[0], offs[0]+iv-offs[len(offs)-1]
	for i := 1; i < len(offs); i++ {
		if g := offs[i] - offs[i-1]; g > widest {
			end, widest = offs[i], g
		}
	}
	return (end - 5*time.Millisecond + iv) % iv
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// simStats is what the registry saw in the measured window.
type simStats struct {
	window time.Duration
	kinds  map[string]int // registry and token host requests by kind
	// The node part: each node's own requests (tokens, manifest
	// requests, pings), those of the registry counted by the node's
	// round (its slot) in the window, the tokens by time. The pools'
	// part: the blob requests of the pools' rounds.
	nodeReg   int
	tokens    int
	pools     int
	overSlots []string // "node at slot": more than one registry request in one round
	silent    int      // rounds in the window in which a node sent the registry nothing
	// stalled marks the seconds in which the test process itself did not
	// run for a while (a loaded machine): the requests the agents meant
	// to send then leave together afterwards, a burst of the machine's
	// making, not the agents'.
	stalled    []bool
	blobHost   int // requests the blob host served (redirect targets)
	challenges int // 401 answers
	bytes      int64
	perSecond  []int
	secKinds   []map[string]int // the kinds of each second
	fulls      map[string][]int // pool → full downloads per full_interval window
	fullTotal  int
	fullAt     map[string][]claim // pool → the node and first GET of each full download
	claims     *claimLog
	t0         time.Time
	stalls     *stallLog
}

// nodeKinds are the node part's kinds, which scale with N; the others
// (blob HEADs and GETs) are the pools' part.
var nodeKinds = []string{lab.KindToken, lab.KindManifestHead, lab.KindManifestGet, lab.KindPing, lab.KindOther}

func analyse(reqs []lab.Request, poolOf map[string]string, t0, t1 time.Time, r simRun) simStats {
	st := simStats{window: t1.Sub(t0), kinds: map[string]int{}, fulls: map[string][]int{}, fullAt: map[string][]claim{}, t0: t0}
	secs := int(st.window / time.Second)
	st.perSecond = make([]int, max(secs, 1))
	st.secKinds = make([]map[string]int, len(st.perSecond))
	for i := range st.secKinds {
		st.secKinds[i] = map[string]int{}
	}
	full := simFullIntervals * r.Interval
	windows := int(st.window / full)
	for p := range r.Pools {
		st.fulls[fmt.Sprintf("pool-%d", p)] = make([]int, max(windows, 1))
	}
	lastGet := map[string]time.Time{}
	perSlot := map[string]map[int64]int{}
	for _, q := range reqs {
		if q.Host == lab.HostRegistry && q.Node != "" && slices.Contains(nodeKinds, q.Kind) {
			// The node's round this request belongs to: its slot on
			// the epoch grid (a request leaves a few ms after it).
			off := SlotOffset(q.Node, r.Interval)
			k := (q.At.UnixNano() - int64(off)) / int64(r.Interval)
			if slot := time.Unix(0, k*int64(r.Interval)+int64(off)); !slot.Before(t0) && slot.Before(t1) {
				if perSlot[q.Node] == nil {
					perSlot[q.Node] = map[int64]int{}
				}
				perSlot[q.Node][k]++
				st.nodeReg++
			}
		}
		if q.At.Before(t0) || !q.At.Before(t1) {
			continue
		}
		st.bytes += q.Bytes
		if q.Host == lab.HostBlob {
			st.blobHost++
			continue
		}
		st.kinds[q.Kind]++
		switch {
		case q.Host == lab.HostAuth:
			st.tokens++
		case !slices.Contains(nodeKinds, q.Kind):
			st.pools++
		}
		if q.Status == http.StatusUnauthorized {
			st.challenges++
		}
		if i := int(q.At.Sub(t0) / time.Second); i < len(st.perSecond) {
			st.perSecond[i]++
			st.secKinds[i][q.Kind]++
		}
		if q.Kind == lab.KindBlobGet && q.Host == lab.HostRegistry {
			// One full download is a burst of blob GETs from one node.
			// A node's next full download is a full period later at
			// the earliest; half of one tells two apart.
			if prev, ok := lastGet[q.Node]; !ok || q.At.Sub(prev) > full/2 {
				st.fullTotal++
				st.fullAt[poolOf[q.Node]] = append(st.fullAt[poolOf[q.Node]], claim{q.Node, q.At})
				if w := int(q.At.Sub(t0) / full); w < windows {
					st.fulls[poolOf[q.Node]][w]++
				}
			}
			lastGet[q.Node] = q.At
		}
	}
	for node := range poolOf {
		off := SlotOffset(node, r.Interval)
		first := (t0.UnixNano() - int64(off) + int64(r.Interval) - 1) / int64(r.Interval)
		for k := first; time.Unix(0, k*int64(r.Interval)+int64(off)).Before(t1); k++ {
			switch n := perSlot[node][k]; {
			case n == 0:
				st.silent++
			case n > 1:
				st.overSlots = append(st.overSlots, fmt.Sprintf("%s in its round at %s (%d requests)", node, time.Unix(0, k*int64(r.Interval)+int64(off)).Sub(t0).Round(time.Millisecond), n))
			}
		}
	}
	slices.Sort(st.overSlots)
	return st
}

// nodePart is the nodes' own requests in the window, tokens included.
func (st simStats) nodePart() int { return st.nodeReg + st.tokens }

// rounds is the nodes' rounds in the window.
func (st simStats) rounds(r simRun) float64 {
	return float64(r.N) * float64(st.window) / float64(r.Interval)
}

func (st simStats) total() int {
	n := 0
	for _, v := range st.kinds {
		n += v
	}
	return n
}

// perRealMinute turns a count over the window into requests per real
// minute: one simulated interval stands for DefaultInterval.
func (st simStats) perRealMinute(n int, r simRun) float64 {
	intervals := float64(st.window) / float64(r.Interval)
	return float64(n) / intervals / DefaultInterval.Minutes()
}

// projected is the requests per real minute at projectNodes nodes with the
// same pools: the node part scales with the node count, the pools' part
// does not.
func (st simStats) projected(r simRun) (nodes, pools float64) {
	return st.perRealMinute(st.nodePart(), r) * projectNodes / float64(r.N), st.perRealMinute(st.pools, r)
}

// peakMean is the peak second (of those in which the test process did
// not stall) and the mean second (of all).
func (st simStats) peakMean() (int, float64) {
	peak, sum := 0, 0
	for i, n := range st.perSecond {
		if i >= len(st.stalled) || !st.stalled[i] {
			peak = max(peak, n)
		}
		sum += n
	}
	return peak, float64(sum) / float64(len(st.perSecond))
}

func (st simStats) stalledSeconds() int {
	n := 0
	for _, s := range st.stalled {
		if s {
			n++
		}
	}
	return n
}

// claim is a full download: granted by a Lease (node, acquireTime) or
// seen at the registry (node, first GET).
type claim struct {
	node string
	at   time.Time
}

// claimLog is the full downloads the pools' Leases granted, in order, as
// a watch on the API server saw them; the first entry of a pool is the
// Lease's creation (a HEAD round, with a back-dated acquireTime that sets
// the pool's first full download's phase).
type claimLog struct {
	mu     sync.Mutex
	byPool map[string][]claim
	err    string
	done   chan struct{}
}

func watchClaims(ctx context.Context, start func(resourceVersion string) (watch.Interface, error)) *claimLog {
	cl := &claimLog{byPool: map[string][]claim{}, done: make(chan struct{})}
	fail := func(err string) {
		cl.mu.Lock()
		cl.err = err
		cl.mu.Unlock()
	}
	w, err := start("")
	if err != nil {
		fail(err.Error())
		close(cl.done)
		return cl
	}
	go func() {
		defer close(cl.done)
		rv := ""
		for {
			ev, open := <-w.ResultChan()
			if !open {
				if ctx.Err() != nil {
					return
				}
				if w, err = start(rv); err != nil {
					fail(err.Error())
					return
				}
				continue
			}
			l, ok := ev.Object.(*coordinationv1.Lease)
			if ev.Type == watch.Error {
				if ctx.Err() == nil { // not the end of the run
					fail(fmt.Sprintf("%v", ev.Object))
				}
				return
			}
			if !ok {
				continue
			}
			rv = l.ResourceVersion
			if l.Spec.AcquireTime == nil || l.Spec.HolderIdentity == nil {
				continue
			}
			pool, c := l.Annotations[annoPool], claim{*l.Spec.HolderIdentity, l.Spec.AcquireTime.Time}
			cl.mu.Lock()
			if cs := cl.byPool[pool]; len(cs) == 0 || !cs[len(cs)-1].at.Equal(c.at) {
				cl.byPool[pool] = append(cs, c)
			}
			cl.mu.Unlock()
		}
	}()
	return cl
}

// stallLog records when the test process did not run: a ticker every
// 10 ms whose tick comes more than stallLimit late.
type stallLog struct {
	mu    sync.Mutex
	spans [][2]time.Time
}

const stallLimit = 150 * time.Millisecond

func watchStalls(ctx context.Context) *stallLog {
	sl := &stallLog{}
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		last := time.Now()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				if now.Sub(last) > stallLimit {
					sl.mu.Lock()
					sl.spans = append(sl.spans, [2]time.Time{last, now})
					sl.mu.Unlock()
				}
				last = now
			}
		}
	}()
	return sl
}

// within is how long the process stalled between a and b.
func (sl *stallLog) within(a, b time.Time) time.Duration {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	var d time.Duration
	for _, sp := range sl.spans {
		from, to := later(sp[0], a), earlier(sp[1], b)
		if to.After(from) {
			d += to.Sub(from)
		}
	}
	return d
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// seconds marks the seconds from t0 that a stall touched, and the second
// after each (where the delayed requests land).
func (sl *stallLog) seconds(t0 time.Time, n int) []bool {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	out := make([]bool, n)
	for _, sp := range sl.spans {
		from, to := int(sp[0].Sub(t0)/time.Second), int(sp[1].Sub(t0)/time.Second)+1
		for i := max(from, 0); i <= to && i < n; i++ {
			out[i] = true
		}
	}
	return out
}

// minGrantGap is the shortest time between two full downloads a pool's
// Lease granted (its creation, a HEAD round, counts as the first).
func (st simStats) minGrantGap() time.Duration {
	if st.claims == nil {
		return 0
	}
	st.claims.mu.Lock()
	defer st.claims.mu.Unlock()
	var m time.Duration
	for _, cs := range st.claims.byPool {
		for i := 1; i < len(cs); i++ {
			if g := cs[i].at.Sub(cs[i-1].at); m == 0 || g < m {
				m = g
			}
		}
	}
	return m
}

func (st simStats) maxFulls() int {
	m := 0
	for _, ws := range st.fulls {
		for _, n := range ws {
			m = max(m, n)
		}
	}
	return m
}

func (st simStats) table(r simRun) string {
	var b strings.Builder
	fmt.Fprintf(&b, "N=%d agents, %d pools, simulated interval %s (full_interval %s), measured %s\n", r.N, r.Pools, r.Interval, simFullIntervals*r.Interval, st.window.Round(time.Second))
	fmt.Fprintf(&b, "  %-16s %10s %14s\n", "kind", "requests", "per real min")
	for _, k := range []string{lab.KindToken, lab.KindManifestHead, lab.KindManifestGet, lab.KindBlobHead, lab.KindBlobGet, lab.KindPing, lab.KindOther} {
		fmt.Fprintf(&b, "  %-16s %10d %14.1f\n", k, st.kinds[k], st.perRealMinute(st.kinds[k], r))
	}
	fmt.Fprintf(&b, "  %-16s %10d %14.1f\n", "total", st.total(), st.perRealMinute(st.total(), r))
	fmt.Fprintf(&b, "  %-16s %10d %14.1f   (of which 401 challenges: %d)\n", "blob host", st.blobHost, st.perRealMinute(st.blobHost, r), st.challenges)
	peak, mean := st.peakMean()
	top := slices.Index(st.perSecond, peak)
	fmt.Fprintf(&b, "  peak second %d requests, mean %.1f (%.2fx); the peak second held %v; %d of %d seconds left out of the peak because the test process stalled (over %s without CPU: the machine's load)\n",
		peak, mean, float64(peak)/mean, st.secKinds[top], st.stalledSeconds(), len(st.perSecond), stallLimit)
	fmt.Fprintf(&b, "  requests per second: %v\n", st.perSecond)
	windows := int(st.window / (simFullIntervals * r.Interval))
	fmt.Fprintf(&b, "  full downloads: %d in %d full_interval(s) over %d pools (at most %d per pool in a fixed window of one, counted by first GET); the Leases' grants at least %s apart per pool (full_interval/k = %s, k = %d)\n",
		st.fullTotal, windows, r.Pools, st.maxFulls(), st.minGrantGap().Round(time.Millisecond), simFullIntervals*r.Interval/simK, simK)
	fmt.Fprintf(&b, "  bytes per full_interval: %.1f MiB\n", float64(st.bytes)/(float64(st.window)/float64(simFullIntervals*r.Interval))/(1<<20))
	fmt.Fprintf(&b, "  node part: %d requests in %.0f node rounds = %.3f per node per interval (tokens %d, registry %d; %d rounds sent the registry nothing, %d more than one)\n",
		st.nodePart(), st.rounds(r), float64(st.nodePart())/st.rounds(r), st.tokens, st.nodeReg, st.silent, len(st.overSlots))
	fmt.Fprintf(&b, "  pools' part: %d blob requests = %.1f per pool per interval (bound B = %d: one blob round per pool per interval)\n",
		st.pools, float64(st.pools)/(float64(st.window)/float64(r.Interval))/float64(r.Pools), simLayers+1)
	nodes, pools := st.projected(r)
	fmt.Fprintf(&b, "  projection to %d nodes (same %d pools): %.0f + %.1f = %.0f requests per minute (node part, at most %d, + pools' share, at most P*B/I = %.1f; the blob host sees another %.1f)\n",
		projectNodes, r.Pools, nodes, pools, nodes+pools, projectNodes/int(DefaultInterval.Minutes()), poolBound(r), st.perRealMinute(st.blobHost, r))
	return b.String()
}

// poolBound is docs/monitor-scale.md's pools' part per real minute: P·B/I
// (one blob round of B requests per pool per interval; a full download
// takes the place of that interval's HEADs).
func poolBound(r simRun) float64 {
	return float64(r.Pools) * float64(simLayers+1) / DefaultInterval.Minutes()
}

func (st simStats) check(r simRun) []string {
	var fails []string
	// The node part: at most one registry request per node per round,
	// and the tokens only in rounds that sent the registry nothing else,
	// so at most one request per node per interval, tokens included.
	if len(st.overSlots) > 0 {
		fails = append(fails, fmt.Sprintf("%d node rounds sent the registry more than one request, want at most one: %s", len(st.overSlots), strings.Join(st.overSlots[:min(5, len(st.overSlots))], "; ")))
	}
	if n, rounds := st.nodePart(), st.rounds(r); float64(n) > rounds {
		nodes, _ := st.projected(r)
		fails = append(fails, fmt.Sprintf("the node part is %d requests in %.0f node rounds (tokens %d; projected %.0f per minute at %d nodes), want at most one per node per interval (%d per minute)",
			n, rounds, st.tokens, nodes, projectNodes, projectNodes/int(DefaultInterval.Minutes())))
	}
	// The pools' part: one blob round (B requests) per pool per
	// interval; a round whose start sits at the window's edge may fall in
	// it once more.
	if bound := r.Pools * (simLayers + 1) * (r.Measure + 1); st.pools > bound {
		fails = append(fails, fmt.Sprintf("the pools' part is %d blob requests in %d intervals over %d pools, more than one round of %d per pool per interval (%d)", st.pools, r.Measure, r.Pools, simLayers+1, bound))
	}
	if n := st.kinds[lab.KindManifestGet]; n != 0 {
		fails = append(fails, fmt.Sprintf("%d manifest GETs while the digest did not change, want 0", n))
	}
	// Full downloads: the API server's record of the pools' Leases shows
	// every grant at least full_interval/k after the last (so at most k
	// per full_interval), and every full download the registry saw was
	// granted to its node by its pool's Lease, no longer than the probe's
	// deadline before. (Counting the registry's downloads in fixed
	// windows would blame the Lease for a download that a loaded
	// machine delayed past a window's edge.)
	period := simFullIntervals * r.Interval / simK
	st.claims.mu.Lock()
	defer st.claims.mu.Unlock()
	if st.claims.err != "" {
		fails = append(fails, "watching the Leases: "+st.claims.err)
	}
	for pool, cs := range st.claims.byPool {
		for i := 1; i < len(cs); i++ {
			if gap := cs[i].at.Sub(cs[i-1].at); gap < period-time.Millisecond {
				fails = append(fails, fmt.Sprintf("%s's Lease granted full downloads to %s at +%s and to %s at +%s, less than full_interval/k = %s apart", pool,
					cs[i-1].node, cs[i-1].at.Sub(st.t0).Round(time.Millisecond), cs[i].node, cs[i].at.Sub(st.t0).Round(time.Millisecond), period))
			}
		}
	}
	for pool, fs := range st.fullAt {
		for _, f := range fs {
			granted := slices.ContainsFunc(st.claims.byPool[pool], func(c claim) bool {
				return c.node == f.node && !f.at.Before(c.at) && f.at.Sub(c.at) <= 2*r.Interval
			})
			if !granted {
				var grants []string
				for _, c := range st.claims.byPool[pool] {
					grants = append(grants, fmt.Sprintf("%s at +%s", c.node, c.at.Sub(st.t0).Round(time.Millisecond)))
				}
				fails = append(fails, fmt.Sprintf("%s (%s) downloaded in full at +%s without a grant of its pool's Lease (its grants: %s)", f.node, pool, f.at.Sub(st.t0).Round(time.Millisecond), strings.Join(grants, ", ")))
			}
		}
	}
	if st.fullTotal == 0 {
		fails = append(fails, "no full download at all: the pools' Leases never handed one out")
	}
	if st.kinds[lab.KindBlobHead] == 0 {
		fails = append(fails, "no blob HEAD at all: the pools' rotating HEAD rounds never ran")
	}
	// The peak is judged over the seconds in which the test process
	// ran; when it stalled in more than a third of them, the machine is
	// too loaded to judge it, and the test says so.
	if st.stalledSeconds()*3 > len(st.perSecond) {
		fails = append(fails, fmt.Sprintf("the test process stalled (over %s without CPU) in %d of %d seconds: the machine is too loaded to judge the peak second", stallLimit, st.stalledSeconds(), len(st.perSecond)))
	} else if peak, mean := st.peakMean(); float64(peak) > 2*mean {
		fails = append(fails, fmt.Sprintf("peak second %d requests, more than twice the mean %.1f", peak, mean))
	}
	return fails
}

// inFlight is how long after a 429 a request of the same node may still
// arrive because it was sent before the 429 did (the parallel blob
// requests of a pool round), plus what the test process (the lab runs in
// it) stalled in between.
const inFlight = 100 * time.Millisecond

// checkRetryAfter: every node that received a 429 sent the registry nothing
// until the (scaled) Retry-After had passed.
func checkRetryAfter(reqs []lab.Request, from, to time.Time, wait time.Duration, stalls *stallLog) []string {
	got := map[string]time.Time{}
	var fails []string
	for _, q := range reqs {
		if q.Host != lab.HostRegistry || q.Node == "" || q.At.Before(from) {
			continue
		}
		if t429, ok := got[q.Node]; ok && q.At.After(t429.Add(inFlight+stalls.within(t429, q.At))) && q.At.Before(t429.Add(wait)) {
			fails = append(fails, fmt.Sprintf("node %s got 429 (Retry-After: %d, scaled to %s) at +%s and asked again at +%s",
				q.Node, retryAfterSecs, wait, t429.Sub(from).Round(time.Millisecond), q.At.Sub(from).Round(time.Millisecond)))
			delete(got, q.Node)
			continue
		}
		if _, ok := got[q.Node]; !ok && q.Status == http.StatusTooManyRequests {
			got[q.Node] = q.At
		}
	}
	if len(got) == 0 && len(fails) == 0 {
		fails = append(fails, fmt.Sprintf("no agent received the 429 of the %s throttle window: nothing was checked", to.Sub(from)))
	}
	return fails
}
