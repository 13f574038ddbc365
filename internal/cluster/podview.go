package cluster

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/pullpath/pullpath/internal/probe"
	"github.com/pullpath/pullpath/internal/verdict"
)

// LabelView tells the two probe Jobs of one node apart: "node" for the
// probe on the host's network with the node's files, "pod" for the
// pod-view probe from an ordinary pod.
const LabelView = "pullpath.dev/view"

// The values of LabelView.
const (
	ViewNode = "node"
	ViewPod  = "pod"
)

// The hops of a path comparison, in the order a pull takes them.
const (
	HopDNS   = "dns"   // the resolver and its answer for the registry host
	HopRoute = "route" // a connection to the registry's address
	HopProxy = "proxy" // the proxy the path goes through, if any
	HopTLS   = "tls"   // the handshake and the trust store's verdict
	HopToken = "token" // the token host (the registry's auth realm)
	HopBlob  = "blob"  // the host that serves the layers
)

// hopOrder is the order of the hops in a comparison.
var hopOrder = []string{HopDNS, HopRoute, HopProxy, HopTLS, HopToken, HopBlob}

// Divergence says how the pod's path and the node's path relate.
type Divergence string

// Divergences.
const (
	// DivergenceOK: both paths reach the registry and pull.
	DivergenceOK Divergence = "ok"
	// DivergenceSame: both fail, at the same hop and for the same cause.
	DivergenceSame Divergence = "same"
	// DivergenceNodeFails: pods get through, the node (and so the pull)
	// does not. Nothing done in a pod can fix it.
	DivergenceNodeFails Divergence = "node-fails"
	// DivergencePodsFail: the node pulls, pods cannot reach the registry:
	// the pull is fine; the application's connectivity is a separate check.
	DivergencePodsFail Divergence = "pods-fail"
	// DivergenceBothDiffer: both fail, at different hops or for different
	// causes.
	DivergenceBothDiffer Divergence = "both-fail-differently"
	// DivergenceUnknown: one of the two probes has no report.
	DivergenceUnknown Divergence = "unknown"
)

// PathSide is one side (node or pod) of one hop.
type PathSide struct {
	// Status is ok, failed, warning, skipped (not reached: an earlier hop
	// failed) or none (the path has no such hop, e.g. no proxy, no token
	// host).
	Status string `json:"status"`
	// Text is what the hop shows, e.g. "198.18.20.56:53 → NXDOMAIN".
	Text  string `json:"text"`
	Cause string `json:"cause,omitempty"`
	// key is what is compared between the two sides.
	key string
}

// Hop is one hop of both paths side by side.
type Hop struct {
	Name string   `json:"name"`
	Node PathSide `json:"node"`
	Pod  PathSide `json:"pod"`
	// Differs is true when the two sides disagree at this hop.
	Differs bool `json:"differs"`
}

// PodView is the pod-view probe of one node: the same probe image run from
// an ordinary pod on the node (pod network, ClusterFirst DNS, the image's
// own trust store, no host mount), and its path beside the node probe's.
type PodView struct {
	ProbeResult
	// Hops are both paths hop by hop; PartingHop is the first hop where
	// they differ ("" when none does).
	Hops       []Hop      `json:"hops,omitempty"`
	PartingHop string     `json:"parting_hop,omitempty"`
	Divergence Divergence `json:"divergence"`
	// Consequence is what the comparison means for the pull, in words.
	Consequence string `json:"consequence"`
}

func podViewJobName(runID, node string) string {
	h := fnv.New32a()
	h.Write([]byte(node))
	return fmt.Sprintf("pullpath-podview-%s-%08x", runID, h.Sum32())
}

