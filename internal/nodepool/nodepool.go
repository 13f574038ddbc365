// Package nodepool names the node pool a Kubernetes node belongs to from its
// labels alone, so that the cluster code and the node agent (which links no
// Kubernetes types) agree on the name.
package nodepool

// Labels are the node labels that name a node pool, in the order they are
// tried: AKS, AKS legacy, EKS managed node groups, eksctl, GKE, Karpenter
// (incl. AKS node auto-provisioning), Karpenter legacy.
var Labels = []string{
	"kubernetes.azure.com/agentpool",
	"agentpool",
	"eks.amazonaws.com/nodegroup",
	"alpha.eksctl.io/nodegroup-name",
	"cloud.google.com/gke-nodepool",
	"karpenter.sh/nodepool",
	"karpenter.sh/provisioner-name",
}

// FromLabels returns the pool a node's labels name and the label it came
// from. A node with none of Labels falls back to a pool named
// "nopool/<os>-<arch>[-<instance-type>]" (label "fallback"), grouping
// unlabelled nodes that the scheduler would treat alike; os and arch are the
// node's when its labels lack them.
func FromLabels(labels map[string]string, os, arch string) (name, label string) {
	for _, l := range Labels {
		if v := labels[l]; v != "" {
			return v, l
		}
	}
	if v := labels["kubernetes.io/os"]; v != "" {
		os = v
	}
	if v := labels["kubernetes.io/arch"]; v != "" {
		arch = v
	}
	name = "nopool/" + os + "-" + arch
	if it := labels["node.kubernetes.io/instance-type"]; it != "" {
		name += "-" + it
	}
	return name, "fallback"
}
