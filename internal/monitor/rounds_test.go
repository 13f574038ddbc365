package monitor

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pullpath/pullpath/internal/lab"
)

func countKinds(reqs []lab.Request, host string) map[string]int {
	out := map[string]int{}
	for _, q := range reqs {
		if host == "" || q.Host == host {
			out[q.Kind]++
		}
	}
	return out
}

// TestCheapRound: after a first round that learns the token, the manifest
// and the hosts, a round costs the registry one manifest HEAD (no token, no
// manifest GET, no blob request) and still walks DNS, route and TLS to the
// token and blob hosts; the agent's counters agree with the registry's log.
func TestCheapRound(t *testing.T) {
	l := startLab(t)
	sc := scenario(t, l, "healthy")
	// A short interval: the 40 rounds searched below stay within the
	// token's lifetime (5 minutes, less the memo's margin and jitter), so
	// the cheap round is not the one that renews the token. With the
	// default 5-minute interval the second candidate round already fell
	// past the token's expiry and sent only the token request.
	a := newAgent(l, sc.Root, Config{Targets: []Target{{Name: "app", Image: sc.Image, Platform: sc.Platform}}, Timeout: Duration(2 * time.Second), Interval: Duration(2 * time.Second), FullInterval: -1})
	logs := &lockedBuffer{}
	a.Log = logs
	ctx := context.Background()
	first := a.Round(ctx)
	if !first[0].Verdict.OK || first[0].Mode != BlobsHead {
		t.Fatalf("first round: %+v", first[0])
	}
	l.ResetRequests()
	// Rounds whose hash does not pick this node for the blob HEADs.
	var cheap Result
	now := time.Now()
	for i := 1; i < 41; i++ {
		at := now.Add(time.Duration(i) * time.Duration(a.Config.Interval))
		a.Now = func() time.Time { return at }
		round := at.UnixNano() / int64(time.Duration(a.Config.Interval))
		if nameHash("head", a.Node, "app", fmt.Sprint(round))%fallbackHeadEvery != 0 {
			cheap = a.Round(ctx)[0]
			break
		}
	}
	if cheap.Mode != BlobsNone || !cheap.Verdict.OK {
		t.Fatalf("cheap round: %+v\n%s", cheap, logs)
	}
	got := countKinds(l.Requests(), "")
	want := map[string]int{lab.KindManifestHead: 1}
	if len(got) != 1 || got[lab.KindManifestHead] != 1 {
		t.Errorf("the registry saw %v in a cheap round, want %v", got, want)
	}
	if n := testutil.ToFloat64(a.Metrics.requests.WithLabelValues(l.Registry, "manifest_head")); n != 3 {
		// Two in the first round (the 401 and the retry), one now.
		t.Errorf("pullpath_registry_requests_total{kind=manifest_head} = %v, want 3", n)
	}
	if !strings.Contains(logs.String(), "monitor: round: 1 registry requests (manifest_head 1)") {
		t.Errorf("the round's request count is not logged:\n%s", logs)
	}
	// The walk still reached the token and blob hosts (their TLS expiry
	// series are refreshed by this round).
	if n := testutil.CollectAndCount(a.Metrics.certExpiry); n < 3 {
		t.Errorf("a cheap round walked %d TLS endpoints, want the registry, token and blob hosts", n)
	}
}

// TestRetryAfterHonoured: a registry that answers 429 with Retry-After gets
// no further request from the agent until it passes, not even the GET a
// failed HEAD would draw, and the throttle is counted.
func TestRetryAfterHonoured(t *testing.T) {
	l := startLab(t)
	sc := scenario(t, l, "healthy")
	a := newAgent(l, sc.Root, Config{Targets: []Target{{Name: "app", Image: sc.Image, Platform: sc.Platform}}, Timeout: Duration(2 * time.Second)})
	ctx := context.Background()
	a.Round(ctx)
	l.ResetRequests()
	l.Throttle(lab.HostRegistry, time.Now().Add(time.Hour), 30)
	r := a.Round(ctx)[0]
	if r.Verdict.OK || r.Verdict.Cause != "registry.ratelimit" {
		t.Fatalf("throttled round: %+v", r.Verdict)
	}
	reqs := l.Requests()
	if len(reqs) != 1 || reqs[0].Status != http.StatusTooManyRequests {
		t.Errorf("the registry saw %d requests in the throttled round, want one answered 429: %+v", len(reqs), reqs)
	}
	for range 3 {
		a.Round(ctx)
	}
	if n := len(l.Requests()); n != len(reqs) {
		t.Errorf("the agent asked again %d times within Retry-After: 30", n-len(reqs))
	}
	if n := testutil.ToFloat64(a.Metrics.throttled.WithLabelValues(l.Registry)); n != 1 {
		t.Errorf("pullpath_registry_throttled_total = %v, want 1", n)
	}
	if n := testutil.ToFloat64(a.Metrics.deferred.WithLabelValues(l.Registry, "retry-after")); n != 3 {
		t.Errorf("pullpath_registry_deferred_total{reason=retry-after} = %v, want 3", n)
	}
	if at, ok := a.sched.nextPending(); !ok || at.Before(time.Now().Add(29*time.Second)) {
		t.Errorf("the next probe of the throttled registry is at %v, want after Retry-After", at)
	}
}