// PodViewJob builds the pod-view Job of one node: pinned with nodeName
// like the node probe, but an ordinary pod: the pod network, dnsPolicy
// ClusterFirst, no host mount (the probe reads the pod's own /etc: the
// resolv.conf the kubelet wrote for it and the image's trust store), no
// capability, non-root, a read-only root filesystem, and the same deadline
// and TTL. The pull secret, when given, is mounted as for the node probe
// so that the token hop is compared with the same identity.
func PodViewJob(t ProbeTarget, image, namespace string, po ProbeOptions, pullSecret string) *batchv1.Job {
	po.defaults()
	args := []string{"probe", image, "-o", "json", "--deadline", po.Deadline.String()}
	if po.StepTimeout > 0 {
		args = append(args, "--timeout", po.StepTimeout.String())
	}
	if t.Platform != "" {
		args = append(args, "--platform", t.Platform)
	}
	f, tr := false, true
	nobody := int64(65534)
	// The secret is world-readable (0444): the probe runs as nobody here.
	return probeJobSkeleton(t, podViewJobName(po.RunID, t.Node), ViewPod, image, namespace, po, pullSecret, 0o444, args, nil, nil, func(ps *corev1.PodSpec) {
		ps.DNSPolicy = corev1.DNSClusterFirst
		ps.Containers[0].SecurityContext = &corev1.SecurityContext{
			RunAsUser:                &nobody,
			RunAsNonRoot:             &tr,
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			ReadOnlyRootFilesystem:   &tr,
			AllowPrivilegeEscalation: &f,
		}
	})
}

// ComparePaths lays the node probe's path and the pod-view probe's path
// side by side, hop by hop, marks the first hop where they part and names
// what that means for the pull.
func ComparePaths(node *ProbeResult, pv *PodView) {
	pv.Hops, pv.PartingHop = nil, ""
	if node == nil || node.Report == nil || pv.Report == nil {
		pv.Divergence = DivergenceUnknown
		switch {
		case pv.Report == nil:
			pv.Consequence = "The pod-view probe gave no report (" + string(pv.Status) + cond(pv.Error != "", ": "+pv.Error, "") + "): nothing to compare."
		default:
			pv.Consequence = "The node probe gave no report (" + string(statusOf(node)) + "): nothing to compare."
		}
		return
	}
	n, p := pathHops(node.Report), pathHops(pv.Report)
	for _, name := range hopOrder {
		h := Hop{Name: name, Node: n[name], Pod: p[name]}
		h.Differs = h.Node.key != h.Pod.key
		if h.Differs && pv.PartingHop == "" {
			pv.PartingHop = name
		}
		pv.Hops = append(pv.Hops, h)
	}
	nv, podv := node.Report.Verdict, pv.Report.Verdict
	switch {
	case nv.OK && podv.OK:
		pv.Divergence = DivergenceOK
	case !nv.OK && podv.OK:
		pv.Divergence = DivergenceNodeFails
	case nv.OK && !podv.OK:
		pv.Divergence = DivergencePodsFail
	case nv.Layer == podv.Layer && nv.Cause == podv.Cause && nv.Role == podv.Role:
		pv.Divergence = DivergenceSame
	default:
		pv.Divergence = DivergenceBothDiffer
	}
	pv.Consequence = consequence(pv, node.Report)
}

func statusOf(r *ProbeResult) ProbeStatus {
	if r == nil {
		return "missing"
	}
	return r.Status
}

func cond(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}

// hop returns the named hop of pv, or a zero Hop.
func (pv *PodView) hop(name string) Hop {
	for _, h := range pv.Hops {
		if h.Name == name {
			return h
		}
	}
	return Hop{Name: name}
}

// consequence is the sentence for the summary.
func consequence(pv *PodView, node *probe.Report) string {
	host := registryHost(node)
	cannotFix := "The pull runs on the node: a VPN sidecar, a pod DNS policy or any other pod-level change cannot fix it."
	switch pv.Divergence {
	case DivergenceOK:
		return "Pods and the node both reach " + host + ": the two paths agree."
	case DivergenceSame:
		v := node.Verdict
		return fmt.Sprintf("Pods and the node fail the same way, at %s (%s): one cause, no divergence; fixing it for the node fixes the pull.", v.Layer, v.Cause)
	case DivergenceNodeFails:
		h := pv.hop(pv.PartingHop)
		switch pv.PartingHop {
		case HopDNS:
			return fmt.Sprintf("Pods resolve %s through cluster DNS %s, which answers %s; the node's resolver %s answers %s. %s Make the node's own resolver answer as the cluster DNS does (link the private zone to the node's network, or forward the zone on the node's resolver).",
				host, h.Pod.resolver(), h.Pod.answer(), h.Node.resolver(), h.Node.answer(), cannotFix)
		case HopRoute:
			return fmt.Sprintf("Pods reach %s over the pod network (%s); the node's own network has no path there (%s). %s Give the node's network the route the pod network has (the node subnet's route table, peering or VPN gateway).",
				host, h.Pod.Text, h.Node.Text, cannotFix)
		case "":
			return fmt.Sprintf("Pods pull from %s; the node fails at %s (%s) although no hop of the two paths differs in what it shows. %s", host, node.Verdict.Layer, node.Verdict.Cause, cannotFix)
		}
		return fmt.Sprintf("Pods pass the %s hop (%s); the node fails there (%s). %s", pv.PartingHop, h.Pod.Text, h.Node.Text, cannotFix)
	case DivergencePodsFail:
		h := pv.hop(pv.PartingHop)
		return fmt.Sprintf("The node pulls: the pull is fine. Pods fail at the %s hop (%s) where the node passes: that is the application's own connectivity after it starts, a separate check (the application's connectivity after start is its own check), not the pull.",
			cond(pv.PartingHop != "", pv.PartingHop, string(pv.Report.Verdict.Layer)), cond(h.Pod.Text != "", h.Pod.Text, pv.Report.Verdict.Cause))
	case DivergenceBothDiffer:
		nv, podv := node.Verdict, pv.Report.Verdict
		return fmt.Sprintf("Both fail, differently: the node at %s (%s), pods at %s (%s); the pull fails where the node fails, and only the node's path matters for it.", nv.Layer, nv.Cause, podv.Layer, podv.Cause)
	}
	return ""
}

