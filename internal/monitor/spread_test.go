package monitor

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/probe"
	"github.com/pullpath/pullpath/internal/registry"
)

// cheapAt returns a time n intervals or more after from at which the
// fallback's hash does not give node-a the blob HEADs.
func cheapAt(a *Agent, from time.Time, n int) time.Time {
	iv := time.Duration(a.Config.Interval)
	for i := n; ; i++ {
		at := from.Add(time.Duration(i) * iv)
		if nameHash("head", a.Node, "app", fmt.Sprint(at.UnixNano()/int64(iv)))%fallbackHeadEvery != 0 {
			return at
		}
	}
}

// TestCheapTokenRound: the round in which the kept token has expired sends
// the token request and nothing else (the digest of the last round
// stands); the next round HEADs the manifest with the new token. So every
// steady round costs the registry one request, tokens included. When the
// tokens live less than an interval, the HEAD is left out of every other
// round only, so the tag is still checked at least every second round.
func TestCheapTokenRound(t *testing.T) {
	for _, c := range []struct {
		ttl  time.Duration
		want []map[string]int
	}{
		{time.Hour, []map[string]int{{lab.KindToken: 1}, {lab.KindManifestHead: 1}, {lab.KindManifestHead: 1}}},
		{2 * time.Minute, []map[string]int{{lab.KindToken: 1}, {lab.KindToken: 1, lab.KindManifestHead: 1}, {lab.KindToken: 1}}},
	} {
		t.Run(c.ttl.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			l, err := lab.Start(ctx, lab.Options{TokenTTL: c.ttl})
			if err != nil {
				t.Fatalf("starting the lab: %v", err)
			}
			defer l.Close()
			sc := scenario(t, l, "healthy")
			a := newAgent(l, sc.Root, Config{Targets: []Target{{Name: "app", Image: sc.Image, Platform: sc.Platform}}, Timeout: Duration(2 * time.Second), FullInterval: -1})
			logs := &lockedBuffer{}
			a.Log = logs
			if r := a.Round(ctx)[0]; !r.Verdict.OK {
				t.Fatalf("first round: %+v", r)
			}
			// Two hours later the agent's memo holds an expired token
			// (the lab's own clock still takes it: only the agent's
			// clock moves).
			at := time.Now().Add(2 * time.Hour)
			for i, want := range c.want {
				at = cheapAt(a, at, 1)
				now := at
				a.Now = func() time.Time { return now }
				l.ResetRequests()
				r := a.Round(ctx)[0]
				if !r.Verdict.OK || r.Mode != BlobsNone {
					t.Fatalf("round %d: %+v\n%s", i, r, logs)
				}
				if got := countKinds(l.Requests(), ""); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("round %d: the lab saw %v, want %v", i, got, want)
				}
			}
			if !strings.Contains(logs.String(), "monitor: round: 1 registry requests (token 1)") {
				t.Errorf("the token round's count is not logged:\n%s", logs)
			}
		})
	}
}

// TestSpreadBlobRound: with Spread, a head round's blob HEADs are spaced
// over the window instead of sent at once. The check is a lower bound on
// the spacing (a loaded machine only spaces them more).
func TestSpreadBlobRound(t *testing.T) {
	if got := BlobSpread(5*time.Minute, 2*time.Minute, 1); got != time.Minute {
		t.Errorf("BlobSpread(5m, deadline 2m, 1 target) = %v, want 1m (half the deadline)", got)
	}
	if got := BlobSpread(3*time.Second, 3*time.Second, 1); got != 1500*time.Millisecond {
		t.Errorf("BlobSpread(3s, deadline 3s, 1) = %v, want 1.5s (half the deadline)", got)
	}
	if got := BlobSpread(4*time.Second, 8*time.Second, 1); got != 3*time.Second {
		t.Errorf("BlobSpread(4s, deadline 8s, 1) = %v, want 3s (three quarters of the interval)", got)
	}
	if got := BlobSpread(10*time.Second, time.Minute, 2); got != 3750*time.Millisecond {
		t.Errorf("BlobSpread(10s, 1m, 2 targets) = %v, want 3.75s", got)
	}
	if got := BlobSpread(0, time.Minute, 1); got != 0 {
		t.Errorf("BlobSpread without an interval = %v, want 0", got)
	}
	l := startLab(t)
	sc := scenario(t, l, "healthy")
	ctx := context.Background()
	memo := &registry.Memo{}
	// Learn the token and the manifest, then a paced HEAD round.
	if rep, err := probe.Run(ctx, sc.Image, probe.Options{Root: sc.Root, Platform: sc.Platform, DNSPort: l.DNSPort, Blobs: probe.BlobsNone, Memo: memo}); err != nil || !rep.Verdict.OK {
		t.Fatalf("first probe: %v %+v", err, rep)
	}
	l.ResetRequests()
	spread := time.Second
	rep, err := probe.Run(ctx, sc.Image, probe.Options{Root: sc.Root, Platform: sc.Platform, DNSPort: l.DNSPort, Blobs: probe.BlobsHead, Memo: memo, Spread: spread})
	if err != nil || !rep.Verdict.OK {
		t.Fatalf("paced probe: %v %+v", err, rep)
	}
	var at []time.Time
	for _, q := range l.Requests() {
		if q.Host == lab.HostRegistry && q.Kind == lab.KindBlobHead {
			at = append(at, q.At)
		}
	}
	n := len(rep.Blobs)
	if n < 2 || len(at) != n {
		t.Fatalf("the registry saw %d blob HEADs for %d blobs", len(at), n)
	}
	slices.SortFunc(at, func(x, y time.Time) int { return x.Compare(y) })
	// The i-th request starts at i/n of the window: the last no earlier
	// than (n-1)/n of it after the first.
	if span, want := at[n-1].Sub(at[0]), spread*time.Duration(n-1)/time.Duration(n)-20*time.Millisecond; span < want {
		t.Errorf("%d blob HEADs spanned %v, want at least %v (spread over %v)", n, span, want, spread)
	}
}

// TestHeartbeatDue: an unchanged condition is written again once per
// HeartbeatPeriod (node-problem-detector's default), or per interval when
// that is longer, rounds an interval apart not skipping one.
func TestHeartbeatDue(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		interval, since time.Duration
		want            bool
	}{
		{30 * time.Second, 30 * time.Second, false},
		{30 * time.Second, 4*time.Minute + 30*time.Second, false},
		{30 * time.Second, 4*time.Minute + 45*time.Second, true},
		{5 * time.Minute, 5*time.Minute - 10*time.Millisecond, true}, // a round a hair early
		{5 * time.Minute, 2 * time.Minute, false},
		{10 * time.Minute, 9 * time.Minute, true},
		{10 * time.Minute, 4 * time.Minute, false},
	} {
		if got := heartbeatDue(t0.Add(c.since), t0, c.interval); got != c.want {
			t.Errorf("interval %v, %v after the last write: due %v, want %v", c.interval, c.since, got, c.want)
		}
	}
	if !heartbeatDue(t0, time.Time{}, time.Minute) {
		t.Error("a condition never written is not due")
	}
}
