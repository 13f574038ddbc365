package monitor

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pullpath/pullpath/internal/probe"
	"github.com/pullpath/pullpath/internal/registry"
)

// The agent's rounds at fleet scale.
//
// Every interval, at a slot fixed by the hash of its name, each node walks
// its own path to every host of each target: DNS, route and TLS to the
// registry, the token realm and the blob host, a token only when the kept
// one expired, and one manifest HEAD by tag; the manifest itself comes from
// the agent's memo while its digest is unchanged. That is one registry
// request per node per interval while nothing changes.
//
// The blob HEADs (and the blob host's answer) and the full downloads are per
// pool: one node at a time takes them through the pool's Lease (lease.go),
// the HEADs once per interval, the full download k times per full_interval.
// Without Leases the node's name chooses them (fallback below).
//
// A registry that answers 429 or 503 with Retry-After gets no request from
// this agent before it; failures the registry answered push its next probe
// back by an exponential, jittered backoff of at most one interval; an
// optional budget per registry is shared among the cluster's agents.

// fallbackHeadEvery: without Leases, a node takes the blob HEADs in one
// round of this many (chosen by the hash of its name and the round).
const fallbackHeadEvery = 12

// regState is what the agent keeps per registry.
type regState struct {
	memo      *registry.Memo
	failures  int       // consecutive failures the registry answered
	notBefore time.Time // no probe before (Retry-After or backoff)
	reason    string    // retry-after or backoff
	pending   bool      // a probe was put off until notBefore
	bucket    *bucket   // the agent's share of the registry's budget
	cost      map[string]int
}

type schedState struct {
	mu       sync.Mutex
	regs     map[string]*regState
	counts   tally
	rnd      *rand.Rand
	leaseOff bool // Leases unavailable: the name chooses
	told     bool // the fallback was logged
	epochs   map[string]int64
	learned  map[string]bool // targets this node probed with blobs once (fallback)
	agents   int
	agentsAt time.Time
	result   string // the result annotation as last written
}

// tally counts requests by kind.
type tally map[string]int

func (t tally) String() string {
	total := 0
	var parts []string
	for _, k := range registry.Kinds {
		if n := t[k]; n > 0 {
			total += n
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
		}
	}
	if total == 0 {
		return "0 registry requests"
	}
	return fmt.Sprintf("%d registry requests (%s)", total, strings.Join(parts, ", "))
}

func (s *schedState) sent() tally {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := tally{}
	for k, v := range s.counts {
		out[k] = v
	}
	return out
}