// resolver returns the nameservers of a dns side ("/etc/hosts" for a hosts
// entry).
func (s PathSide) resolver() string {
	r, _, _ := strings.Cut(s.Text, " → ")
	return r
}

// answer returns the answer of a dns side.
func (s PathSide) answer() string {
	_, a, ok := strings.Cut(s.Text, " → ")
	if !ok {
		return s.Status
	}
	return a
}

// registryHost is the host of the first endpoint the probe touched (the
// registry or the mirror containerd tries first), else the image's
// registry.
func registryHost(r *probe.Report) string {
	if ep := firstEndpoint(r); ep != nil {
		return ep.Host
	}
	return parseImage(r.Image).host
}

func firstEndpoint(r *probe.Report) *probe.Endpoint {
	for i := range r.Endpoints {
		if ro := r.Endpoints[i].Role; ro == verdict.RoleRegistry || ro == verdict.RoleMirror {
			return &r.Endpoints[i]
		}
	}
	return nil
}

func endpointOf(r *probe.Report, role verdict.Role) *probe.Endpoint {
	for i := range r.Endpoints {
		if r.Endpoints[i].Role == role {
			return &r.Endpoints[i]
		}
	}
	return nil
}

func stepOf(ep *probe.Endpoint, name string) *probe.Step {
	if ep == nil {
		return nil
	}
	for i := range ep.Steps {
		if ep.Steps[i].Name == name {
			return &ep.Steps[i]
		}
	}
	return nil
}

// pathHops reads the hops of one probe report.
func pathHops(r *probe.Report) map[string]PathSide {
	out := map[string]PathSide{}
	reg := firstEndpoint(r)
	out[HopDNS] = dnsSide(reg)
	out[HopRoute] = stepSide(reg, "route")
	out[HopProxy] = proxySide(r)
	out[HopTLS] = stepSide(reg, "tls")
	out[HopToken] = endpointSide(r, endpointOf(r, verdict.RoleAuth), reg)
	out[HopBlob] = endpointSide(r, endpointOf(r, verdict.RoleBlob), reg)
	return out
}

// dnsAnswer is the part of netpath.ResolverAnswer a comparison reads from
// a step's facts (decoded from the probe's JSON).
type dnsAnswer struct {
	Server  string   `json:"server"`
	Query   string   `json:"query"`
	Rcode   string   `json:"rcode"`
	Addrs   []string `json:"addrs"`
	Err     string   `json:"error"`
	Outcome string   `json:"outcome"`
}

