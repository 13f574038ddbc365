package cluster

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pullpath/pullpath/internal/cluster/kube"
)

// MonitoredNode is one node as `pullpath monitor status` needs it: its pool,
// the monitor agent's condition, and how many running pods use a watched
// image.
type MonitoredNode struct {
	Name    string
	Pool    string
	Created time.Time
	// Condition is the agent's condition (nil when no agent reported).
	Condition *corev1.NodeCondition
	// Result is the agent's result annotation (resultAnnotation), "" when
	// there is none.
	Result string
	// WatchedPods counts running pods on the node whose containers use one
	// of the watched images; -1 when pods could not be listed (RBAC).
	WatchedPods int
}

// MonitoredNodes lists every node with the condition conditionType, and
// counts the running pods that use any of images (as written in the pod
// spec; a tag and a digest of the same image are different strings). With no
// images, or without list on pods, WatchedPods is -1.
func MonitoredNodes(ctx context.Context, cs kube.Interface, conditionType string, images []string) ([]MonitoredNode, error) {
	return MonitoredNodesWithResult(ctx, cs, conditionType, "", images)
}

// MonitoredNodesWithResult is MonitoredNodes that also reads each node's
// annotation resultAnnotation (the agent's structured result).
func MonitoredNodesWithResult(ctx context.Context, cs kube.Interface, conditionType, resultAnnotation string, images []string) ([]MonitoredNode, error) {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	pods := map[string]int{}
	counted := false
	if len(images) > 0 {
		list, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "status.phase=Running"})
		if err == nil {
			counted = true
			for _, p := range list.Items {
				for _, c := range p.Spec.Containers {
					if slices.Contains(images, c.Image) {
						pods[p.Spec.NodeName]++
						break
					}
				}
			}
		}
	}
	out := make([]MonitoredNode, 0, len(nodes.Items))
	for i := range nodes.Items {
		n := &nodes.Items[i]
		pool, _ := poolOf(n)
		m := MonitoredNode{Name: n.Name, Pool: pool, Created: n.CreationTimestamp.Time, WatchedPods: -1}
		if resultAnnotation != "" {
			m.Result = n.Annotations[resultAnnotation]
		}
		if counted {
			m.WatchedPods = pods[n.Name]
		}
		for j := range n.Status.Conditions {
			if string(n.Status.Conditions[j].Type) == conditionType {
				c := n.Status.Conditions[j]
				m.Condition = &c
			}
		}
		out = append(out, m)
	}
	return out, nil
}
