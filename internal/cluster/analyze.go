package cluster

import (
	"cmp"
	"fmt"
	"github.com/pullpath/pullpath/internal/keychain"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/pullpath/pullpath/internal/redact"
	"github.com/pullpath/pullpath/internal/verdict"
)

// pullReasons are the container waiting reasons that mean "the image".
var pullReasons = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "ErrImageNeverPull": true,
	"InvalidImageName": true, "ImageInspectError": true, "RegistryUnavailable": true,
	"SignatureValidationFailed": true,
}

// eventReasons are the event reasons that bear on a pull or on where the pod
// was placed.
var eventReasons = map[string]bool{
	"Pulling": true, "Pulled": true, "Failed": true, "BackOff": true,
	"ErrImageNeverPull": true, "InspectFailed": true, "Scheduled": true,
	"FailedScheduling": true, "TriggeredScaleUp": true, "NotTriggerScaleUp": true,
	"Nominated": true,
}

const (
	maxContainers = 20
	maxEvents     = 30
)

// analysis carries the intermediate state of one Analyze call.
type analysis struct {
	in  *Input
	o   options
	rep *Report

	ref     imageRef
	digests map[string]bool
	podVerd map[string]*verdict.Verdict // failing pod name → its verdict
	nodeIdx map[string]int              // node name → index in rep.Nodes
	landed  string                      // pod the diagnosis centres on

	probeFail map[string]string // pool → a node whose probe failed
	probeOK   map[string]string // pool → a node whose probe pulled
}

// Analyze turns the objects read from a cluster into a diagnosis. It is a
// pure function: no I/O, no clock unless WithNow is absent.
func Analyze(in *Input, opts ...Option) *Report {
	a := &analysis{in: in, o: buildOptions(opts), podVerd: map[string]*verdict.Verdict{}}
	a.rep = &Report{
		Workload:   in.Workload.String(),
		Namespace:  in.Workload.Namespace,
		Containers: []Container{},
		Events:     []Event{},
		Pools:      []Pool{},
		Nodes:      []Node{},
		Replicas:   []Replica{},
		Next:       []string{},
		Notes:      []string{},
		Warnings:   []verdict.Warning{},
		Generated:  a.o.now,
		Trigger:    Trigger{Kind: TriggerNone},
		Cache:      CacheMap{Cached: []string{}, Missing: []string{}, NotListed: []string{}},
	}
	a.rep.Notes = append(a.rep.Notes, in.Errors...)
	a.containers()
	a.events()
	a.nodes()
	a.chooseVerdict()
	a.trigger()
	a.pools()
	a.replicas()
	a.identity()
	a.poolIdentities()
	a.conclude()
	return a.rep
}

// classify classifies a failure message; a failure is never "ok", so a
// classifier that finds nothing in it yields unknown.
func (a *analysis) classify(msg string) verdict.Verdict {
	v := a.o.classify(msg)
	if v.OK || v.Layer == verdict.LayerNone || v.Layer == "" {
		v = unknownClassifier(msg)
	}
	v.Evidence = redact.String(v.Evidence)
	v.Summary = redact.String(v.Summary)
	return v
}

// podsByAge returns the pods oldest first, by name on ties.
func podsByAge(pods []corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, len(pods))
	for i := range pods {
		out[i] = &pods[i]
	}
	slices.SortFunc(out, func(x, y *corev1.Pod) int {
		if c := x.CreationTimestamp.Time.Compare(y.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(x.Name, y.Name)
	})
	return out
}

