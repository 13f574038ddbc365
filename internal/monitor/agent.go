package monitor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/probe"
	"github.com/pullpath/pullpath/internal/verdict"
)

// ConditionType is the node condition the agent owns. It is True while every
// target's pull path works from the node, as the kubelet's Ready is True
// while the node works; node-problem-detector's problem conditions read the
// other way round, but a "Ready" condition whose False means broken is what
// `kubectl describe node` readers already know.
const ConditionType = "PullPathReady"

// Result is the latest outcome for one target on this node.
type Result struct {
	Target  string          `json:"target"`
	Image   string          `json:"image"`
	Mode    string          `json:"mode"` // head, full or none
	Verdict verdict.Verdict `json:"verdict"`
	At      time.Time       `json:"at"`
	Ms      int64           `json:"duration_ms"`
	// Since is when the target entered its current state (working, or
	// failing with this cause).
	Since time.Time `json:"since"`
}

// Agent probes its targets on a schedule and reports the results.
type Agent struct {
	Config  Config
	Node    string
	Pool    string
	Root    string // the node's root as mounted in the pod ("/host")
	DNSPort int    // nameserver port; 0 means 53 (tests set it)
	Metrics *Metrics
	// Client, when set, keeps the node condition and posts events on
	// transitions.
	Client *NodeClient
	Log    io.Writer
	// Probe runs one probe; the default is probe.Run.
	Probe func(ctx context.Context, image string, o probe.Options) (*probe.Report, error)
	Now   func() time.Time
	// Coord hands the pool's blob-HEAD rounds and full downloads to one
	// node at a time through Leases (rounds.go). Without it, or without
	// access to Leases, the node's name chooses them.
	Coord *Coordinator
	// RetryAfterScale multiplies every Retry-After the registries send;
	// 0 means 1. Only the scale simulation, whose intervals are
	// compressed, sets it.
	RetryAfterScale float64

	mu       sync.Mutex
	results  map[string]Result
	sizes    map[string]int64 // bytes of each target's image, from its last probe
	lastFull time.Time
	started  bool
	nodeUID  string
	cond     *Condition // the condition as last set
	condAt   time.Time  // when this agent last wrote it
	// providers keeps the kubelet credential providers' answers for their
	// cacheDuration, as the kubelet does, across rounds.
	providers *nodeview.ProviderCache
	sched     schedState // rounds.go
	// spread is the window over which a pool round's blob requests are
	// spaced (Run sets it from the interval; a direct Round does not
	// wait).
	spread time.Duration
}

func (a *Agent) init() {
	if a.results == nil {
		a.results = map[string]Result{}
		a.sizes = map[string]int64{}
	}
	if a.providers == nil {
		a.providers = nodeview.NewProviderCache()
	}
	if a.Probe == nil {
		a.Probe = probe.Run
	}
	if a.Now == nil {
		a.Now = time.Now
	}
	if a.Log == nil {
		a.Log = io.Discard
	}
	if a.Root == "" {
		a.Root = "/"
	}
}

// Round probes every target once and reports the results. Each target's
// mode comes from plan (rounds.go): the node's own walk every interval, and
// the pool's blob-HEAD round or full download when this node takes it.
func (a *Agent) Round(ctx context.Context) []Result { return a.round(ctx, false) }

