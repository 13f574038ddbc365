package cluster

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/pullpath/pullpath/internal/redact"
)

// UpgradeStatusLabel is the node label AKS sets while its upgrader works on
// a node (surge, cordon, drain, reimage).
const UpgradeStatusLabel = "kubernetes.azure.com/upgrade-status"

// upgraderReasons are the node event reasons the AKS upgrader writes while
// it moves a pool to a new node image or Kubernetes version.
var upgraderReasons = map[string]bool{"Surge": true, "Drain": true, "Upgrade": true, "Delete": true}

// scaleUpGroup matches one entry of the cluster autoscaler's TriggeredScaleUp
// message, "pod triggered scale-up: [{GROUP CUR->NEW (max: MAX)} ...]":
// EventingScaleUpStatusProcessor.Process writes "pod triggered scale-up: %v"
// with the ScaleUpInfos, each printed by ScaleUpInfo.String as
// "{%v %v->%v (max: %v)}" with the node group's Id (kubernetes/autoscaler,
// cluster-autoscaler/processors/status/eventing_scale_up_processor.go and
// processors/nodegroupset/nodegroup_set_processor.go). On AKS the group Id
// is the scale set, "aks-POOL-ID-vmss"; on GKE an instance group URL.
var scaleUpGroup = regexp.MustCompile(`\{(\S+) \d+->\d+ \(max: \d+\)\}`)

// nominatedTarget matches the targets of Karpenter's Nominated event,
// "Pod should schedule on: nodeclaim/NAME, node/NAME" (kubernetes-sigs/
// karpenter, pkg/controllers/provisioning/scheduling/events.go).
var nominatedTarget = regexp.MustCompile(`\b(nodeclaim|node)/([a-z0-9.-]+)`)

// triggerWindow bounds how long before a node's creation an autoscaler
// event may be and still be the reason for it, and how close a removed
// node must be to count as replaced.
const triggerWindow = 2 * time.Hour

// trigger names the change that put the failing pod on a node without the
// image. Explicit evidence wins over inference, in this order:
//
//  1. the AKS upgrader working on the node itself (its Surge, Drain,
//     Upgrade or Delete node events, or the upgrade-status label) is a
//     pool upgrade;
//  2. a cluster-autoscaler TriggeredScaleUp naming the node's scale set or
//     pool, or a Karpenter Nominated naming the node or its node claim, at
//     or before the node's creation, is a scale-up; a node image version
//     that differs from the cached nodes of the pool is added as a note;
//  3. the upgrader working on another node of the pool is a pool upgrade;
//  4. only then inference: a node image version differing from the pool's
//     cached nodes is a pool upgrade, a removed node of the pool shortly
//     before is a node replacement, else a newer node is a scale-up.
//
// Creation timestamps have second resolution, so a cached node created in
// the same second as the failing one counts as older: the result does not
// depend on which side of a second boundary two nodes were created.
func (a *analysis) trigger() {
	if a.landed == "" {
		return
	}
	nd := a.node(a.rep.Node)
	if nd == nil {
		a.rep.Trigger.Evidence = "the failing pod is not bound to a known node"
		return
	}
	if nd.Cached {
		a.rep.Trigger.Evidence = "the node already lists the image; no change in the timeline explains the failure (imagePullPolicy Always pulls anyway)"
		return
	}
	t := &a.rep.Trigger
	t.Node, t.Pool, t.Time = nd.Name, nd.Pool, nd.Created
	var older, cachedSamePool []*Node
	for i := range a.rep.Nodes {
		o := &a.rep.Nodes[i]
		if o.Name != nd.Name && o.Cached && !o.Created.After(nd.Created) {
			older = append(older, o)
			if o.Pool == nd.Pool {
				cachedSamePool = append(cachedSamePool, o)
			}
		}
	}
	imageNote := ""
	if nd.NodeImageVersion != "" {
		for _, o := range cachedSamePool {
			if o.NodeImageVersion != "" && o.NodeImageVersion != nd.NodeImageVersion {
				imageNote = fmt.Sprintf("%s runs node image %s; %s, which holds the image, runs %s", nd.Name, nd.NodeImageVersion, o.Name, o.NodeImageVersion)
				break
			}
		}
	}

	// 1. The upgrader on this node.
	if ev := a.upgraderEvidence(func(name string) bool { return name == nd.Name }); ev != "" {
		t.Kind, t.Evidence = TriggerPoolUpgrade, ev
		return
	}
	// 2. An autoscaler event for this node's pool.
	if ev := a.scaleUpEvidence(nd); ev != "" {
		t.Kind, t.Evidence = TriggerScaleUp, ev
		if imageNote != "" {
			t.Evidence += "; note: " + imageNote + ": the pool is mid-upgrade, and the new node image may itself be a cause"
		}
		return
	}
	// 3. The upgrader on another node of the pool.
	if ev := a.upgraderEvidence(func(name string) bool {
		o := a.node(name)
		return o != nil && o.Pool == nd.Pool
	}); ev != "" {
		t.Kind, t.Evidence = TriggerPoolUpgrade, ev
		return
	}

	// 4. Inference.
	if len(older) == 0 {
		t.Kind, t.Node, t.Pool, t.Time = TriggerNone, "", "", time.Time{}
		t.Evidence = "no node that holds the image is older than " + nd.Name + ": the image never pulled anywhere here (a new image or tag, or a new cluster)"
		return
	}
	if imageNote != "" {
		t.Kind, t.Evidence = TriggerPoolUpgrade, imageNote
		return
	}
	for i := range a.in.NodeEvents {
		e := &a.in.NodeEvents[i]
		if !removalReasons[e.Reason] || a.node(e.InvolvedObject.Name) != nil {
			continue
		}
		et := eventLast(e)
		if d := nd.Created.Sub(et); d >= -triggerWindow && d <= triggerWindow {
			t.Kind = TriggerNodeReplacement
			t.Evidence = fmt.Sprintf("node %s is gone (%s at %s) and %s was created at %s", e.InvolvedObject.Name, e.Reason, et.UTC().Format(time.RFC3339), nd.Name, nd.Created.UTC().Format(time.RFC3339))
			return
		}
	}
	t.Kind = TriggerScaleUp
	t.Evidence = fmt.Sprintf("%s (pool %s) was created at %s, after (or in the same second as) the %d node(s) that hold the image", nd.Name, nd.Pool, nd.Created.UTC().Format(time.RFC3339), len(older))
}