// containers finds the containers not running because of their image and
// picks the image to diagnose.
func (a *analysis) containers() {
	failing := 0
	for _, p := range podsByAge(a.in.Pods) {
		for _, init := range []bool{true, false} {
			specs, statuses := p.Spec.Containers, p.Status.ContainerStatuses
			if init {
				specs, statuses = p.Spec.InitContainers, p.Status.InitContainerStatuses
			}
			for i := range specs {
				c := Container{Pod: p.Name, Node: p.Spec.NodeName, Name: specs[i].Name, Init: init, Image: specs[i].Image}
				raw := ""
				for j := range statuses {
					if statuses[j].Name != c.Name {
						continue
					}
					st := &statuses[j].State
					switch {
					case st.Waiting != nil:
						c.State, c.Reason, raw = "waiting", st.Waiting.Reason, st.Waiting.Message
						c.Message = redact.String(raw)
						c.PullFailure = pullReasons[c.Reason]
					case st.Running != nil:
						c.State = "running"
					case st.Terminated != nil:
						c.State, c.Reason = "terminated", st.Terminated.Reason
					}
				}
				if !c.PullFailure {
					continue
				}
				failing++
				if a.rep.Image == "" {
					a.rep.Image = c.Image
				}
				if c.Message != "" {
					v := a.classify(raw)
					c.Verdict = &v
				}
				if len(a.rep.Containers) < maxContainers {
					a.rep.Containers = append(a.rep.Containers, c)
				}
			}
		}
	}
	if failing > maxContainers {
		a.rep.Notes = append(a.rep.Notes, fmt.Sprintf("%d containers fail to pull; the first %d are listed.", failing, maxContainers))
	}
	if a.rep.Image == "" {
		switch {
		case a.in.Template != nil && len(a.in.Template.Containers) > 0:
			a.rep.Image = a.in.Template.Containers[0].Image
		case len(a.in.Pods) > 0 && len(a.in.Pods[0].Spec.Containers) > 0:
			a.rep.Image = a.in.Pods[0].Spec.Containers[0].Image
		}
	}
	a.ref = parseImage(a.rep.Image)
	if a.ref.ok {
		a.rep.Reference = a.ref.canonical
		a.rep.Registry = a.ref.host
	}
	// Digests the image is known by: its pin, and what running replicas of
	// the same reference resolved it to.
	a.digests = map[string]bool{}
	if a.ref.digest != "" {
		a.digests[a.ref.digest] = true
	}
	for i := range a.in.Pods {
		p := &a.in.Pods[i]
		for _, ss := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
			for j := range ss {
				if d := digestOf(ss[j].ImageID); d != "" && sameImage(ss[j].Image, &a.ref) {
					a.digests[d] = true
				}
			}
		}
	}
	for d := range a.digests {
		a.rep.Cache.Digests = append(a.rep.Cache.Digests, d)
	}
	slices.Sort(a.rep.Cache.Digests)
}

func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

func eventLast(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	}
	return eventTime(e)
}

// isDetailedPullFailure reports a kubelet "Failed to pull image" event, the
// one that carries the runtime's error (not the Back-off that follows it).
func isDetailedPullFailure(e *corev1.Event) bool {
	return strings.HasPrefix(e.Message, "Failed to pull image")
}

// events keeps the events about the workload's pods that bear on the pull,
// oldest first, and classifies the pull failures. The first detailed
// "Failed to pull image" event of each pod is always kept.
func (a *analysis) events() {
	pods := make(map[string]bool, len(a.in.Pods))
	for i := range a.in.Pods {
		pods[a.in.Pods[i].Name] = true
	}
	kind := strings.ToLower(string(a.in.Workload.Kind))
	var kept []*corev1.Event
	seen := map[string]bool{}
	for i := range a.in.Events {
		e := &a.in.Events[i]
		if e.Name != "" {
			key := e.Namespace + "/" + e.Name
			if seen[key] {
				continue
			}
			seen[key] = true
		}
		k := strings.ToLower(e.InvolvedObject.Kind)
		if !(k == "pod" && pods[e.InvolvedObject.Name]) && !(k == kind && e.InvolvedObject.Name == a.in.Workload.Name) {
			continue
		}
		if !eventReasons[e.Reason] {
			continue
		}
		kept = append(kept, e)
	}
	slices.SortStableFunc(kept, func(x, y *corev1.Event) int { return eventTime(x).Compare(eventTime(y)) })

	firstDetailed := map[string]bool{}
	var must, rest []*corev1.Event
	for _, e := range kept {
		if isDetailedPullFailure(e) && !firstDetailed[e.InvolvedObject.Name] {
			firstDetailed[e.InvolvedObject.Name] = true
			must = append(must, e)
			v := a.classify(e.Message)
			a.podVerd[e.InvolvedObject.Name] = &v
			continue
		}
		rest = append(rest, e)
	}
	// Room for the rest after the must-keep events, oldest first.
	room := max(maxEvents-len(must), 0)
	if len(rest) > room {
		a.rep.Notes = append(a.rep.Notes, fmt.Sprintf("%d more events about the pods are not listed.", len(rest)-room))
		rest = rest[:room]
	}
	sel := append(must, rest...)
	slices.SortStableFunc(sel, func(x, y *corev1.Event) int { return eventTime(x).Compare(eventTime(y)) })
	for _, e := range sel {
		count := e.Count
		if count == 0 && e.Series != nil {
			count = e.Series.Count
		}
		ev := Event{
			Object: strings.ToLower(e.InvolvedObject.Kind) + "/" + e.InvolvedObject.Name,
			Type:   e.Type, Reason: e.Reason, Message: redact.String(e.Message), Count: count,
			First: eventTime(e), Last: eventLast(e),
		}
		if (e.Reason == "Failed" || e.Reason == "BackOff" || e.Reason == "ErrImageNeverPull" || e.Reason == "InspectFailed") && !strings.HasPrefix(e.Message, "Error: ") {
			if v, ok := a.podVerd[e.InvolvedObject.Name]; ok && isDetailedPullFailure(e) && firstDetailed[e.InvolvedObject.Name] {
				ev.Verdict = v
			} else {
				v := a.classify(e.Message)
				ev.Verdict = &v
			}
		}
		a.rep.Events = append(a.rep.Events, ev)
	}
	// A failing pod without a detailed event falls back to its container's
	// waiting message.
	for _, c := range a.rep.Containers {
		if _, ok := a.podVerd[c.Pod]; !ok && c.Verdict != nil && c.Verdict.Layer != verdict.LayerUnknown {
			a.podVerd[c.Pod] = c.Verdict
		}
	}
	for _, c := range a.rep.Containers {
		if _, ok := a.podVerd[c.Pod]; !ok && c.Verdict != nil {
			a.podVerd[c.Pod] = c.Verdict
		}
	}
}