// round is Round; with catchUp it probes only the targets of registries
// whose Retry-After or backoff has just passed (the others keep their slot).
func (a *Agent) round(ctx context.Context, catchUp bool) []Result {
	a.mu.Lock()
	a.init()
	now := a.Now()
	if !a.started {
		a.started, a.lastFull = true, now
	}
	a.mu.Unlock()

	budget := a.Config.FullByteBudget
	out := make([]Result, 0, len(a.Config.Targets))
	before := a.sched.sent()
	for _, t := range a.Config.Targets {
		if ctx.Err() != nil {
			break
		}
		reg := registryOf(t.Image)
		if catchUp && !a.sched.pendingDue(reg, now) {
			continue
		}
		if reason := a.deferral(reg, now); reason != "" {
			a.Metrics.Deferred(reg, reason)
			a.mu.Lock()
			r, ok := a.results[t.Name]
			a.mu.Unlock()
			if ok {
				out = append(out, r)
			}
			continue
		}
		mode, claimed := a.plan(ctx, t, now)
		if mode == BlobsFull {
			a.mu.Lock()
			size, known := a.sizes[t.Name]
			a.mu.Unlock()
			if known && size > budget {
				a.Metrics.FullSkipped(t.Name)
				fmt.Fprintf(a.Log, "monitor: %s: full download skipped: %d bytes exceed the round's remaining budget of %d\n", t.Name, size, budget)
				mode = BlobsHead
			}
		}
		tb := a.sched.sent()
		r := a.probeOne(ctx, t, mode)
		if mode == BlobsFull {
			budget -= a.sizes[t.Name]
		}
		a.settle(ctx, t, reg, r, tb, claimed)
		out = append(out, r)
	}
	if sent := a.sched.sent().minus(before); len(out) > 0 {
		fmt.Fprintf(a.Log, "monitor: round: %s\n", sent)
	}
	a.report(ctx, out)
	return out
}

// SetRoot changes the node root the next probes read (safe while Run runs).
func (a *Agent) SetRoot(root string) {
	a.mu.Lock()
	a.Root = root
	a.mu.Unlock()
}

func (a *Agent) probeOne(ctx context.Context, t Target, mode string) Result {
	a.mu.Lock()
	root, spread := a.Root, a.spread
	a.mu.Unlock()
	o := probe.Options{Root: root, Platform: t.Platform, Blobs: mode, Timeout: time.Duration(a.Config.Timeout),
		Deadline: time.Duration(a.Config.Deadline), DNSPort: a.DNSPort, DockerConfig: dockerConfig(a.Config.DockerConfig),
		ProviderCache: a.providers, Memo: a.memo(registryOf(t.Image)), Walk: true, Spread: spread}
	start := a.Now()
	rep, err := a.Probe(ctx, t.Image, o)
	if err != nil {
		// Options that make no sense: the configuration's fault, reported
		// as a verdict so the metrics show it rather than silence.
		v := verdict.FromError(verdict.Wrap(verdict.CodeConfigReference, verdict.RoleNone, "", err))
		rep = &probe.Report{Image: t.Image, Verdict: v, Started: start, Millis: a.Now().Sub(start).Milliseconds()}
	}
	agentProviderCause(rep)
	var size int64
	for _, b := range rep.Blobs {
		size += b.Size
	}
	at := a.Now()
	a.Metrics.Observe(t.Name, rep, at)

	a.mu.Lock()
	defer a.mu.Unlock()
	if size > 0 {
		a.sizes[t.Name] = size
	}
	r := Result{Target: t.Name, Image: t.Image, Mode: mode, Verdict: rep.Verdict, At: at, Ms: rep.Millis, Since: at}
	if prev, ok := a.results[t.Name]; ok && sameState(prev.Verdict, r.Verdict) {
		r.Since = prev.Since
	} else {
		fmt.Fprintf(a.Log, "monitor: %s: %s\n", t.Name, describe(r.Verdict))
	}
	a.results[t.Name] = r
	return r
}

// AgentProviderCause is the agent's own cause when it could not run the
// node's kubelet credential provider (the probe's auth.provider-unusable
// warning): what it then saw is not what the kubelet sees, so it reports
// its own setup (owner node) rather than the anonymous pull's 401 as the
// registry refusing the node.
const AgentProviderCause = verdict.CodeConfigMonitorCredentialProvider

// agentProviderCause replaces rep's verdict with AgentProviderCause when
// the probe could not run the node's credential provider.
func agentProviderCause(rep *probe.Report) {
	for _, w := range rep.Warnings {
		if w.Code != verdict.CodeAuthProviderUnusable {
			continue
		}
		why := w.Message
		if cp := rep.CredentialProvider; cp != nil && cp.Error != "" {
			why = cp.Error
		}
		rep.Verdict = verdict.FromError(verdict.Errorf(AgentProviderCause, verdict.RoleNone, "",
			"%s: %s; the agent did not pull with what the kubelet pulls with, so the anonymous pull's outcome is not reported", rep.Image, why))
		return
	}
}

