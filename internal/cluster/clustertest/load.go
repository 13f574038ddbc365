package clustertest

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// Load creates the fixture's objects through the API the way a cluster
// would have them: owner references point at the UIDs the server assigned,
// pod and node status are written with UpdateStatus, events are created
// through events.k8s.io/v1 (eventTime, series) as a modern kubelet and
// cluster-autoscaler do. A real API server sets creationTimestamp itself,
// so Load creates the nodes in the fixture's order and waits for the clock
// to pass a second between nodes of different creation times: ages shrink
// to seconds but their order holds.
func Load(ctx context.Context, cs kubernetes.Interface, f *Fixture) error {
	for i := range f.Namespaces {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &f.Namespaces[i], metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating namespace: %w", err)
		}
	}
	for i := range f.ServiceAccounts {
		sa := f.ServiceAccounts[i].DeepCopy()
		if _, err := cs.CoreV1().ServiceAccounts(sa.Namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating service account %s: %w", sa.Name, err)
		}
	}
	for i := range f.Secrets {
		if _, err := cs.CoreV1().Secrets(f.Secrets[i].Namespace).Create(ctx, f.Secrets[i].DeepCopy(), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating secret: %w", err)
		}
	}
	if err := loadNodes(ctx, cs, f); err != nil {
		return err
	}
	uids := map[types.UID]types.UID{} // fixture UID → server UID
	for i := range f.Deployments {
		d := f.Deployments[i].DeepCopy()
		old := d.UID
		d.UID, d.CreationTimestamp = "", metav1.Time{}
		got, err := cs.AppsV1().Deployments(d.Namespace).Create(ctx, d, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating deployment: %w", err)
		}
		uids[old] = got.UID
	}
	fixOwners := func(m *metav1.ObjectMeta) {
		for j := range m.OwnerReferences {
			if u, ok := uids[m.OwnerReferences[j].UID]; ok {
				m.OwnerReferences[j].UID = u
			}
		}
	}
	for i := range f.ReplicaSets {
		rs := f.ReplicaSets[i].DeepCopy()
		old := rs.UID
		rs.UID, rs.CreationTimestamp = "", metav1.Time{}
		fixOwners(&rs.ObjectMeta)
		got, err := cs.AppsV1().ReplicaSets(rs.Namespace).Create(ctx, rs, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating replicaset: %w", err)
		}
		uids[old] = got.UID
	}
	for i := range f.Pods {
		p := f.Pods[i].DeepCopy()
		old := p.UID
		status := p.Status
		p.UID, p.CreationTimestamp, p.Status = "", metav1.Time{}, corev1.PodStatus{}
		fixOwners(&p.ObjectMeta)
		got, err := cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating pod %s: %w", p.Name, err)
		}
		uids[old] = got.UID
		got.Status = status
		if _, err := cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("updating pod status %s: %w", p.Name, err)
		}
	}
	for i := range f.Events {
		e := &f.Events[i]
		reg := e.InvolvedObject
		if u, ok := uids[reg.UID]; ok {
			reg.UID = u
		} else if reg.Kind == "Node" {
			reg.UID = ""
		}
		ev := &eventsv1.Event{
			ObjectMeta:          metav1.ObjectMeta{Name: e.Name, Namespace: e.Namespace},
			EventTime:           metav1.NewMicroTime(e.FirstTimestamp.Time),
			ReportingController: "kubernetes.io/" + e.Source.Component,
			ReportingInstance:   e.Source.Component + "-" + reg.Name,
			Action:              actionOf(e.Reason),
			Reason:              e.Reason,
			Regarding:           reg,
			Note:                e.Message,
			Type:                e.Type,
		}
		if e.Count > 1 {
			ev.Series = &eventsv1.EventSeries{Count: e.Count, LastObservedTime: metav1.NewMicroTime(e.LastTimestamp.Time)}
		}
		if _, err := cs.EventsV1().Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating event %s %s: %w", e.Reason, reg.Name, err)
		}
	}
	return nil
}

func actionOf(reason string) string {
	switch reason {
	case "Pulling", "Failed", "BackOff", "Pulled":
		return "Pulling"
	case "Scheduled":
		return "Binding"
	case "TriggeredScaleUp":
		return "ScaleUp"
	}
	return "Observed"
}

func loadNodes(ctx context.Context, cs kubernetes.Interface, f *Fixture) error {
	var prev time.Time
	for i := range f.Nodes {
		n := f.Nodes[i].DeepCopy()
		if i > 0 && n.CreationTimestamp.After(prev) {
			waitNextSecond(ctx)
		}
		prev = n.CreationTimestamp.Time
		status := n.Status
		n.CreationTimestamp, n.Status = metav1.Time{}, corev1.NodeStatus{}
		got, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating node %s: %w", n.Name, err)
		}
		got.Status = status
		if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("updating node status %s: %w", n.Name, err)
		}
	}
	return nil
}

// waitNextSecond returns once the wall clock has moved to the next second,
// so that the next object's creationTimestamp (second resolution) is later.
func waitNextSecond(ctx context.Context) {
	start := time.Now().Truncate(time.Second)
	for time.Now().Truncate(time.Second).Equal(start) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}
