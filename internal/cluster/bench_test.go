package cluster

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pullpath/pullpath/internal/cluster/clustertest"
)

// bigCluster generates a cluster of nodes nodes in 10 pools, each node
// listing 50 images (two names each); the older half of the pools hold the
// app. The deployment has 1,000 replicas, 50 of them failing on new nodes;
// events holds events events, most about other objects, as a namespace of a
// busy cluster would.
func bigCluster(nodes, events int) *Input {
	now := fixtureNow
	in := &Input{
		Workload:    WorkloadRef{Kind: KindDeployment, Name: "app", Namespace: "shop"},
		PullSecrets: map[string]SecretInfo{"acr-pull": {Found: true, Readable: true, Type: corev1.SecretTypeDockerConfigJson, Registries: []string{"myacr.azurecr.io"}}},
	}
	spec := corev1.PodSpec{
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "acr-pull"}},
		Containers:       []corev1.Container{{Name: "app", Image: clustertest.Image}},
		NodeSelector:     map[string]string{"kubernetes.io/os": "linux"},
		Tolerations:      []corev1.Toleration{{Key: "dedicated", Value: "apps", Effect: corev1.TaintEffectNoSchedule}},
	}
	in.Template = &spec
	for i := range nodes {
		pool := i % 10
		created := now.Add(-time.Duration(90-pool*9) * 24 * time.Hour).Add(time.Duration(i) * time.Second)
		imgs := make([]corev1.ContainerImage, 50)
		for j := range imgs {
			imgs[j] = corev1.ContainerImage{Names: []string{
				fmt.Sprintf("myacr.azurecr.io/svc/s%02d@sha256:%064x", j, j),
				fmt.Sprintf("myacr.azurecr.io/svc/s%02d:v%d", j, j),
			}, SizeBytes: int64(1e9 - j)}
		}
		if pool < 5 {
			imgs[49] = corev1.ContainerImage{Names: []string{"myacr.azurecr.io/team/app@" + clustertest.ImageDigest, clustertest.Image}}
		}
		var taints []corev1.Taint
		if pool == 9 {
			taints = []corev1.Taint{{Key: "sku", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
		}
		in.Nodes = append(in.Nodes, corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("aks-pool%d-12345678-vmss%06d", pool, i), CreationTimestamp: metav1.NewTime(created),
				Labels: map[string]string{"kubernetes.azure.com/agentpool": fmt.Sprintf("pool%d", pool), "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
					"kubernetes.azure.com/node-image-version": "AKSUbuntu-2204gen2containerd-202409.23.0"}},
			Spec:   corev1.NodeSpec{Taints: taints},
			Status: corev1.NodeStatus{Images: imgs},
		})
	}
	for i := range 1000 {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-7d9f8c6b5d-%05d", i), Namespace: "shop", CreationTimestamp: metav1.NewTime(now.Add(-time.Duration(1000-i) * time.Minute))}, Spec: *spec.DeepCopy()}
		cs := corev1.ContainerStatus{Name: "app", Image: clustertest.Image}
		if i < 950 {
			p.Spec.NodeName = in.Nodes[(i*10)%nodes].Name // old pools
			cs.ImageID = "myacr.azurecr.io/team/app@" + clustertest.ImageDigest
			cs.State.Running = &corev1.ContainerStateRunning{}
		} else {
			p.Spec.NodeName = in.Nodes[(i*10+7)%nodes].Name // a new pool
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: clustertest.BackOffMessage}
		}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
		in.Pods = append(in.Pods, p)
	}
	for i := range events {
		e := corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("ev-%d", i), Namespace: "shop"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: fmt.Sprintf("other-%d", i%5000)},
			Reason:         "Pulled", Message: `Container image "busybox" already present on machine`,
			FirstTimestamp: metav1.NewTime(now.Add(-time.Duration(i) * time.Second)),
		}
		if i%1000 == 0 {
			p := 950 + (i/1000)%50
			e.InvolvedObject.Name = in.Pods[p].Name
			e.Reason, e.Type, e.Message = "Failed", "Warning", clustertest.FailedPullMessage
		} else if i%1000 == 1 {
			e.InvolvedObject.Name = in.Pods[950+(i/1000)%50].Name
			e.Reason, e.Message = "BackOff", clustertest.BackOffMessage
		}
		in.Events = append(in.Events, e)
	}
	return in
}

// BenchmarkAnalyze measures the pure analysis on 5,000 nodes × 50 listed
// images and 100,000 events.
func BenchmarkAnalyze(b *testing.B) {
	in := bigCluster(5000, 100_000)
	b.ReportAllocs()
	b.ResetTimer()
	var r *Report
	for b.Loop() {
		r = Analyze(in, WithClassifier(classify), WithNow(fixtureNow))
	}
	b.StopTimer()
	if r.Verdict.Cause != "route.timeout" || len(r.Nodes) != 5000 || len(r.Cache.Cached) != 2500 {
		b.Fatalf("unexpected result: %s, %d nodes, %d cached", r.Verdict.Cause, len(r.Nodes), len(r.Cache.Cached))
	}
}

// TestBigClusterShape runs the benchmark's input once as a test, so that a
// change that breaks the analysis at scale fails `go test` too.
func TestBigClusterShape(t *testing.T) {
	r := Analyze(bigCluster(500, 5000), WithClassifier(classify), WithNow(fixtureNow))
	if r.Verdict.Cause != "route.timeout" || len(r.Nodes) != 500 || len(r.Cache.Cached) != 250 || len(r.Pools) != 10 {
		t.Fatalf("verdict %s, nodes %d, cached %d, pools %d; want route.timeout, 500, 250, 10", r.Verdict.Cause, len(r.Nodes), len(r.Cache.Cached), len(r.Pools))
	}
	if len(r.Events) > maxEvents {
		t.Errorf("events = %d, want at most %d", len(r.Events), maxEvents)
	}
}
