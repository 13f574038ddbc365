package cluster

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pullpath/pullpath/internal/cluster/clustertest"
)

// TestTriggerPrecedence puts explicit and inferred signals side by side:
// an autoscaler event or the AKS upgrader wins over what node image
// versions and ages suggest.
func TestTriggerPrecedence(t *testing.T) {
	ref := WorkloadRef{Kind: KindDeployment, Name: clustertest.Deployment, Namespace: clustertest.Namespace}
	const newImage = "AKSUbuntu-2204gen2containerd-202411.12.0"
	// inUser1 moves the new nodes into user1 with a newer node image than
	// user1's cached nodes: by inference alone, a pool upgrade.
	inUser1 := func(f *clustertest.Fixture) {
		for i := range f.Nodes {
			if n := &f.Nodes[i]; n.Name == clustertest.NewNode || n.Name == clustertest.NewNode2 {
				n.Labels["kubernetes.azure.com/agentpool"] = "user1"
				n.Labels["kubernetes.azure.com/node-image-version"] = newImage
			}
		}
	}
	// scaleUpNames rewrites the autoscaler events to name group.
	scaleUpNames := func(f *clustertest.Fixture, group string) {
		for i := range f.Events {
			if e := &f.Events[i]; e.Reason == "TriggeredScaleUp" {
				e.Message = strings.ReplaceAll(e.Message, "aks-user2-34567890-vmss", group)
			}
		}
	}
	dropScaleUp := func(f *clustertest.Fixture) {
		f.Events = slices.DeleteFunc(f.Events, func(e corev1.Event) bool { return e.Reason == "TriggeredScaleUp" })
	}
	upgrader := func(f *clustertest.Fixture, node, reason string) {
		at := f.Now.Add(-3*time.Hour - time.Minute)
		f.Events = append(f.Events, corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: node + ".upgrader." + reason, Namespace: "default"},
			InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: node},
			Reason:         reason, Type: "Normal", Message: reason + " node " + node,
			Source:         corev1.EventSource{Component: "upgrader"},
			FirstTimestamp: metav1.NewTime(at), LastTimestamp: metav1.NewTime(at),
		})
	}
	tests := []struct {
		name    string
		mutate  func(f *clustertest.Fixture)
		want    TriggerKind
		detail  []string
		without []string
	}{
		{
			name: "a scale-up event for the pool beats a differing image version, which becomes a note",
			mutate: func(f *clustertest.Fixture) {
				inUser1(f)
				scaleUpNames(f, "aks-user1-23456789-vmss")
			},
			want:   TriggerScaleUp,
			detail: []string{"TriggeredScaleUp: pod triggered scale-up: [{aks-user1-23456789-vmss 0->1 (max: 10)}]", "note: " + clustertest.NewNode + " runs node image " + newImage, "mid-upgrade"},
		},
		{
			name: "a scale-up event for another pool is no evidence: the image version decides",
			mutate: func(f *clustertest.Fixture) {
				inUser1(f)
				scaleUpNames(f, "aks-armpool-45678901-vmss")
			},
			want:   TriggerPoolUpgrade,
			detail: []string{"runs node image " + newImage},
		},
		{
			name: "an upgrader event on the node beats a scale-up event",
			mutate: func(f *clustertest.Fixture) {
				upgrader(f, clustertest.NewNode, "Surge")
			},
			want:   TriggerPoolUpgrade,
			detail: []string{"upgrader Surge on node " + clustertest.NewNode},
		},
		{
			name: "the upgrade-status label on the node beats a scale-up event",
			mutate: func(f *clustertest.Fixture) {
				for i := range f.Nodes {
					if f.Nodes[i].Name == clustertest.NewNode {
						f.Nodes[i].Labels[UpgradeStatusLabel] = "Upgrading"
					}
				}
			},
			want:   TriggerPoolUpgrade,
			detail: []string{UpgradeStatusLabel + "=Upgrading"},
		},
		{
			name: "an upgrader event elsewhere in the pool loses to a scale-up event for this node",
			mutate: func(f *clustertest.Fixture) {
				upgrader(f, clustertest.NewNode2, "Drain")
			},
			want:   TriggerScaleUp,
			detail: []string{"TriggeredScaleUp"},
		},
		{
			name: "an upgrader event elsewhere in the pool without a scale-up event",
			mutate: func(f *clustertest.Fixture) {
				dropScaleUp(f)
				upgrader(f, clustertest.NewNode2, "Upgrade")
			},
			want:   TriggerPoolUpgrade,
			detail: []string{"upgrader Upgrade on node " + clustertest.NewNode2},
		},
		{
			name: "an event named like the upgrader's from another component is no evidence",
			mutate: func(f *clustertest.Fixture) {
				dropScaleUp(f)
				upgrader(f, clustertest.NewNode, "Delete")
				f.Events[len(f.Events)-1].Source.Component = "someone-else"
			},
			want:    TriggerScaleUp,
			detail:  []string{"the 3 node(s) that hold the image"},
			without: []string{"upgrader"},
		},
		{
			name: "Karpenter's Nominated naming the pool's node claim",
			mutate: func(f *clustertest.Fixture) {
				inUser1(f)
				dropScaleUp(f)
				at := f.Now.Add(-3*time.Hour - 2*time.Minute)
				f.Events = append(f.Events, corev1.Event{
					ObjectMeta:     metav1.ObjectMeta{Name: clustertest.FailingPod + ".nominated", Namespace: clustertest.Namespace},
					InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: clustertest.Namespace, Name: clustertest.FailingPod},
					Reason:         "Nominated", Type: "Normal", Message: "Pod should schedule on: nodeclaim/user1-x7k2p",
					Source:         corev1.EventSource{Component: "karpenter"},
					FirstTimestamp: metav1.NewTime(at), LastTimestamp: metav1.NewTime(at),
				})
			},
			want:   TriggerScaleUp,
			detail: []string{"Nominated: Pod should schedule on: nodeclaim/user1-x7k2p", "mid-upgrade"},
		},
		{
			name: "a scale-up event after the node's creation did not create it",
			mutate: func(f *clustertest.Fixture) {
				for i := range f.Events {
					if e := &f.Events[i]; e.Reason == "TriggeredScaleUp" {
						e.FirstTimestamp = metav1.NewTime(f.Now.Add(-time.Hour))
					}
				}
			},
			want:    TriggerScaleUp,
			detail:  []string{"the 3 node(s) that hold the image"},
			without: []string{"TriggeredScaleUp"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := clustertest.AKS(fixtureNow)
			tt.mutate(f)
			r := diagnoseFake(t, f, ref)
			if r.Trigger.Kind != tt.want {
				t.Fatalf("trigger = %+v, want %s", r.Trigger, tt.want)
			}
			for _, d := range tt.detail {
				if !strings.Contains(r.Trigger.Evidence, d) {
					t.Errorf("trigger evidence = %q, want it to contain %q", r.Trigger.Evidence, d)
				}
			}
			for _, d := range tt.without {
				if strings.Contains(r.Trigger.Evidence, d) {
					t.Errorf("trigger evidence = %q, want no %q", r.Trigger.Evidence, d)
				}
			}
		})
	}
}