// dockerConfig is the docker config a probe reads: none when the file does
// not exist. The DaemonSet mounts the pull Secret only when it exists
// (optional: true), and the shipped ConfigMap names its file, so a cluster
// without the Secret pulls anonymously, as the kubelet does without an
// imagePullSecret, instead of failing every probe on a missing file.
func dockerConfig(file string) string {
	if file == "" {
		return ""
	}
	if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	return file
}

func sameState(a, b verdict.Verdict) bool {
	return a.OK == b.OK && a.Cause == b.Cause && a.Role == b.Role && a.Endpoint == b.Endpoint
}

func describe(v verdict.Verdict) string {
	if v.OK {
		return "ok"
	}
	s := fmt.Sprintf("%s at %s", v.Cause, v.Endpoint)
	if v.Role != "" {
		s += " (" + string(v.Role) + ")"
	}
	if v.Owner != "" {
		s += ", owner " + string(v.Owner)
	}
	return s
}

// Results returns the latest result of every target, in configuration order.
func (a *Agent) Results() []Result {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]Result, 0, len(a.results))
	for _, t := range a.Config.Targets {
		if r, ok := a.results[t.Name]; ok {
			out = append(out, r)
		}
	}
	return out
}

// NodeCondition is the condition that results give the node: True when
// every target works; otherwise False, with the first failing target's cause
// as the reason (UpperCamelCase, as API conventions want) and every failing
// target in the message.
func NodeCondition(results []Result) Condition {
	c := Condition{Type: ConditionType, Status: "True", Reason: "PullPathWorks",
		Message: fmt.Sprintf("pullpath: the pull path of every watched image works from this node (%d targets)", len(results))}
	var failing []string
	for _, r := range results {
		if r.Verdict.OK {
			continue
		}
		if len(failing) == 0 {
			c.Status, c.Reason = "False", CamelReason(r.Verdict.Cause)
		}
		v := r.Verdict
		failing = append(failing, fmt.Sprintf("%s: layer %s cause %s owner %s role %s endpoint %s: %s", r.Target, v.Layer, v.Cause, v.Owner, v.Role, v.Endpoint, v.Summary))
	}
	if len(failing) > 0 {
		c.Message = "pullpath: " + strings.Join(failing, "; ")
		if len(c.Message) > 1024 {
			c.Message = c.Message[:1021] + "..."
		}
	}
	return c
}