// upgraderEvidence describes the AKS upgrader working on a node that match
// accepts: its upgrade-status label, or an upgrader node event.
func (a *analysis) upgraderEvidence(match func(node string) bool) string {
	for i := range a.in.Nodes {
		n := &a.in.Nodes[i]
		if v, ok := n.Labels[UpgradeStatusLabel]; ok && match(n.Name) {
			return fmt.Sprintf("node %s carries %s=%s", n.Name, UpgradeStatusLabel, v)
		}
	}
	for i := range a.in.NodeEvents {
		e := &a.in.NodeEvents[i]
		if !upgraderReasons[e.Reason] || !isUpgrader(e) || !match(e.InvolvedObject.Name) {
			continue
		}
		return fmt.Sprintf("upgrader %s on node %s at %s: %s", e.Reason, e.InvolvedObject.Name, eventLast(e).UTC().Format(time.RFC3339), redact.String(e.Message))
	}
	return ""
}

func isUpgrader(e *corev1.Event) bool {
	return e.Source.Component == "upgrader" || e.ReportingController == "upgrader"
}

// scaleUpEvidence describes an autoscaler event on a pod of the workload
// that names nd's node group, scale set, pool or node claim and is not
// later than nd's creation (second resolution) nor long before it.
func (a *analysis) scaleUpEvidence(nd *Node) string {
	var owners []string
	for i := range a.in.Nodes {
		if n := &a.in.Nodes[i]; n.Name == nd.Name {
			for _, o := range n.OwnerReferences {
				if o.Kind == "NodeClaim" {
					owners = append(owners, o.Name)
				}
			}
		}
	}
	for i := range a.in.Events {
		e := &a.in.Events[i]
		if e.InvolvedObject.Kind != "" && e.InvolvedObject.Kind != "Pod" {
			continue
		}
		var names bool
		switch e.Reason {
		case "TriggeredScaleUp":
			for _, m := range scaleUpGroup.FindAllStringSubmatch(e.Message, -1) {
				names = names || groupNamesNode(m[1], nd)
			}
		case "Nominated":
			for _, m := range nominatedTarget.FindAllStringSubmatch(e.Message, -1) {
				switch {
				case m[1] == "node" && m[2] == nd.Name,
					m[1] == "nodeclaim" && (slices.Contains(owners, m[2]) || strings.HasPrefix(m[2], nd.Pool+"-")):
					names = true
				}
			}
		}
		if !names {
			continue
		}
		et := eventTime(e)
		if et.After(nd.Created.Truncate(time.Second).Add(time.Second-1)) || nd.Created.Sub(et) > triggerWindow {
			continue
		}
		return fmt.Sprintf("%s: %s; %s was created at %s", e.Reason, redact.String(e.Message), nd.Name, nd.Created.UTC().Format(time.RFC3339))
	}
	return ""
}

// groupNamesNode reports whether an autoscaler node group Id names nd: the
// node's name starts with the group's last path segment (AKS scale set
// "aks-user2-1234-vmss" → node "aks-user2-1234-vmss000000"; GKE group
// "gke-c-pool-abcd-grp" → node "gke-c-pool-abcd-xyz1"), or the group is the
// pool or an AKS scale set of the pool ("aks-POOL-…").
func groupNamesNode(id string, nd *Node) bool {
	seg := strings.ToLower(id[strings.LastIndex(id, "/")+1:])
	if seg == "" {
		return false
	}
	base := strings.TrimSuffix(seg, "-grp")
	pool := strings.ToLower(nd.Pool)
	node := strings.ToLower(nd.Name)
	return strings.HasPrefix(node, seg) || base != seg && strings.HasPrefix(node, base+"-") ||
		seg == pool || strings.HasPrefix(seg, "aks-"+pool+"-")
}
