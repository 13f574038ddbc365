package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/pullpath/pullpath/internal/cluster/clustertest"
	"github.com/pullpath/pullpath/internal/cluster/kube"
	"github.com/pullpath/pullpath/internal/verdict"
)

// probePullMessage is what the kubelet reports when a node cannot pull the
// probe's own image from the same registry.
const probePullMessage = `rpc error: code = Unknown desc = failed to pull and unpack image "myacr.azurecr.io/tools/pullpath:v1": failed to resolve reference "myacr.azurecr.io/tools/pullpath:v1": failed to do request: Head "https://myacr.azurecr.io/v2/tools/pullpath/manifests/v1": dial tcp 10.1.2.3:443: i/o timeout`

// TestAPIServer runs diagnose against a real kube-apiserver and etcd loaded
// with the AKS fixture.
func TestAPIServer(t *testing.T) {
	srv := clustertest.Start(t)
	ctx := context.Background()
	f := clustertest.AKS(time.Now())
	if err := clustertest.Load(ctx, srv.Clientset, f); err != nil {
		t.Fatalf("loading the fixture: %v", err)
	}
	// The code under test reads and writes through pullpath's own client
	// (kube.Client, as the binary builds it); the fixture and the fake job
	// controller use client-go's clientset.
	kc, err := NewClientset(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	deploy := WorkloadRef{Kind: KindDeployment, Name: clustertest.Deployment, Namespace: clustertest.Namespace}

	t.Run("deployment", func(t *testing.T) {
		r, err := Diagnose(ctx, kc, deploy, DiagnoseOptions{}, WithClassifier(classify))
		if err != nil {
			t.Fatalf("Diagnose: %v", err)
		}
		if r.Verdict.Cause != "route.timeout" || r.Node != clustertest.NewNode || r.Trigger.Kind != TriggerScaleUp {
			t.Errorf("verdict %s, node %s, trigger %s; want route.timeout on %s after a scale-up", r.Verdict.Cause, r.Node, r.Trigger.Kind, clustertest.NewNode)
		}
		if diff := poolDiff(r, map[string]PoolStatus{"system": PoolIneligible, "user1": PoolCachedOnly, "user2": PoolBroken, "armpool": PoolUntested}); diff != "" {
			t.Error(diff)
		}
		if len(r.Cache.Cached) != 3 || len(r.Replicas) != 3 {
			t.Errorf("cached nodes %v, replicas %d; want 3 and 3", r.Cache.Cached, len(r.Replicas))
		}
		if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "cap") {
			t.Errorf("notes = %q, want only the image-list cap note (nothing unreadable)", r.Notes)
		}
	})

	t.Run("bare pod", func(t *testing.T) {
		r, err := Diagnose(ctx, kc, WorkloadRef{Kind: KindPod, Name: clustertest.BarePod, Namespace: clustertest.Namespace}, DiagnoseOptions{}, WithClassifier(classify))
		if err != nil {
			t.Fatalf("Diagnose: %v", err)
		}
		if r.Verdict.Layer != verdict.LayerAuth || !r.Identity.Relevant {
			t.Errorf("verdict %+v, identity relevant %v; want auth and relevant", r.Verdict, r.Identity.Relevant)
		}
	})

	t.Run("not found", func(t *testing.T) {
		_, err := Diagnose(ctx, kc, WorkloadRef{Kind: KindStatefulSet, Name: "nope", Namespace: clustertest.Namespace}, DiagnoseOptions{})
		if err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("Diagnose(missing) error = %v, want not found", err)
		}
	})

	t.Run("probe jobs as stored", func(t *testing.T) {
		stop := fakeJobController(t, srv.Clientset, clustertest.Namespace, "ErrImagePull", probePullMessage, "")
		defer stop()
		po := &ProbeOptions{Image: "myacr.azurecr.io/tools/pullpath:v1", Keep: true, UsePullSecret: true, Poll: 100 * time.Millisecond, Wait: time.Minute, RunID: "kept0001"}
		r, err := Diagnose(ctx, kc, deploy, DiagnoseOptions{Probe: po}, WithClassifier(classify))
		if err != nil {
			t.Fatalf("Diagnose --probe: %v", err)
		}
		targets := ProbeTargets(r)
		if len(targets) != 4 {
			t.Fatalf("probe targets = %+v, want 4", targets)
		}
		for _, tg := range targets {
			j, err := srv.Clientset.BatchV1().Jobs(clustertest.Namespace).Get(ctx, jobName("kept0001", tg.Node), metav1.GetOptions{})
			if err != nil {
				t.Fatalf("probe job for %s: %v", tg.Node, err)
			}
			// The fixture's nodes run Ubuntu with containerd 1.7.22: the
			// Job tells the probe the version the kubelet reported.
			checkProbeJob(t, j, tg.Node, tg.Platform, "acr-pull")
			if args := strings.Join(j.Spec.Template.Spec.Containers[0].Args, " "); !strings.Contains(args, "--runtime-version containerd://1.7.22-1") {
				t.Errorf("probe job for %s: args %q lack the node's runtime version", tg.Node, args)
			}
			nd := findNode(r, tg.Node)
			if nd == nil || nd.Probe == nil || nd.Probe.Status != ProbeImagePull || nd.Verdict == nil || nd.Verdict.Cause != "route.timeout" {
				t.Errorf("node %s probe = %+v, want the probe image pull failure classified as route.timeout", tg.Node, nd)
			}
		}
		// With the probe failing on user1 too, its replicas are proven
		// cache-only and the pool is broken.
		if diff := poolDiff(r, map[string]PoolStatus{"system": PoolIneligible, "user1": PoolBroken, "user2": PoolBroken, "armpool": PoolBroken}); diff != "" {
			t.Error(diff)
		}
		for _, rp := range r.Replicas {
			if !rp.CacheOnly || !strings.HasPrefix(rp.Basis, "the probe on ") || !strings.Contains(rp.Basis, "fails") {
				t.Errorf("replica %+v: want proven cache-only", rp)
			}
		}
		deleted, err := Cleanup(ctx, kc, clustertest.Namespace, "")
		if err != nil || len(deleted) != 4 {
			t.Errorf("Cleanup = %v, %v; want the 4 kept jobs", deleted, err)
		}
		assertNoProbeJobs(t, srv.Clientset)
	})

	t.Run("probe pod in back-off: its event names the failure", func(t *testing.T) {
		stop := fakeJobController(t, srv.Clientset, clustertest.Namespace, "ImagePullBackOff",
			`Back-off pulling image "ghcr.io/pullpath/pullpath:v1"`,
			`Failed to pull image "ghcr.io/pullpath/pullpath:v1": rpc error: code = Unknown desc = failed to pull and unpack image "ghcr.io/pullpath/pullpath:v1": failed to resolve reference "ghcr.io/pullpath/pullpath:v1": failed to do request: Head "https://ghcr.io/v2/pullpath/pullpath/manifests/v1": dial tcp 140.82.121.34:443: i/o timeout`)
		defer stop()
		po := &ProbeOptions{Image: "ghcr.io/pullpath/pullpath:v1", Poll: 100 * time.Millisecond, Wait: time.Minute, RunID: "backoff1"}
		r, err := Diagnose(ctx, kc, deploy, DiagnoseOptions{Probe: po}, WithClassifier(classify))
		if err != nil {
			t.Fatalf("Diagnose --probe: %v", err)
		}
		nd := findNode(r, clustertest.NewNode)
		if nd == nil || nd.Probe == nil || nd.Probe.Status != ProbeImagePull || nd.Probe.Verdict.Cause != "route.timeout" || nd.Probe.SameRegistry {
			t.Fatalf("probe = %+v, want the probe image pull failure from the event, another registry", nd)
		}
		// Another registry: evidence about the node, not a verdict on the
		// app's registry, so the node keeps its pod's verdict.
		if nd.Verdict == nil || nd.Verdict.Cause != "route.timeout" || !strings.Contains(nd.Probe.Error, "ghcr.io") {
			t.Errorf("node verdict %+v, probe error %q", nd.Verdict, nd.Probe.Error)
		}
		if p := findNode(r, "aks-armpool-45678901-vmss000000"); p == nil || p.Verdict != nil {
			t.Errorf("armpool node verdict = %+v, want none (the probe image's registry is not the app's)", p)
		}
		assertNoProbeJobs(t, srv.Clientset)
	})

	t.Run("ctrl-c removes the jobs", func(t *testing.T) {
		// No job controller: the probes never start, and the user gives up.
		cctx, cancel := context.WithCancel(ctx)
		go func() {
			for cctx.Err() == nil {
				l, err := srv.Clientset.BatchV1().Jobs(clustertest.Namespace).List(cctx, metav1.ListOptions{LabelSelector: LabelRun + "=ctrlc001"})
				if err == nil && len(l.Items) == 4 {
					cancel()
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
		}()
		po := &ProbeOptions{Image: "myacr.azurecr.io/tools/pullpath:v1", Poll: 100 * time.Millisecond, Wait: 5 * time.Minute, RunID: "ctrlc001"}
		r, err := Diagnose(cctx, kc, deploy, DiagnoseOptions{Probe: po}, WithClassifier(classify))
		cancel()
		if err == nil || r == nil {
			t.Fatalf("Diagnose after cancel = %v, %v; want a partial report and an error", r, err)
		}
		assertNoProbeJobs(t, srv.Clientset)
	})

	t.Run("least privilege rbac from deploy/", func(t *testing.T) {
		applyManifests(t, srv.Clientset, "../../deploy/rbac.yaml", "")
		sa := "system:serviceaccount:pullpath:pullpath"
		asSA := impersonate(t, srv.Config, sa)
		waitAllowed(func() error {
			_, err := asSA.AppsV1().Deployments(clustertest.Namespace).Get(ctx, clustertest.Deployment, metav1.GetOptions{})
			return err
		})

		r, err := Diagnose(ctx, asSA, deploy, DiagnoseOptions{}, WithClassifier(classify))
		if err != nil {
			t.Fatalf("Diagnose as %s: %v", sa, err)
		}
		if len(r.Notes) != 1 {
			t.Errorf("notes = %q, want only the image-list cap note: the read role must cover every read", r.Notes)
		}
		for _, ps := range r.Identity.PullSecrets {
			if ps.Readable || !strings.Contains(ps.Problem, "not allowed to read secrets") {
				t.Errorf("pull secret %+v: want unreadable without the secrets role", ps)
			}
		}
		if _, err := asSA.CoreV1().Secrets(clustertest.Namespace).Get(ctx, "acr-pull", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("get secret without the secrets role: %v, want forbidden", err)
		}
		// --probe without the probe role fails to create jobs, clearly.
		po := &ProbeOptions{Image: "myacr.azurecr.io/tools/pullpath:v1", Poll: 100 * time.Millisecond, Wait: 10 * time.Second, RunID: "rbac0001"}
		r, _ = Diagnose(ctx, asSA, deploy, DiagnoseOptions{Probe: po}, WithClassifier(classify))
		if nd := findNode(r, clustertest.NewNode); nd == nil || nd.Probe == nil || nd.Probe.Status != ProbeError || !strings.Contains(nd.Probe.Error, "forbidden") {
			t.Errorf("probe without the probe role = %+v, want a forbidden error", nd)
		}

		applyManifests(t, srv.Clientset, "../../deploy/probe-namespace.yaml", clustertest.Namespace)
		waitAllowed(func() error {
			_, err := asSA.CoreV1().Secrets(clustertest.Namespace).Get(ctx, "acr-pull", metav1.GetOptions{})
			return err
		})
		stop := fakeJobController(t, srv.Clientset, clustertest.Namespace, "ErrImagePull", probePullMessage, "")
		defer stop()
		po = &ProbeOptions{Image: "myacr.azurecr.io/tools/pullpath:v1", UsePullSecret: true, Poll: 100 * time.Millisecond, Wait: time.Minute, RunID: "rbac0002"}
		r, err = Diagnose(ctx, asSA, deploy, DiagnoseOptions{Probe: po}, WithClassifier(classify))
		if err != nil {
			t.Fatalf("Diagnose --probe as %s: %v", sa, err)
		}
		for _, ps := range r.Identity.PullSecrets {
			if !ps.Readable {
				t.Errorf("pull secret %s unreadable with the secrets role bound", ps.Name)
			}
		}
		if nd := findNode(r, clustertest.NewNode); nd == nil || nd.Probe == nil || nd.Probe.Status != ProbeImagePull {
			t.Errorf("probe with the probe role = %+v, want it to run", nd)
		}
		assertNoProbeJobs(t, srv.Clientset)
	})
}

// waitAllowed polls get until it is no longer forbidden, for at most 20 s:
// the RBAC authorizer sees new bindings through an informer, a moment after
// they are created.
func waitAllowed(get func() error) {
	deadline := time.Now().Add(20 * time.Second)
	for apierrors.IsForbidden(get()) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
}

func findNode(r *Report, name string) *Node {
	if r == nil {
		return nil
	}
	for i := range r.Nodes {
		if r.Nodes[i].Name == name {
			return &r.Nodes[i]
		}
	}
	return nil
}

func poolDiff(r *Report, want map[string]PoolStatus) string {
	got := map[string]PoolStatus{}
	for _, p := range r.Pools {
		got[p.Name] = p.Status
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		return fmt.Sprintf("pool statuses = %v, want %v", got, want)
	}
	return ""
}

func assertNoProbeJobs(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	l, err := cs.BatchV1().Jobs(clustertest.Namespace).List(context.Background(), metav1.ListOptions{LabelSelector: LabelManagedBy + "=pullpath"})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range l.Items {
		if j.DeletionTimestamp == nil {
			t.Errorf("probe job %s left behind", j.Name)
		}
	}
}

// fakeJobController stands in for the job controller and the kubelet, which
// this test cluster does not run: for every probe Job it creates the pod the
// controller would, and reports what a kubelet reports when the node cannot
// pull the probe image.
func fakeJobController(t *testing.T, cs kubernetes.Interface, ns, reason, pullMessage, eventMessage string) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		made := map[string]bool{}
		for ctx.Err() == nil {
			jobs, err := cs.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelManagedBy + "=pullpath"})
			if err == nil {
				for _, j := range jobs.Items {
					if made[j.Name] || j.DeletionTimestamp != nil {
						continue
					}
					made[j.Name] = true
					p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: j.Name + "-x7k2p", Namespace: ns, Labels: j.Spec.Template.Labels, Annotations: j.Spec.Template.Annotations},
						Spec: *j.Spec.Template.Spec.DeepCopy()}
					p.Labels["job-name"] = j.Name
					got, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
					if err != nil {
						t.Errorf("fake job controller: creating pod: %v", err)
						continue
					}
					got.Status = corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
						Name: "probe", Image: p.Spec.Containers[0].Image,
						State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: pullMessage}},
					}}}
					if eventMessage != "" {
						now := metav1.Now()
						ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: got.Name + ".failed", Namespace: ns},
							InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: got.Name, UID: got.UID},
							Reason:         "Failed", Type: "Warning", Message: eventMessage, Source: corev1.EventSource{Component: "kubelet"},
							FirstTimestamp: now, LastTimestamp: now, Count: 1}
						if _, err := cs.CoreV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{}); err != nil && ctx.Err() == nil {
							t.Errorf("fake job controller: event: %v", err)
						}
					}
					if _, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil && ctx.Err() == nil {
						t.Errorf("fake job controller: pod status: %v", err)
					}
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return func() {
		cancel()
		wg.Wait()
		_ = cs.CoreV1().Pods(ns).DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: LabelManagedBy + "=pullpath"})
	}
}

func impersonate(t *testing.T, cfg *rest.Config, user string) kube.Interface {
	t.Helper()
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:pullpath", "system:authenticated"}}
	cs, err := NewClientset(c)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// applyManifests creates the objects of a deploy/ file.
func applyManifests(t *testing.T, cs kubernetes.Interface, file, wantNamespace string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Clean(file))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
		if err != nil {
			t.Fatalf("%s: decoding: %v", file, err)
		}
		switch o := obj.(type) {
		case *corev1.Namespace:
			_, err = cs.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{})
		case *corev1.ServiceAccount:
			_, err = cs.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRole:
			_, err = cs.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRoleBinding:
			_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.RoleBinding:
			if wantNamespace != "" && o.Namespace != wantNamespace {
				t.Fatalf("%s: RoleBinding in %s, want %s", file, o.Namespace, wantNamespace)
			}
			_, err = cs.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		default:
			t.Fatalf("%s: unexpected object %T", file, obj)
		}
		if err != nil {
			t.Fatalf("%s: creating %T: %v", file, obj, err)
		}
	}
}

func stripComments(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