func humanAge(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// nodes builds the per-node view: pool, age, cache, eligibility, pods.
func (a *analysis) nodes() {
	failingOn := map[string]int{}
	runningOn := map[string]int{}
	for i := range a.in.Pods {
		p := &a.in.Pods[i]
		if p.Spec.NodeName == "" {
			continue
		}
		if _, ok := a.podVerd[p.Name]; ok {
			failingOn[p.Spec.NodeName]++
			continue
		}
		if runsImage(p, &a.ref) {
			runningOn[p.Spec.NodeName]++
		}
	}
	a.nodeIdx = make(map[string]int, len(a.in.Nodes))
	a.rep.Nodes = make([]Node, 0, len(a.in.Nodes))
	for i := range a.in.Nodes {
		n := &a.in.Nodes[i]
		pool, _ := poolOf(n)
		ok, reasons := eligible(a.in.Template, n)
		nd := Node{
			Name: n.Name, Pool: pool, Created: n.CreationTimestamp.Time,
			Age:          humanAge(a.o.now.Sub(n.CreationTimestamp.Time)),
			ImagesListed: len(n.Status.Images),
			ListFull:     a.o.maxImages > 0 && len(n.Status.Images) >= a.o.maxImages,
			Eligible:     ok, Reasons: reasons,
			OS: nodeOS(n), Arch: nodeArch(n),
			NodeImageVersion: nodeImageVersion(n),
			KubeletVersion:   n.Status.NodeInfo.KubeletVersion,
			Unschedulable:    n.Spec.Unschedulable,
			Failing:          failingOn[n.Name],
			Running:          runningOn[n.Name],
		}
		nd.CacheMatch = cacheMatch(n.Status.Images, &a.ref, a.digests)
		nd.Cached = nd.CacheMatch != ""
		if pr := a.in.Probes[n.Name]; pr != nil {
			nd.Probe = pr
			if pr.Status == ProbeDone || pr.Status == ProbeImagePull && pr.SameRegistry {
				v := pr.Verdict
				nd.Verdict = &v
			}
		}
		a.rep.Nodes = append(a.rep.Nodes, nd)
	}
	slices.SortFunc(a.rep.Nodes, func(x, y Node) int {
		return cmp.Or(strings.Compare(x.Pool, y.Pool), x.Created.Compare(y.Created), strings.Compare(x.Name, y.Name))
	})
	for i := range a.rep.Nodes {
		a.nodeIdx[a.rep.Nodes[i].Name] = i
	}
	// Node verdicts from failing pods where no probe ran.
	for _, p := range podsByAge(a.in.Pods) {
		v, ok := a.podVerd[p.Name]
		if !ok {
			continue
		}
		if i, ok := a.nodeIdx[p.Spec.NodeName]; ok && a.rep.Nodes[i].Verdict == nil {
			a.rep.Nodes[i].Verdict = v
		}
	}
	for i := range a.rep.Nodes {
		nd := &a.rep.Nodes[i]
		switch {
		case nd.Cached:
			a.rep.Cache.Cached = append(a.rep.Cache.Cached, nd.Name)
		case nd.ListFull:
			a.rep.Cache.NotListed = append(a.rep.Cache.NotListed, nd.Name)
		default:
			a.rep.Cache.Missing = append(a.rep.Cache.Missing, nd.Name)
		}
	}
}

// runsImage reports whether a pod has a running container of the image.
func runsImage(p *corev1.Pod, ref *imageRef) bool {
	for i := range p.Status.ContainerStatuses {
		cs := &p.Status.ContainerStatuses[i]
		if cs.State.Running == nil {
			continue
		}
		for j := range p.Spec.Containers {
			if p.Spec.Containers[j].Name == cs.Name && sameImage(p.Spec.Containers[j].Image, ref) {
				return true
			}
		}
	}
	return false
}

func (a *analysis) node(name string) *Node {
	if i, ok := a.nodeIdx[name]; ok {
		return &a.rep.Nodes[i]
	}
	return nil
}

// chooseVerdict picks the workload's verdict and the pod it centres on: the
// failing pod on the earliest-created node without the image (that is where
// the trigger put it), else the first failing pod. A probe that ran on that
// pod's node outranks the event text (evidence counts only from the node).
func (a *analysis) chooseVerdict() {
	var best *corev1.Pod
	for _, p := range podsByAge(a.in.Pods) {
		if _, ok := a.podVerd[p.Name]; !ok {
			continue
		}
		if best == nil {
			best = p
			continue
		}
		bn, pn := a.node(best.Spec.NodeName), a.node(p.Spec.NodeName)
		if pn != nil && !pn.Cached && (bn == nil || bn.Cached || pn.Created.Before(bn.Created)) {
			best = p
		}
	}
	if best == nil && len(a.in.Pods) == 0 && a.in.Workload.Kind != KindPod {
		a.rep.Verdict = noPodVerdict(a.in, a.rep.Workload)
		return
	}
	if best == nil {
		a.rep.Verdict = verdict.OKVerdict("No container of " + a.rep.Workload + " is failing to pull its image.")
		return
	}
	a.landed = best.Name
	a.rep.Node = best.Spec.NodeName
	a.rep.Verdict = *a.podVerd[best.Name]
	if nd := a.node(best.Spec.NodeName); nd != nil {
		nd.Landed = true
		if nd.Probe != nil && nd.Probe.Status == ProbeDone && !nd.Probe.Verdict.OK {
			a.rep.Verdict = nd.Probe.Verdict
		}
	}
	if a.rep.Verdict.OK {
		// The probe pulled but the pod did not: keep the pod's own failure.
		a.rep.Verdict = *a.podVerd[best.Name]
	}
}

// removalReasons are node event reasons that mean a node went away.
var removalReasons = map[string]bool{
	"RemovingNode": true, "DeletingNode": true, "NodeNotReady": true, "ScaleDown": true,
	"Deleted": true, "TerminatingNode": true, "Drain": true, "Disrupting": true,
}

// pools aggregates the nodes into pools and gives each a status.
func (a *analysis) pools() {
	idx := map[string]int{}
	labels := map[string]string{}
	for i := range a.in.Nodes {
		name, label := poolOf(&a.in.Nodes[i])
		labels[name] = label
	}
	heldArch := map[string]bool{}
	for i := range a.rep.Nodes {
		nd := &a.rep.Nodes[i]
		if nd.Cached || nd.Running > 0 {
			heldArch[nd.OS+"/"+nd.Arch] = true
		}
	}
	for i := range a.rep.Nodes {
		nd := &a.rep.Nodes[i]
		j, ok := idx[nd.Pool]
		if !ok {
			j = len(a.rep.Pools)
			idx[nd.Pool] = j
			a.rep.Pools = append(a.rep.Pools, Pool{Name: nd.Pool, Label: labels[nd.Pool], OS: nd.OS, Arch: nd.Arch, Oldest: nd.Created, Newest: nd.Created})
		}
		p := &a.rep.Pools[j]
		p.Nodes++
		if nd.Cached {
			p.Cached++
		} else if nd.ListFull {
			p.NotListed++
		}
		if nd.Eligible {
			p.Eligible = true
		} else {
			for _, r := range nd.Reasons {
				if !slices.Contains(p.Reasons, r) {
					p.Reasons = append(p.Reasons, r)
				}
			}
		}
		if nd.NodeImageVersion != "" && !slices.Contains(p.NodeImageVersions, nd.NodeImageVersion) {
			p.NodeImageVersions = append(p.NodeImageVersions, nd.NodeImageVersion)
		}
		if nd.Created.Before(p.Oldest) {
			p.Oldest = nd.Created
		}
		if nd.Created.After(p.Newest) {
			p.Newest = nd.Created
		}
	}
	byPool := make(map[string][]*Node, len(a.rep.Pools))
	for i := range a.rep.Nodes {
		nd := &a.rep.Nodes[i]
		byPool[nd.Pool] = append(byPool[nd.Pool], nd)
	}
	for i := range a.rep.Pools {
		p := &a.rep.Pools[i]
		if p.Eligible {
			p.Reasons = nil
		}
		p.Status = PoolUntested
		if !p.Eligible {
			p.Status = PoolIneligible
		}
		for _, nd := range byPool[p.Name] {
			if nd.Verdict != nil && !nd.Verdict.OK {
				p.Status = PoolBroken
				break
			}
			if nd.Probe != nil && nd.Probe.Status == ProbeDone && nd.Probe.Verdict.OK {
				p.Status = PoolFine
			}
			if (nd.Cached || nd.Running > 0) && p.Status == PoolUntested {
				p.Status = PoolCachedOnly
			}
		}
		if p.Eligible && len(heldArch) > 0 && !heldArch[p.OS+"/"+p.Arch] {
			p.Platform = fmt.Sprintf("no node that holds or runs the image is %s/%s: check that the image has a %s/%s manifest before the scheduler puts a replica here", p.OS, p.Arch, p.OS, p.Arch)
		}
	}
}

// replicas lists the running replicas and whether they run only because
// their node holds the image.
func (a *analysis) replicas() {
	failed := !a.rep.Verdict.OK
	for _, p := range podsByAge(a.in.Pods) {
		if p.Spec.NodeName == "" || !runsImage(p, &a.ref) {
			continue
		}
		r := Replica{Pod: p.Name, Node: p.Spec.NodeName}
		nd := a.node(p.Spec.NodeName)
		if nd != nil {
			r.Pool = nd.Pool
		}
		switch {
		case nd != nil && nd.Probe != nil && nd.Probe.Status == ProbeDone && nd.Probe.Verdict.OK:
			r.Basis = "a fresh pull by the probe on this node works"
		case nd != nil && nd.Verdict != nil && nd.Probe != nil && !nd.Verdict.OK:
			r.CacheOnly = true
			r.Basis = "the probe on this node fails at " + string(nd.Probe.Verdict.Layer)
		case nd != nil && a.poolProbeFailure(nd.Pool) != "":
			r.CacheOnly = true
			r.Basis = "the probe on " + a.poolProbeFailure(nd.Pool) + " (same pool) fails"
		case nd != nil && a.poolProbeOK(nd.Pool) != "":
			r.Basis = "a fresh pull by the probe on " + a.poolProbeOK(nd.Pool) + " (same pool) works"
		case failed:
			r.CacheOnly = true
			r.Basis = "inferred: a fresh pull fails on " + a.rep.Node + "; run with --probe to prove this node"
		}
		a.rep.Replicas = append(a.rep.Replicas, r)
	}
	// Every eligible node created since the newest node holding the image
	// lacks it: say so with the date.
	var newestCached time.Time
	for i := range a.rep.Nodes {
		if nd := &a.rep.Nodes[i]; nd.Cached && nd.Created.After(newestCached) {
			newestCached = nd.Created
		}
	}
	var since time.Time
	all := true
	for i := range a.rep.Nodes {
		nd := &a.rep.Nodes[i]
		if !nd.Eligible || nd.Cached || nd.ListFull {
			continue // a full list proves nothing either way
		}
		if !nd.Created.After(newestCached) {
			all = false
			break
		}
		if since.IsZero() || nd.Created.Before(since) {
			since = nd.Created
		}
	}
	if all && !newestCached.IsZero() {
		a.rep.Cache.Since = since
	}
}

// poolProbeOK names a node of pool whose probe pulled the image, or "".
func (a *analysis) poolProbeOK(pool string) string {
	if a.probeOK == nil {
		a.probeOK = map[string]string{}
		for i := range a.rep.Nodes {
			nd := &a.rep.Nodes[i]
			if _, done := a.probeOK[nd.Pool]; !done && nd.Probe != nil && nd.Probe.Status == ProbeDone && nd.Probe.Verdict.OK {
				a.probeOK[nd.Pool] = nd.Name
			}
		}
	}
	return a.probeOK[pool]
}

// poolProbeFailure names a node of pool whose probe failed, or "".
func (a *analysis) poolProbeFailure(pool string) string {
	if a.probeFail == nil {
		a.probeFail = map[string]string{}
		for i := range a.rep.Nodes {
			nd := &a.rep.Nodes[i]
			if _, done := a.probeFail[nd.Pool]; !done && nd.Probe != nil && nd.Verdict != nil && !nd.Verdict.OK {
				a.probeFail[nd.Pool] = nd.Name
			}
		}
	}
	return a.probeFail[pool]
}

// identity checks the pull secrets and the credential provider, and says
// when credentials are irrelevant (an imagePullSecret installs no route, resolver or trust).
func (a *analysis) identity() {
	id := &a.rep.Identity
	id.PullSecrets = []PullSecret{}
	id.Relevant = true
	switch a.rep.Verdict.Layer {
	case verdict.LayerConfig, verdict.LayerDNS, verdict.LayerRoute, verdict.LayerTLS, verdict.LayerTransfer, verdict.LayerRuntime:
		if !a.rep.Verdict.OK && a.rep.Verdict.Cause != verdict.CodeConfigCredentials {
			id.Relevant = false
		}
	}
	var spec *corev1.PodSpec
	if len(a.in.Pods) > 0 {
		spec = &podsByAge(a.in.Pods)[0].Spec
	} else {
		spec = a.in.Template
	}
	if spec == nil {
		return
	}
	id.ServiceAccount = cmp.Or(spec.ServiceAccountName, "default")
	id.ServiceAccountFound = a.in.ServiceAccount != nil
	// The kubelet reads the pod's imagePullSecrets only; the keys (never
	// the credentials, which diagnose does not read) go through the one
	// keychain, as the probe's do.
	kube := keychain.Kubelet{PodExists: len(a.in.Pods) > 0}
	seen := map[string]bool{}
	add := func(name, source string) {
		if seen[name] {
			return
		}
		seen[name] = true
		ps := PullSecret{Name: name, Source: source}
		info, ok := a.in.PullSecrets[name]
		switch {
		case !ok:
			ps.Problem = "not read"
		case !info.Readable:
			ps.Problem = cmp.Or(info.Problem, "could not be read")
		case !info.Found:
			ps.Readable = true
			ps.Problem = "does not exist in namespace " + a.in.Workload.Namespace
		default:
			ps.Readable, ps.Found, ps.Type = true, true, string(info.Type)
			ps.Problem = info.Problem
			if info.Type != corev1.SecretTypeDockerConfigJson && info.Type != corev1.SecretTypeDockercfg {
				ps.Problem = "type " + string(info.Type) + ", the kubelet only uses kubernetes.io/dockerconfigjson (or dockercfg)"
			} else {
				auths := map[string]keychain.Entry{}
				for _, k := range info.Registries {
					auths[k] = keychain.Entry{}
				}
				sec := keychain.Secret{Name: name, Auths: auths}
				if source == "pod" {
					kube.PodSecrets = append(kube.PodSecrets, sec)
				} else {
					kube.ServiceAccountSecrets = append(kube.ServiceAccountSecrets, sec)
				}
			}
		}
		id.PullSecrets = append(id.PullSecrets, ps)
	}
	for _, r := range spec.ImagePullSecrets {
		add(r.Name, "pod")
	}
	if a.in.ServiceAccount != nil {
		for _, r := range a.in.ServiceAccount.ImagePullSecrets {
			add(r.Name, "serviceaccount")
		}
		if len(spec.ImagePullSecrets) == 0 && len(a.in.ServiceAccount.ImagePullSecrets) > 0 {
			id.Notes = append(id.Notes, "the service account lists pull secrets but the pod has none: they are copied into a pod only when it is created; recreate the pods")
		}
	}
	if a.ref.ok {
		res := kube.Resolve(a.ref.repo, workloadRepos(spec)...)
		for i := range id.PullSecrets {
			ps := &id.PullSecrets[i]
			for _, c := range res.Credentials {
				if c.Source.Name == ps.Name && (c.Source.Kind == keychain.KindPodSecret) == (ps.Source == "pod") {
					ps.Matches, ps.Entry = true, c.Key
					break
				}
			}
			switch {
			case ps.Matches || !ps.Found || ps.Problem != "":
			case ps.Source == "serviceaccount" && (kube.PodExists || len(kube.PodSecrets) > 0):
				ps.Problem = "not used: the kubelet reads only the pod's imagePullSecrets, and the service account's are copied into a pod only when it is created without any"
			default:
				ps.Problem = "no key matches " + a.ref.repo + " by the kubelet's rule"
			}
		}
		for _, n := range res.Notes {
			a.rep.Warnings = append(a.rep.Warnings, verdict.Warning{Code: n.Code, Message: n.Message})
		}
	}
	id.Provider = expectedProvider(a.ref.host)
	if !id.ServiceAccountFound {
		id.Notes = append(id.Notes, "service account "+id.ServiceAccount+" was not found or not readable")
	}
	if !id.Relevant {
		id.Notes = append(id.Notes, "credentials are irrelevant here: the pull fails at "+string(a.rep.Verdict.Layer)+", before any credential is sent; an imagePullSecret installs no route, changes no resolver and makes no certificate trusted")
	}
}

// conclude writes the summary, the next steps and the notes.
func (a *analysis) conclude() {
	r := a.rep
	var broken, fine, cachedOnly, untested []string
	cachedNodes := 0
	for _, p := range r.Pools {
		switch p.Status {
		case PoolBroken:
			broken = append(broken, p.Name)
		case PoolFine:
			fine = append(fine, p.Name)
		case PoolCachedOnly:
			cachedOnly = append(cachedOnly, p.Name)
		case PoolUntested:
			untested = append(untested, p.Name)
		}
		cachedNodes += p.Cached
	}
	var b strings.Builder
	if r.Verdict.Cause == CauseNoPod {
		b.WriteString(r.Verdict.Summary)
	} else if r.Verdict.OK {
		fmt.Fprintf(&b, "%s: no container is failing to pull %s.", r.Workload, r.Image)
		if len(cachedOnly) > 0 {
			fmt.Fprintf(&b, " Nodes of %s run it from their cache; nothing here proves a fresh pull works: run with --probe.", strings.Join(cachedOnly, ", "))
		}
	} else {
		fmt.Fprintf(&b, "%s: pulling %s fails at %s", r.Workload, r.Image, r.Verdict.Layer)
		if r.Verdict.Cause != "" {
			fmt.Fprintf(&b, " (%s", r.Verdict.Cause)
			if r.Verdict.Endpoint != "" {
				fmt.Fprintf(&b, ", %s", r.Verdict.Endpoint)
			}
			b.WriteString(")")
		}
		if r.Verdict.Owner != "" {
			fmt.Fprintf(&b, "; owner: %s", r.Verdict.Owner)
		}
		if r.Node != "" {
			fmt.Fprintf(&b, "; it landed on %s", r.Node)
			if nd := a.node(r.Node); nd != nil {
				fmt.Fprintf(&b, " (pool %s, %s old)", nd.Pool, nd.Age)
			}
		}
		b.WriteString(".")
		if r.Trigger.Kind != TriggerNone {
			fmt.Fprintf(&b, " Trigger (not the cause): %s at %s.", r.Trigger.Kind, r.Trigger.Time.UTC().Format(time.RFC3339))
		}
		if len(broken) > 0 {
			fmt.Fprintf(&b, " Broken: %s.", strings.Join(broken, ", "))
		}
		if len(fine) > 0 {
			fmt.Fprintf(&b, " Fine (probed): %s.", strings.Join(fine, ", "))
		}
		if len(r.Replicas) > 0 && cachedNodes > 0 {
			cacheOnly := 0
			for _, rp := range r.Replicas {
				if rp.CacheOnly {
					cacheOnly++
				}
			}
			if cacheOnly > 0 {
				fmt.Fprintf(&b, " %d running replica(s) are healthy only because the image is cached on %d old node(s)", cacheOnly, cachedNodes)
				if len(cachedOnly) > 0 {
					fmt.Fprintf(&b, " (pool %s)", strings.Join(cachedOnly, ", "))
				}
				if !r.Cache.Since.IsZero() {
					fmt.Fprintf(&b, "; every eligible node created since %s lacks it", r.Cache.Since.UTC().Format("2006-01-02 15:04 MST"))
				}
				b.WriteString(".")
			}
		}
		if len(untested) > 0 {
			fmt.Fprintf(&b, " Untested eligible pools: %s.", strings.Join(untested, ", "))
		}
	}
	for i := range r.Nodes {
		n := &r.Nodes[i]
		if n.Probe == nil || n.Probe.PodView == nil || n.Probe.PodView.Consequence == "" {
			continue
		}
		pv := n.Probe.PodView
		fmt.Fprintf(&b, " Pod view on %s (pool %s)", n.Name, n.Pool)
		if pv.PartingHop != "" {
			fmt.Fprintf(&b, ", parting at %s", pv.PartingHop)
		}
		fmt.Fprintf(&b, ": %s", pv.Consequence)
	}
	r.Summary = b.String()

	r.Next = append(r.Next, r.Verdict.Next...)
	if !r.Verdict.OK && r.Trigger.Kind != TriggerNone {
		r.Next = append(r.Next, fmt.Sprintf("The %s that created %s is the trigger, not the cause: fix the %s path for every eligible pool, not only this node; the next autoscaling event finds any gap a manual repair leaves.", r.Trigger.Kind, r.Trigger.Node, r.Verdict.Layer))
	}
	probed := false
	for i := range r.Nodes {
		if r.Nodes[i].Probe != nil {
			probed = true
			break
		}
	}
	if !probed {
		r.Next = append(r.Next, fmt.Sprintf("Prove it below the pod, on a fresh node of every eligible pool: `pullpath diagnose %s -n %s --probe`.", r.Workload, r.Namespace))
	}
	var probeImageFailed []string
	for i := range r.Nodes {
		if pr := r.Nodes[i].Probe; pr != nil && pr.Status == ProbeImagePull && !pr.SameRegistry {
			probeImageFailed = append(probeImageFailed, r.Nodes[i].Name)
		}
	}
	if len(probeImageFailed) > 0 {
		r.Next = append(r.Next, fmt.Sprintf("%d node(s) could not pull the probe's own image (%s): that is evidence the nodes cannot reach its registry; rerun with --probe-image pointing at a copy in %s to test the app's registry itself.", len(probeImageFailed), strings.Join(probeImageFailed, ", "), r.Registry))
	}
	if len(cachedOnly) > 0 && !r.Verdict.OK {
		r.Next = append(r.Next, "Do not take the running replicas on "+strings.Join(cachedOnly, ", ")+" as proof: their nodes pulled the image long ago. Verify on a node you did not repair by hand, ideally one created by scale-up or replacement.")
	}
	if r.Identity.Relevant && !r.Verdict.OK {
		for _, ps := range r.Identity.PullSecrets {
			if ps.Problem != "" {
				r.Next = append(r.Next, fmt.Sprintf("Pull secret %s (%s): %s.", ps.Name, ps.Source, ps.Problem))
			}
		}
		if r.Identity.Provider != "" {
			r.Next = append(r.Next, "Node credentials: expected "+r.Identity.Provider+".")
		}
	}
	for _, p := range r.Pools {
		if p.Platform != "" {
			r.Warnings = append(r.Warnings, verdict.Warning{Code: verdict.CodeManifestPlatformRisk, Message: "pool " + p.Name + ": " + p.Platform})
		}
	}
	anyFull, anyFallback := false, false
	for i := range r.Nodes {
		anyFull = anyFull || r.Nodes[i].ListFull
	}
	for _, p := range r.Pools {
		anyFallback = anyFallback || p.Label == "fallback"
	}
	if anyFull {
		r.Notes = append(r.Notes, fmt.Sprintf("Some nodes list %d or more images, the kubelet's cap (nodeStatusMaxImages, largest first): the image may be on them without being listed (\"not listed\" is not proof of absence).", a.o.maxImages))
	}
	if anyFallback {
		r.Notes = append(r.Notes, "Nodes without a known pool label are grouped as nopool/<os>-<arch>-<instance-type>.")
	}
}
