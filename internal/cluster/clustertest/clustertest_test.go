package clustertest

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestLoadAKS loads the AKS fixture into a real API server and checks that
// what the server stored is what the fixture says: statuses written,
// owner references resolved, events readable through core/v1 with their
// series, node creation order kept.
func TestLoadAKS(t *testing.T) {
	srv := Start(t)
	ctx := context.Background()
	f := AKS(time.Now())
	if err := Load(ctx, srv.Clientset, f); err != nil {
		t.Fatalf("Load: %v", err)
	}
	cs := srv.Clientset
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != len(f.Nodes) {
		t.Fatalf("nodes = %d, want %d", len(nodes.Items), len(f.Nodes))
	}
	created := map[string]time.Time{}
	for _, n := range nodes.Items {
		created[n.Name] = n.CreationTimestamp.Time
		if n.Name == "aks-user1-23456789-vmss000000" && len(n.Status.Images) == 0 {
			t.Errorf("node %s has no status.images after UpdateStatus", n.Name)
		}
	}
	if !created[NewNode].After(created["aks-user1-23456789-vmss000002"]) || !created[NewNode2].After(created[NewNode]) {
		t.Errorf("node creation order lost: %v", created)
	}
	p, err := cs.CoreV1().Pods(Namespace).Get(ctx, FailingPod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].State.Waiting == nil ||
		p.Status.ContainerStatuses[0].State.Waiting.Reason != "ImagePullBackOff" {
		t.Errorf("pod %s status = %+v, want waiting ImagePullBackOff", FailingPod, p.Status.ContainerStatuses)
	}
	rs, err := cs.AppsV1().ReplicaSets(Namespace).Get(ctx, ReplicaSet, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ctl := metav1.GetControllerOf(p); ctl == nil || ctl.UID != rs.UID {
		t.Errorf("pod controller = %+v, want replicaset uid %s", ctl, rs.UID)
	}
	evs, err := cs.CoreV1().Events(Namespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Pod,involvedObject.name=" + FailingPod})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range evs.Items {
		if e.Message == FailedPullMessage && e.Reason == "Failed" {
			found = true
			if e.Series == nil || e.Series.Count != 4 {
				t.Errorf("event series = %+v, want count 4", e.Series)
			}
		}
	}
	if !found {
		t.Errorf("the detailed Failed event of %s is not readable through core/v1 (%d events)", FailingPod, len(evs.Items))
	}
}