// CamelReason turns a cause code into a condition reason:
// "dns.private-zone" → "DnsPrivateZone".
func CamelReason(cause string) string {
	if cause == "" {
		return "PullPathFails"
	}
	var b strings.Builder
	up := true
	for _, r := range cause {
		if r == '.' || r == '-' || r == '_' {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// HeartbeatPeriod is how often the agent writes its node condition when
// nothing changed (a change is written at once): node-problem-detector's
// default (--k8s-exporter-heartbeat-period, 5 minutes), or the interval
// when that is longer. So a short interval does not add writes to the API
// server: at 5,000 nodes, about 17 a second at most.
const HeartbeatPeriod = 5 * time.Minute

// heartbeatDue says whether an unchanged condition last written at last is
// written again at now: once per HeartbeatPeriod (or interval), give or
// take half an interval, so that rounds an interval apart do not skip one.
func heartbeatDue(now, last time.Time, interval time.Duration) bool {
	return last.IsZero() || now.Sub(last)+interval/2 >= max(HeartbeatPeriod, interval)
}

// report sets the node condition when it changes, and otherwise as a
// heartbeat (HeartbeatPeriod), and posts an event when it changes.
func (a *Agent) report(ctx context.Context, results []Result) {
	if a.Client == nil || len(results) == 0 {
		return
	}
	a.mu.Lock()
	prev, last := a.cond, a.condAt
	a.mu.Unlock()
	at := a.Now()
	now := at.UTC().Format(time.RFC3339)
	c := NodeCondition(a.Results())
	if prev != nil && prev.Status == c.Status && prev.Reason == c.Reason && prev.Message == c.Message &&
		!heartbeatDue(at, last, time.Duration(a.Config.Interval)) {
		a.writeResult(ctx)
		return
	}
	c.LastHeartbeatTime, c.LastTransitionTime = now, now
	if prev == nil {
		// Keep the transition time the node already carries, so an agent
		// restart does not reset "broken since".
		if n, err := a.Client.Get(ctx); err == nil {
			a.nodeUID = n.Metadata.UID
			for _, old := range n.Status.Conditions {
				if old.Type == ConditionType {
					prev = &old
				}
			}
		} else {
			fmt.Fprintf(a.Log, "monitor: reading node %s: %v\n", a.Node, err)
		}
	}
	if prev != nil && prev.Status == c.Status && prev.LastTransitionTime != "" {
		c.LastTransitionTime = prev.LastTransitionTime
	}
	if err := a.Client.SetCondition(ctx, c); err != nil {
		fmt.Fprintf(a.Log, "monitor: setting condition %s on node %s: %v\n", ConditionType, a.Node, err)
		return
	}
	if prev != nil && (prev.Status != c.Status || prev.Reason != c.Reason) {
		e := Event{Type: "Normal", Reason: "PullPathRepaired", Message: c.Message}
		if c.Status == "False" {
			e = Event{Type: "Warning", Reason: "PullPathBroken", Message: c.Message}
		}
		if err := a.Client.PostEvent(ctx, a.nodeUID, e); err != nil {
			fmt.Fprintf(a.Log, "monitor: posting event on node %s: %v\n", a.Node, err)
		}
	}
	a.mu.Lock()
	a.cond, a.condAt = &c, at
	a.mu.Unlock()
	a.writeResult(ctx)
}

// Run probes every Interval until ctx ends, serving metrics on ln (when not
// nil) meanwhile.
func (a *Agent) Run(ctx context.Context, ln net.Listener) error {
	a.mu.Lock()
	a.init()
	a.mu.Unlock()
	if ln != nil {
		srv := &http.Server{Handler: a.Handler(), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
	}
	interval := time.Duration(a.Config.Interval)
	offset := SlotOffset(a.Node, interval)
	a.mu.Lock()
	a.spread = BlobSpread(interval, time.Duration(a.Config.Deadline), len(a.Config.Targets))
	a.mu.Unlock()
	fmt.Fprintf(a.Log, "monitor: rounds at %s past every %s (from the node name's hash); a pool round's blob requests spread over %s\n", offset.Round(time.Millisecond), interval, a.spread.Round(time.Millisecond))
	for {
		now := a.Now()
		next := NextSlot(now, interval, offset)
		catchUp := false
		if at, ok := a.sched.nextPending(); ok && at.Before(next) {
			next, catchUp = at, true
		}
		t := time.NewTimer(next.Sub(now))
		select {
		case <-ctx.Done():
			t.Stop()
			if errors.Is(ctx.Err(), context.Canceled) {
				return nil
			}
			return ctx.Err()
		case <-t.C:
		}
		a.round(ctx, catchUp)
	}
}

// Handler serves /metrics (Prometheus exposition), /results (the latest
// results as JSON) and /healthz.
func (a *Agent) Handler() http.Handler {
	mux := http.NewServeMux()
	// Uncompressed: the exposition is a few KiB, and each gzip writer
	// promhttp pools holds about 1 MiB of flate state that every scrape
	// after a GC allocates again; gzip put 3.4 MiB on the idle agent's heap
	// (bench/monitorcost -scrape 1s: RssAnon 11.3 MiB with gzip, 7.9
	// without). Prometheus reads identity responses as well.
	mux.Handle("/metrics", promhttp.HandlerFor(a.Metrics.Registry, promhttp.HandlerOpts{DisableCompression: true}))
	mux.HandleFunc("/results", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		res := a.Results()
		slices.SortStableFunc(res, func(x, y Result) int { return strings.Compare(x.Target, y.Target) })
		_ = json.NewEncoder(w).Encode(map[string]any{"node": a.Node, "pool": a.Pool, "results": res})
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	return mux
}