func (t tally) minus(u tally) tally {
	out := tally{}
	for k, v := range t {
		if d := v - u[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// registryOf is the registry host of an image reference (the metrics'
// registry label): "docker.io" for "nginx".
func registryOf(image string) string {
	if img, err := probe.ParseImage(image); err == nil {
		return img.Domain
	}
	return "invalid"
}

// reg returns the registry's state, making it (and its memo) on first use.
func (a *Agent) reg(name string) *regState {
	s := &a.sched
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.regs == nil {
		s.regs, s.counts, s.epochs, s.learned = map[string]*regState{}, tally{}, map[string]int64{}, map[string]bool{}
		s.rnd = rand.New(rand.NewPCG(nameHash("jitter", a.Node), uint64(time.Now().UnixNano())))
	}
	st := s.regs[name]
	if st == nil {
		st = &regState{cost: map[string]int{}}
		st.memo = &registry.Memo{
			// The agent's clock as it is when asked (a test moves it).
			Now:   func() time.Time { return a.Now() },
			Scale: a.RetryAfterScale,
			// The round that renews the token sends nothing else: one
			// registry request per node per interval, tokens included.
			OneRequest: true,
			OnRequest: func(_, kind string) {
				s.mu.Lock()
				s.counts[kind]++
				if st.bucket != nil {
					st.bucket.tokens--
				}
				s.mu.Unlock()
				a.Metrics.Request(name, kind)
			},
			OnThrottle: func(_ string, until time.Time) {
				a.Metrics.Throttled(name)
				s.mu.Lock()
				// Jitter after the registry's time, so the agents it
				// answered together do not return together.
				until = until.Add(time.Duration(s.rnd.Int64N(int64(time.Duration(a.Config.Interval)/8) + 1)))
				if until.After(st.notBefore) {
					st.notBefore, st.reason = until, "retry-after"
				}
				s.mu.Unlock()
			},
		}
		for _, b := range a.Config.RegistryBudgets {
			if b.Registry == name {
				st.bucket = &bucket{rate: float64(b.RequestsPerMinute)}
			}
		}
		s.regs[name] = st
	}
	return st
}

func (a *Agent) memo(registry string) *registry.Memo { return a.reg(registry).memo }

// deferral says why the registry's targets are not probed now, or "".
func (a *Agent) deferral(name string, now time.Time) string {
	st := a.reg(name)
	if st.bucket != nil {
		a.shareBudget(st, name, now)
	}
	s := &a.sched
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Before(st.notBefore) {
		st.pending = true
		return st.reason
	}
	st.pending = false
	if b := st.bucket; b != nil && b.rate > 0 {
		b.refill(now, time.Duration(a.Config.Interval))
		cost := 1
		for _, c := range st.cost {
			cost = max(cost, c)
		}
		if b.tokens < float64(cost) {
			return "budget"
		}
	}
	return ""
}

// shareBudget sets the agent's share of a registry's budget: the budget
// divided by the number of agents (the DaemonSet's), counted again every
// full interval.
func (a *Agent) shareBudget(st *regState, name string, now time.Time) {
	s := &a.sched
	s.mu.Lock()
	stale := s.agentsAt.IsZero() || now.Sub(s.agentsAt) >= max(time.Duration(a.Config.FullInterval), time.Duration(a.Config.Interval))
	s.mu.Unlock()
	if stale && a.Coord != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(a.Config.Timeout))
		n, err := a.Coord.CountAgents(ctx)
		cancel()
		if err == nil && n <= 0 {
			err = fmt.Errorf("the DaemonSet %s schedules no agent", DaemonSet)
		}
		s.mu.Lock()
		s.agentsAt = now
		if err == nil && n > 0 {
			s.agents = n
		} else if s.agents == 0 {
			fmt.Fprintf(a.Log, "monitor: counting the agents to share registry_budgets: %v; until it works this agent takes the whole budget\n", err)
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range a.Config.RegistryBudgets {
		if b.Registry == name {
			st.bucket.rate = float64(b.RequestsPerMinute) / float64(max(s.agents, 1))
		}
	}
}

// pendingDue says whether a registry's put-off probes are due now.
func (s *schedState) pendingDue(name string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.regs[name]
	return st != nil && st.pending && !now.Before(st.notBefore)
}

// nextPending is the earliest time a put-off probe becomes due.
func (s *schedState) nextPending() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var at time.Time
	for _, st := range s.regs {
		if st.pending && (at.IsZero() || st.notBefore.Before(at)) {
			at = st.notBefore
		}
	}
	return at, !at.IsZero()
}

// plan chooses the target's mode this round: full or head when this node
// takes the pool's round, else none (the node's own walk: DNS, route and
// TLS to every host, a token when needed and a manifest HEAD).
func (a *Agent) plan(ctx context.Context, t Target, now time.Time) (string, Claim) {
	if a.Config.Blobs == BlobsFull {
		return BlobsFull, Claim{}
	}
	interval := time.Duration(a.Config.Interval)
	var fullPeriod time.Duration
	if a.Config.FullInterval > 0 {
		fullPeriod = time.Duration(a.Config.FullInterval) / time.Duration(max(a.Config.FullPerInterval, 1))
	}
	headPeriod := interval
	if a.Config.Blobs == BlobsNone {
		headPeriod = 0
	}
	memo := a.memo(registryOf(t.Image))
	s := &a.sched
	s.mu.Lock()
	useLease := a.Coord != nil && !s.leaseOff
	s.mu.Unlock()
	if useLease {
		cctx, cancel := context.WithTimeout(ctx, time.Duration(a.Config.Timeout))
		cl, err := a.Coord.Claim(cctx, a.Node, a.Pool, t.Name, now, headPeriod, fullPeriod)
		cancel()
		switch {
		case err == nil:
			for plan, hosts := range cl.Hosts {
				for ep, role := range hosts {
					memo.NoteHost(plan, ep, role)
				}
			}
			a.Metrics.Holder(t.Name, cl.Holder == a.Node)
			switch {
			case cl.Full:
				return BlobsFull, cl
			case cl.Head:
				return BlobsHead, cl
			}
			return BlobsNone, cl
		case leaseUnavailable(err):
			s.mu.Lock()
			s.leaseOff = true
			s.mu.Unlock()
			fmt.Fprintf(a.Log, "monitor: the pool's Lease for %s: %v\n", t.Name, err)
		default:
			// A passing API failure: walk only this round.
			fmt.Fprintf(a.Log, "monitor: the pool's Lease for %s: %v; this round walks only\n", t.Name, err)
			return BlobsNone, Claim{}
		}
	}
	return a.fallback(t, now, headPeriod, fullPeriod), Claim{}
}

// fallback chooses without Leases, from the node's name: a full download
// once per full_interval at the node's own slot in it, the blob HEADs in
// one round of fallbackHeadEvery, and in the first round of a target (to
// learn its token and blob hosts).
func (a *Agent) fallback(t Target, now time.Time, headPeriod, fullPeriod time.Duration) string {
	s := &a.sched
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.told {
		s.told = true
		why := "no API server client"
		if a.Coord != nil {
			why = "the agent may not use Leases in namespace " + a.Coord.Namespace
		}
		fmt.Fprintf(a.Log, "monitor: %s: the node's name chooses its rounds instead of the pool's Lease: a full download once per full_interval at its own slot, blob HEADs in 1 round of %d; every node downloads, so grant the agent get/create/update on leases to make it k per pool\n", why, fallbackHeadEvery)
	}
	if full := time.Duration(a.Config.FullInterval); full > 0 && fullPeriod > 0 {
		off := time.Duration(nameHash("full", a.Node, t.Name) % uint64(full))
		epoch := now.Add(-off).UnixNano() / int64(full)
		last, seen := s.epochs[t.Name]
		s.epochs[t.Name] = epoch
		if seen && epoch > last {
			return BlobsFull
		}
	}
	if headPeriod <= 0 {
		return BlobsNone
	}
	if !s.learned[t.Name] {
		s.learned[t.Name] = true
		return BlobsHead
	}
	round := now.UnixNano() / int64(headPeriod)
	if nameHash("head", a.Node, t.Name, fmt.Sprint(round))%fallbackHeadEvery == 0 {
		return BlobsHead
	}
	return BlobsNone
}

// settle books a probe's outcome: backoff after a failure the registry
// answered, the budget spent, and for the node that took the pool's round,
// what it learnt on the Lease.
func (a *Agent) settle(ctx context.Context, t Target, name string, r Result, before tally, cl Claim) {
	st := a.reg(name)
	spent := a.sched.sent().minus(before)
	cost := 0
	for _, n := range spent {
		cost += n
	}
	s := &a.sched
	s.mu.Lock()
	st.cost[t.Name] = cost
	if registrySide(r.Verdict) {
		st.failures++
	}
	if registrySide(r.Verdict) && !(st.reason == "retry-after" && st.notBefore.After(r.At)) {
		// The registry's own Retry-After, when it gave one, stands
		// instead of the backoff.
		interval := time.Duration(a.Config.Interval)
		nb := r.At.Add(interval + Backoff(st.failures, interval, s.rnd))
		if nb.After(st.notBefore) {
			st.notBefore, st.reason = nb, "backoff"
		}
		st.pending = true
		fmt.Fprintf(a.Log, "monitor: %s: %s answered a failure %d time(s) in a row: its next probe waits until %s\n", t.Name, name, st.failures, st.notBefore.UTC().Format(time.RFC3339Nano))
	} else if !registrySide(r.Verdict) {
		st.failures = 0
	}
	s.mu.Unlock()
	if a.Coord == nil || (!cl.Head && !cl.Full) {
		return
	}
	var full *FullResult
	if cl.Full {
		full = &FullResult{Node: a.Node, At: r.At.UTC(), OK: r.Verdict.OK, Cause: r.Verdict.Cause}
		a.mu.Lock()
		full.Bytes = a.sizes[t.Name]
		a.mu.Unlock()
	}
	cctx, cancel := context.WithTimeout(ctx, time.Duration(a.Config.Timeout))
	defer cancel()
	if err := a.Coord.Publish(cctx, a.Pool, t.Name, st.memo.AllHosts(), full); err != nil {
		fmt.Fprintf(a.Log, "monitor: publishing the pool's round of %s on its Lease: %v\n", t.Name, err)
	}
}

// writeResult keeps the node's result annotation, writing it only when a
// target's state changed.
func (a *Agent) writeResult(ctx context.Context) {
	if a.Client == nil {
		return
	}
	res := a.Results()
	slices.SortStableFunc(res, func(x, y Result) int { return strings.Compare(x.Target, y.Target) })
	b, err := json.Marshal(NewNodeResult(a.Node, a.Pool, res))
	if err != nil {
		return
	}
	s := &a.sched
	s.mu.Lock()
	same := s.result == string(b)
	s.mu.Unlock()
	if same {
		return
	}
	if err := a.Client.SetResult(ctx, string(b)); err != nil {
		fmt.Fprintf(a.Log, "monitor: writing the %s annotation on node %s: %v\n", ResultAnnotation, a.Node, err)
		return
	}
	s.mu.Lock()
	s.result = string(b)
	s.mu.Unlock()
}
