package cluster

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/pullpath/pullpath/internal/nodepool"
)

// PoolLabels are the node labels that name a node pool, in the order they
// are tried (nodepool.Labels, shared with the node agent). A node with none
// of them falls back to a pool named "nopool/<os>-<arch>[-<instance-type>]",
// grouping unlabelled nodes that the scheduler would treat alike.
var PoolLabels = nodepool.Labels

// NodeImageLabels are node labels that carry the node image version; a
// change of value within a pool marks a pool (node image) upgrade.
var NodeImageLabels = []string{
	"kubernetes.azure.com/node-image-version",
	"eks.amazonaws.com/nodegroup-image",
	"cloud.google.com/gke-node-image-version",
}

// poolOf returns a node's pool name and the label it came from.
func poolOf(n *corev1.Node) (name, label string) {
	return nodepool.FromLabels(n.Labels, n.Status.NodeInfo.OperatingSystem, n.Status.NodeInfo.Architecture)
}

func nodeOS(n *corev1.Node) string {
	if v := n.Labels["kubernetes.io/os"]; v != "" {
		return v
	}
	return n.Status.NodeInfo.OperatingSystem
}

func nodeArch(n *corev1.Node) string {
	if v := n.Labels["kubernetes.io/arch"]; v != "" {
		return v
	}
	return n.Status.NodeInfo.Architecture
}

func nodeImageVersion(n *corev1.Node) string {
	for _, l := range NodeImageLabels {
		if v := n.Labels[l]; v != "" {
			return v
		}
	}
	return ""
}

// transientTaint reports taints that come and go with node conditions or
// autoscaler actions; they do not make a pool ineligible.
func transientTaint(t *corev1.Taint) bool {
	return strings.HasPrefix(t.Key, "node.kubernetes.io/") ||
		strings.HasPrefix(t.Key, "node.cloudprovider.kubernetes.io/") ||
		t.Key == "ToBeDeletedByClusterAutoscaler" || t.Key == "DeletionCandidateOfClusterAutoscaler" ||
		t.Key == "karpenter.sh/disrupted" || t.Key == "karpenter.sh/disruption"
}

// tolerates reports whether tol tolerates taint (the scheduler's rule).
func tolerates(tol *corev1.Toleration, taint *corev1.Taint) bool {
	if tol.Effect != "" && tol.Effect != taint.Effect {
		return false
	}
	if tol.Key != "" && tol.Key != taint.Key {
		return false
	}
	switch tol.Operator {
	case corev1.TolerationOpExists:
		return true
	case "", corev1.TolerationOpEqual:
		return tol.Key != "" && tol.Value == taint.Value
	}
	return false
}

// eligible decides whether the scheduler could place a pod with spec on
// node n, and why not. Cordoned nodes and transient taints do not count:
// they say nothing about the pool.
func eligible(spec *corev1.PodSpec, n *corev1.Node) (bool, []string) {
	if spec == nil {
		return true, nil
	}
	var reasons []string
	for k, v := range spec.NodeSelector {
		if got, ok := n.Labels[k]; !ok || got != v {
			if !ok {
				got = "(unset)"
			}
			reasons = append(reasons, fmt.Sprintf("nodeSelector %s=%s (node has %s)", k, v, got))
		}
	}
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		match := false
		for i := range terms {
			if termMatches(&terms[i], n) {
				match = true
				break
			}
		}
		if !match {
			reasons = append(reasons, "required node affinity does not match")
		}
	}
	for i := range n.Spec.Taints {
		t := &n.Spec.Taints[i]
		if t.Effect == corev1.TaintEffectPreferNoSchedule || transientTaint(t) {
			continue
		}
		ok := false
		for j := range spec.Tolerations {
			if tolerates(&spec.Tolerations[j], t) {
				ok = true
				break
			}
		}
		if !ok {
			reasons = append(reasons, "taint "+taintString(t)+" not tolerated")
		}
	}
	if spec.OS != nil && spec.OS.Name != "" && nodeOS(n) != "" && string(spec.OS.Name) != nodeOS(n) {
		reasons = append(reasons, fmt.Sprintf("pod OS %s, node OS %s", spec.OS.Name, nodeOS(n)))
	}
	return len(reasons) == 0, reasons
}

func taintString(t *corev1.Taint) string {
	if t.Value == "" {
		return t.Key + ":" + string(t.Effect)
	}
	return t.Key + "=" + t.Value + ":" + string(t.Effect)
}

func termMatches(term *corev1.NodeSelectorTerm, n *corev1.Node) bool {
	if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
		return false // an empty term matches nothing
	}
	for i := range term.MatchExpressions {
		if !requirementMatches(&term.MatchExpressions[i], n.Labels) {
			return false
		}
	}
	for i := range term.MatchFields {
		r := &term.MatchFields[i]
		if r.Key != "metadata.name" {
			return false
		}
		if !requirementMatches(r, map[string]string{"metadata.name": n.Name}) {
			return false
		}
	}
	return true
}

func requirementMatches(r *corev1.NodeSelectorRequirement, labels map[string]string) bool {
	v, has := labels[r.Key]
	switch r.Operator {
	case corev1.NodeSelectorOpIn:
		if !has {
			return false
		}
		for _, want := range r.Values {
			if v == want {
				return true
			}
		}
		return false
	case corev1.NodeSelectorOpNotIn:
		for _, bad := range r.Values {
			if has && v == bad {
				return false
			}
		}
		return true
	case corev1.NodeSelectorOpExists:
		return has
	case corev1.NodeSelectorOpDoesNotExist:
		return !has
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if !has || len(r.Values) != 1 {
			return false
		}
		got, err1 := strconv.ParseInt(v, 10, 64)
		want, err2 := strconv.ParseInt(r.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if r.Operator == corev1.NodeSelectorOpGt {
			return got > want
		}
		return got < want
	}
	return false
}