func TestSlotsAndBackoff(t *testing.T) {
	iv := 5 * time.Minute
	// The slot is a function of the node's name alone, written down here
	// independently of nameHash, so that a restart or an upgrade of the
	// agent does not move it: the first 8 bytes of SHA-256("slot\x00" +
	// name), big-endian, modulo the interval.
	sum := sha256.Sum256([]byte("slot\x00node-a"))
	if got, want := SlotOffset("node-a", iv), time.Duration(binary.BigEndian.Uint64(sum[:8])%uint64(iv)); got != want {
		t.Fatalf("SlotOffset(node-a) = %v, want %v: a node's slot moved", got, want)
	}
	// 1,000 nodes named as a scale set names them, over 10 buckets of
	// 30 s: each within 2x of the mean.
	buckets := make([]int, 10)
	for i := range 1000 {
		buckets[SlotOffset(fmt.Sprintf("aks-poola-12345678-vmss%06d", i), iv)/(30*time.Second)]++
	}
	for i, n := range buckets {
		if n > 200 || n < 50 {
			t.Errorf("bucket %d holds %d of 1000 slots, want about 100", i, n)
		}
	}
	now := time.Date(2026, 12, 1, 10, 2, 0, 0, time.UTC)
	off := 90 * time.Second
	if got := NextSlot(now, iv, off); !got.Equal(time.Date(2026, 12, 1, 10, 6, 30, 0, time.UTC)) {
		t.Errorf("NextSlot = %v", got)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	prevMax := time.Duration(0)
	for f := 1; f <= 8; f++ {
		for range 50 {
			b := Backoff(f, iv, rnd)
			if b > iv || b <= 0 {
				t.Fatalf("Backoff(%d) = %v, want in (0, %v]", f, b, iv)
			}
			prevMax = max(prevMax, b)
		}
	}
	if Backoff(1, iv, rnd) > iv/8 || prevMax < iv/2 {
		t.Errorf("backoff does not grow from interval/8 towards the interval (max %v)", prevMax)
	}
	if !due(now, now.Add(-iv), "other", "me", iv) || due(now, now.Add(-iv), "me", "me", iv) || due(now, now.Add(-iv/2), "other", "me", iv) {
		t.Error("due: the round passes to the next node after its period, not back to the last holder")
	}
}

func TestConfigScaleFields(t *testing.T) {
	c, err := ParseConfig([]byte("targets: [{name: app, image: reg.example/app:1}]\nfull_per_interval: 3\nregistry_budgets: [{registry: reg.example, requests_per_minute: 600}]\n"))
	if err != nil || c.FullPerInterval != 3 || len(c.RegistryBudgets) != 1 || c.RegistryBudgets[0].RequestsPerMinute != 600 {
		t.Fatalf("parsed %+v, %v", c, err)
	}
	if c, _ := ParseConfig([]byte("targets: [{name: app, image: reg.example/app:1}]\n")); c.FullPerInterval != 1 {
		t.Errorf("default full_per_interval = %d, want 1", c.FullPerInterval)
	}
	for _, bad := range []string{
		"registry_budgets: [{registry: reg.example, requests_per_minute: 0}]",
		"registry_budgets: [{registry: reg.example/app, requests_per_minute: 10}]",
		"full_per_interval: -1",
	} {
		if _, err := ParseConfig([]byte("targets: [{name: app, image: reg.example/app:1}]\n" + bad + "\n")); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

// TestBudgetShare: an agent whose share of registry_budgets is spent puts
// its probe off to a later slot, counted as deferred.
func TestBudgetShare(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	a := &Agent{Config: Config{Interval: Duration(time.Minute), RegistryBudgets: []RegistryBudget{{Registry: "reg.example", RequestsPerMinute: 2}}},
		Node: "n", Metrics: NewMetrics("n", "p", "test")}
	a.init()
	st := a.reg("reg.example")
	if r := a.deferral("reg.example", now); r != "" {
		t.Fatalf("first probe deferred: %s", r)
	}
	st.memo.OnRequest("reg.example", "manifest_head")
	st.memo.OnRequest("reg.example", "token")
	st.cost["app"] = 2
	if r := a.deferral("reg.example", now.Add(10*time.Second)); r != "budget" {
		t.Errorf("a probe with the share spent: %q, want budget", r)
	}
	if r := a.deferral("reg.example", now.Add(70*time.Second)); r != "" {
		t.Errorf("a probe after the share refilled: deferred (%s)", r)
	}
}
