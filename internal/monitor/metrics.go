package monitor

import (
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/pullpath/pullpath/internal/netpath"
	"github.com/pullpath/pullpath/internal/probe"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Steps are the values of pullpath_step_duration_seconds' step label, in
// pull order.
var Steps = []string{"dns", "connect", "tls", "proxy", "token", "manifest", "blob"}

// Metrics are the agent's Prometheus series. Every series carries the
// constant labels node and pool (from the registerer the agent wraps) and
// target, the configured name of the watched image.
type Metrics struct {
	Registry *prometheus.Registry

	success     *prometheus.GaugeVec
	duration    *prometheus.GaugeVec
	step        *prometheus.GaugeVec
	failure     *prometheus.GaugeVec
	lastSuccess *prometheus.GaugeVec
	certExpiry  *prometheus.GaugeVec
	dnsPrivate  *prometheus.GaugeVec
	probes      *prometheus.CounterVec
	fullSkipped *prometheus.CounterVec

	requests  *prometheus.CounterVec
	throttled *prometheus.CounterVec
	deferred  *prometheus.CounterVec
	holder    *prometheus.GaugeVec
}

// NewMetrics registers the agent's series, labelled node and pool, on a new
// registry that also holds the Go and process collectors.
func NewMetrics(node, pool, version string) *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	r := prometheus.WrapRegistererWith(prometheus.Labels{"node": node, "pool": pool}, reg)
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
		r.MustRegister(g)
		return g
	}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
		r.MustRegister(c)
		return c
	}
	m := &Metrics{
		Registry:    reg,
		success:     gauge("pullpath_probe_success", "Whether the last probe of the target's pull path from this node succeeded (1) or failed (0).", "target"),
		duration:    gauge("pullpath_probe_duration_seconds", "How long the last probe of the target took.", "target"),
		step:        gauge("pullpath_step_duration_seconds", "Time the last probe spent in each step of the pull path, summed over the requests of that step (parallel blob requests add up).", "target", "step"),
		failure:     gauge("pullpath_probe_failure_info", "The verdict of the last probe while it fails (1): the first failing step's layer, cause, role, owner and endpoint.", "target", "layer", "cause", "role", "owner", "endpoint"),
		lastSuccess: gauge("pullpath_probe_last_success_timestamp_seconds", "Unix time of the target's last successful probe.", "target"),
		certExpiry:  gauge("pullpath_tls_cert_expiry_timestamp_seconds", "NotAfter of the leaf certificate each endpoint of the pull presented, as Unix time.", "target", "endpoint"),
		dnsPrivate:  gauge("pullpath_dns_resolved_private", "Whether the node's resolver answered the host with a private address (1) or a public one (0), e.g. when the private DNS zone is not visible.", "target", "host"),
		probes:      counter("pullpath_probes_total", "Probes run, by result (success or failure).", "target", "result"),
		fullSkipped: counter("pullpath_full_skipped_total", "Full verified downloads replaced by a HEAD probe because the round's byte budget was spent.", "target"),
		requests:    counter("pullpath_registry_requests_total", "Requests this agent sent, by registry (the image reference's host) and kind (token, manifest_head, manifest_get, blob_head, blob_get, other).", "registry", "kind"),
		throttled:   counter("pullpath_registry_throttled_total", "429 and 503 answers this agent received from the registry (its token and blob hosts included).", "registry"),
		deferred:    counter("pullpath_registry_deferred_total", "Probes of a registry's targets this agent put off, by reason: retry-after (the registry asked to wait), backoff (after failures the registry answered) or budget (the agent's share of registry_budgets is spent).", "registry", "reason"),
		// The pool label is the registerer's constant one.
		holder: gauge("pullpath_full_round_holder", "1 while this node holds the pool's full download of the target (its Lease), 0 otherwise: the pool's full-download result is this node's.", "target"),
	}
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "pullpath_build_info", Help: "The agent's build: version and Go version; always 1."}, []string{"version", "goversion"})
	r.MustRegister(info)
	info.WithLabelValues(version, runtime.Version()).Set(1)
	return m
}

