package monitor

import (
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/verdict"
)

// nameHash is a stable hash of a node name (and a salt): the same node gets
// the same slot after every restart, on every build. SHA-256, not FNV: node
// names differ in their last characters (vmss000001, vmss000002), and
// FNV's low bits, which a modulo keeps, barely change with them.
func nameHash(parts ...string) uint64 {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return binary.BigEndian.Uint64(sum[:8])
}

// SlotOffset is where in every interval a node's rounds fall: a stable hash
// of its name, so that agents started together (a DaemonSet rollout, a pool
// created at once) spread over the interval, and a restart keeps the slot.
func SlotOffset(node string, interval time.Duration) time.Duration {
	if interval <= 0 {
		return 0
	}
	return time.Duration(nameHash("slot", node) % uint64(interval))
}

// NextSlot is the first time after now that is offset past a multiple of
// interval (counted from the Unix epoch, so every agent shares the grid).
func NextSlot(now time.Time, interval, offset time.Duration) time.Time {
	if interval <= 0 {
		return now
	}
	base := now.Add(-offset).UnixNano()
	n := base / int64(interval)
	next := time.Unix(0, (n+1)*int64(interval)).Add(offset)
	if !next.After(now) {
		next = next.Add(interval)
	}
	return next
}

// BlobSpread is the window over which the node that takes a pool's round
// spaces its blob requests: three quarters of the interval, at most half
// the probe's deadline, shared among the targets (one round may take every
// target's pool round). So a pool round is a trickle, not a burst of B
// requests in one second, and the round still ends within the interval and
// the deadline. Zero without an interval.
func BlobSpread(interval, deadline time.Duration, targets int) time.Duration {
	if interval <= 0 {
		return 0
	}
	w := interval * 3 / 4
	if deadline > 0 {
		w = min(w, deadline/2)
	}
	return w / time.Duration(max(targets, 1))
}

// registrySide: failures the registry answered (or its token or blob
// host): the next request to it waits longer after each one. A node's own
// DNS, route or TLS failure costs the registry nothing and keeps the
// regular interval, so its repair is seen as soon as it happens.
func registrySide(v verdict.Verdict) bool {
	if v.OK {
		return false
	}
	switch v.Layer {
	case verdict.LayerAuth, verdict.LayerAuthz, verdict.LayerManifest, verdict.LayerTransfer, verdict.LayerRegistry:
		return true
	}
	return false
}

// Backoff is the extra wait before the next request to a registry after
// failures consecutive registry-side failures: interval/8 doubled with each
// failure, capped at the interval, with jitter (uniform in [b/2, b]).
func Backoff(failures int, interval time.Duration, rnd *rand.Rand) time.Duration {
	if failures <= 0 || interval <= 0 {
		return 0
	}
	b := interval / 8
	for i := 1; i < failures && b < interval; i++ {
		b *= 2
	}
	b = min(b, interval)
	half := b / 2
	if half <= 0 {
		return b
	}
	return half + time.Duration(rnd.Int64N(int64(half)+1))
}

// bucket is one agent's share of a registry's request budget: a token
// bucket refilled at rate requests per minute, holding at most one
// interval's share (and at least one request).
type bucket struct {
	rate   float64 // requests per minute
	tokens float64
	last   time.Time
}

func (b *bucket) refill(now time.Time, interval time.Duration) {
	capacity := max(b.rate*interval.Minutes(), 1)
	if b.last.IsZero() {
		b.tokens, b.last = capacity, now
		return
	}
	b.tokens = min(capacity, b.tokens+b.rate*now.Sub(b.last).Minutes())
	b.last = now
}