// TestTriggerSameSecond is the same cluster with the failing node created
// in the same second as the nodes that hold the image, or a second later: creation timestamps have second resolution, so the trigger must
// not depend on which side of a second boundary the nodes came up (it used
// to say none on one run and scale-up on the next).
func TestTriggerSameSecond(t *testing.T) {
	ref := WorkloadRef{Kind: KindDeployment, Name: clustertest.Deployment, Namespace: clustertest.Namespace}
	created := fixtureNow.Add(-10 * time.Second).Truncate(time.Second)
	for _, offset := range []time.Duration{0, time.Second} {
		for _, events := range []bool{true, false} {
			f := clustertest.AKS(fixtureNow)
			for i := range f.Nodes {
				f.Nodes[i].CreationTimestamp = metav1.NewTime(created)
				if f.Nodes[i].Name == clustertest.NewNode {
					f.Nodes[i].CreationTimestamp = metav1.NewTime(created.Add(offset))
				}
			}
			for i := range f.Events {
				if e := &f.Events[i]; e.Reason == "TriggeredScaleUp" {
					e.FirstTimestamp = metav1.NewTime(created.Add(-5 * time.Second))
					if !events {
						e.Reason = "Unrelated"
					}
				}
			}
			r := diagnoseFake(t, f, ref)
			if r.Trigger.Kind != TriggerScaleUp || r.Trigger.Pool != "user2" {
				t.Errorf("offset %v, autoscaler events %v: trigger = %+v, want scale-up in user2", offset, events, r.Trigger)
			}
			if got := strings.Contains(r.Trigger.Evidence, "TriggeredScaleUp"); got != events {
				t.Errorf("offset %v, autoscaler events %v: evidence = %q", offset, events, r.Trigger.Evidence)
			}
		}
	}
}

func TestGroupNamesNode(t *testing.T) {
	nd := &Node{Name: "aks-user2-34567890-vmss000000", Pool: "user2"}
	gke := &Node{Name: "gke-c-pool-1-abcd1234-vvm9", Pool: "pool-1"}
	tests := []struct {
		id   string
		node *Node
		want bool
	}{
		{"aks-user2-34567890-vmss", nd, true},
		{"aks-user2-99999999-vmss", nd, true}, // another scale set of the pool
		{"aks-user1-23456789-vmss", nd, false},
		{"aks-user22-1-vmss", nd, false},
		{"user2", nd, true},
		{"https://www.googleapis.com/compute/v1/projects/p/zones/z/instanceGroups/gke-c-pool-1-abcd1234-grp", gke, true},
		{"https://www.googleapis.com/compute/v1/projects/p/zones/z/instanceGroups/gke-c-pool-2-ffff0000-grp", gke, false},
		{"", nd, false},
	}
	for _, tt := range tests {
		if got := groupNamesNode(tt.id, tt.node); got != tt.want {
			t.Errorf("groupNamesNode(%q, %s) = %v, want %v", tt.id, tt.node.Name, got, tt.want)
		}
	}
}