func dnsSide(ep *probe.Endpoint) PathSide {
	st := stepOf(ep, "dns")
	if st == nil {
		return PathSide{Status: "skipped", Text: "not reached", key: "skipped"}
	}
	var answers []dnsAnswer
	if raw, ok := st.Facts["answers"]; ok {
		b, _ := json.Marshal(raw)
		_ = json.Unmarshal(b, &answers)
	}
	source, _ := st.Facts["source"].(string)
	var servers, addrs []string
	for _, a := range answers {
		if !slices.Contains(servers, a.Server) {
			servers = append(servers, a.Server)
		}
		if a.Outcome == "ok" {
			for _, ad := range a.Addrs {
				if !slices.Contains(addrs, ad) {
					addrs = append(addrs, ad)
				}
			}
		}
	}
	resolver := strings.Join(servers, ", ")
	switch source {
	case "hosts":
		resolver = "/etc/hosts"
	case "literal":
		resolver = "IP literal"
	}
	if resolver == "" {
		resolver = "no resolver"
	}
	s := PathSide{Status: string(st.Status), Cause: st.Cause}
	if st.Status == probe.StatusFailed {
		s.Text = resolver + " → " + strings.ToUpper(strings.TrimPrefix(st.Cause, "dns."))
		s.key = "failed " + ep.Host + " " + st.Cause
		return s
	}
	if st.Status == probe.StatusSkipped {
		s.Text = st.Detail
		s.key = "skipped " + ep.Host + " " + st.Detail
		return s
	}
	if source == "hosts" || source == "literal" || len(addrs) == 0 {
		// The answer used came from the detail (hosts entry, literal).
		addrs = addrsFromDetail(st.Detail)
	}
	slices.Sort(addrs)
	s.Text = resolver + " → " + strings.Join(addrs, ", ")
	s.key = "ok " + ep.Host + " " + strings.Join(addrs, ",")
	return s
}

// addrsFromDetail reads "→ a, b ..." from a dns step's detail.
func addrsFromDetail(d string) []string {
	_, rest, ok := strings.Cut(d, "→ ")
	if !ok {
		if after, ok := strings.CutPrefix(d, "IP literal "); ok {
			rest = after
		} else {
			return nil
		}
	}
	rest, _, _ = strings.Cut(rest, " via ")
	rest, _, _ = strings.Cut(rest, " from ")
	var out []string
	for _, a := range strings.Split(rest, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// stepSide is a route or tls hop: compared by outcome and cause, not by
// interface or gateway, which differ between any pod and its node.
func stepSide(ep *probe.Endpoint, name string) PathSide {
	st := stepOf(ep, name)
	if st == nil {
		return PathSide{Status: "skipped", Text: "not reached", key: "skipped"}
	}
	text := st.Target
	if st.Detail != "" {
		text += ": " + st.Detail
	}
	switch {
	case name == "route" && st.Status == probe.StatusOK:
		// "host -> 198.18.10.10" and the interface: what the path takes
		// (not the local port, which differs on every run).
		text = strings.TrimPrefix(st.Target, ep.Host+" -> ")
		if d, _, _ := strings.Cut(st.Detail, "from "); strings.TrimSpace(d) != "" {
			text += " " + strings.TrimSpace(d)
		}
	case name == "tls" && st.Status == probe.StatusOK && st.Detail != "":
		text = st.Detail
	}
	s := PathSide{Status: string(st.Status), Text: text, Cause: st.Cause}
	s.key = string(st.Status) + " " + st.Cause
	if st.Status == probe.StatusSkipped {
		s.Text, s.key = "not reached", "skipped"
	}
	return s
}

func proxySide(r *probe.Report) PathSide {
	if r.Proxy == nil || r.Proxy.HTTPSProxy == "" && r.Proxy.HTTPProxy == "" {
		return PathSide{Status: "none", Text: "no proxy", key: "none"}
	}
	p := r.Proxy.HTTPSProxy
	if p == "" {
		p = r.Proxy.HTTPProxy
	}
	return PathSide{Status: "ok", Text: "through " + p, key: "proxy " + p}
}

// endpointSide is the token or blob hop: the host and how its steps ended.
func endpointSide(r *probe.Report, ep, reg *probe.Endpoint) PathSide {
	if ep == nil {
		if reg == nil || registryFailed(reg) {
			return PathSide{Status: "skipped", Text: "not reached", key: "skipped"}
		}
		return PathSide{Status: "none", Text: "none (served by the registry host)", key: "none"}
	}
	for _, st := range ep.Steps {
		if st.Status == probe.StatusFailed {
			return PathSide{Status: "failed", Text: ep.Host + ": " + st.Name + " " + st.Cause, Cause: st.Cause, key: "failed " + ep.Host + " " + st.Name + " " + st.Cause}
		}
	}
	return PathSide{Status: "ok", Text: ep.Host, key: "ok " + ep.Host}
}

func registryFailed(ep *probe.Endpoint) bool {
	for _, st := range ep.Steps {
		if st.Status == probe.StatusFailed {
			return true
		}
	}
	return false
}