// Observe records the report of one probe of target.
func (m *Metrics) Observe(target string, rep *probe.Report, at time.Time) {
	t := prometheus.Labels{"target": target}
	m.failure.DeletePartialMatch(t)
	m.certExpiry.DeletePartialMatch(t)
	m.dnsPrivate.DeletePartialMatch(t)
	m.step.DeletePartialMatch(t)

	m.duration.With(t).Set(float64(rep.Millis) / 1000)
	v := rep.Verdict
	if v.OK {
		m.success.With(t).Set(1)
		m.lastSuccess.With(t).Set(float64(at.UnixMilli()) / 1000)
		m.probes.WithLabelValues(target, "success").Inc()
	} else {
		m.success.With(t).Set(0)
		m.probes.WithLabelValues(target, "failure").Inc()
		m.failure.WithLabelValues(target, string(v.Layer), v.Cause, string(v.Role), string(v.Owner), v.Endpoint).Set(1)
	}
	for step, secs := range StepDurations(rep) {
		m.step.WithLabelValues(target, step).Set(secs)
	}
	for _, ep := range rep.Endpoints {
		endpoint := ep.Host + ":" + strconv.Itoa(ep.Port)
		for _, st := range ep.Steps {
			switch st.Name {
			case "tls":
				if chain, ok := st.Facts["chain"].([]netpath.CertInfo); ok && len(chain) > 0 {
					m.certExpiry.WithLabelValues(target, endpoint).Set(float64(chain[0].NotAfter.Unix()))
				}
			case "dns":
				if p, ok := resolvedPrivate(st); ok {
					m.dnsPrivate.WithLabelValues(target, st.Target).Set(b2f(p))
				}
			}
		}
	}
}

// FullSkipped counts a full download replaced by HEAD for lack of budget.
func (m *Metrics) FullSkipped(target string) { m.fullSkipped.WithLabelValues(target).Inc() }

// Request counts one request sent to registry.
func (m *Metrics) Request(registry, kind string) { m.requests.WithLabelValues(registry, kind).Inc() }

// Throttled counts a 429 or 503 answer of registry.
func (m *Metrics) Throttled(registry string) { m.throttled.WithLabelValues(registry).Inc() }

// Deferred counts a probe put off.
func (m *Metrics) Deferred(registry, reason string) {
	m.deferred.WithLabelValues(registry, reason).Inc()
}

// Holder records whether this node holds the pool's full round of target.
func (m *Metrics) Holder(target string, held bool) { m.holder.WithLabelValues(target).Set(b2f(held)) }

// Forget drops every series of a target that is no longer configured.
func (m *Metrics) Forget(target string) {
	t := prometheus.Labels{"target": target}
	for _, g := range []*prometheus.GaugeVec{m.success, m.duration, m.step, m.failure, m.lastSuccess, m.certExpiry, m.dnsPrivate} {
		g.DeletePartialMatch(t)
	}
}

// StepDurations sums the recorded steps of a report by the step label's
// kinds: dns, connect (TCP), tls, proxy (CONNECT through the runtime's
// proxy), token (requests to the token realm), manifest and blob.
func StepDurations(rep *probe.Report) map[string]float64 {
	out := map[string]float64{}
	for _, ep := range rep.Endpoints {
		for _, st := range ep.Steps {
			if st.Status == probe.StatusSkipped {
				continue
			}
			kind := stepKind(ep, st)
			if kind == "" {
				continue
			}
			out[kind] += st.Millis / 1000
		}
	}
	var blobMs float64
	for _, b := range rep.Blobs {
		blobMs += b.Millis
	}
	if blobMs > 0 {
		out["blob"] = blobMs / 1000
	}
	return out
}

func stepKind(ep probe.Endpoint, st probe.Step) string {
	switch st.Name {
	case "dns":
		return "dns"
	case "route":
		if strings.Contains(st.Target, "via proxy") {
			return "proxy"
		}
		return "connect"
	case "tls":
		return "tls"
	case "http":
		switch {
		case strings.HasPrefix(st.Target, "CONNECT "):
			return "proxy"
		case ep.Role == "auth":
			return "token"
		case strings.Contains(st.Target, "/manifests/"):
			return "manifest"
		case strings.Contains(st.Target, "/blobs/"):
			return "" // counted from the blobs themselves
		case strings.HasSuffix(st.Target, "/v2/"):
			return "token" // the ping that draws the challenge
		}
	}
	return ""
}

// resolvedPrivate says whether a dns step's answers were private addresses.
// It is false for dns.private-zone (a privatelink name answered with a public
// address) and unknown (ok false) when the resolver gave no address.
func resolvedPrivate(st probe.Step) (private, ok bool) {
	if st.Cause == verdict.CodeDNSPrivateZone {
		return false, true
	}
	answers, _ := st.Facts["answers"].([]netpath.ResolverAnswer)
	seen := false
	for _, a := range answers {
		for _, ad := range a.Addrs {
			seen = true
			if !isPrivate(ad) {
				return false, true
			}
		}
	}
	return seen, seen
}

// privateRanges are counted as private next to netip's IsPrivate (RFC 1918,
// fc00::/7): shared address space, the benchmark range labs use, and
// link-local and loopback addresses.
var privateRanges = []netip.Prefix{
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("198.18.0.0/15"),
}

func isPrivate(a netip.Addr) bool {
	a = a.Unmap()
	if a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() {
		return true
	}
	for _, p := range privateRanges {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
