package monitor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/pullpath/pullpath/internal/cluster/clustertest"
	"github.com/pullpath/pullpath/internal/schematest"
)

// applyRBAC creates the objects of deploy/monitor/rbac.yaml.
func applyRBAC(t *testing.T, ctx context.Context, cs kubernetes.Interface) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(manifestDir, "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "pullpath"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(b), "\n---") {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatal(err)
		}
		var err error
		switch meta.Kind {
		case "ServiceAccount":
			var o corev1.ServiceAccount
			must(t, yaml.Unmarshal([]byte(doc), &o))
			_, err = cs.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, &o, metav1.CreateOptions{})
		case "ClusterRole":
			var o rbacv1.ClusterRole
			must(t, yaml.Unmarshal([]byte(doc), &o))
			_, err = cs.RbacV1().ClusterRoles().Create(ctx, &o, metav1.CreateOptions{})
		case "ClusterRoleBinding":
			var o rbacv1.ClusterRoleBinding
			must(t, yaml.Unmarshal([]byte(doc), &o))
			_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &o, metav1.CreateOptions{})
		case "Role":
			var o rbacv1.Role
			must(t, yaml.Unmarshal([]byte(doc), &o))
			_, err = cs.RbacV1().Roles(o.Namespace).Create(ctx, &o, metav1.CreateOptions{})
		case "RoleBinding":
			var o rbacv1.RoleBinding
			must(t, yaml.Unmarshal([]byte(doc), &o))
			_, err = cs.RbacV1().RoleBindings(o.Namespace).Create(ctx, &o, metav1.CreateOptions{})
		case "":
			continue
		default:
			t.Fatalf("rbac.yaml has an unexpected %s", meta.Kind)
		}
		if err != nil {
			t.Fatalf("creating a %s: %v", meta.Kind, err)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestAgentNodeCondition runs the agent against a real kube-apiserver with
// the service account and RBAC of deploy/monitor (nothing more), over real
// probes of the embedded lab: the PullPathReady condition follows the pull
// path, transitions post events, and the token can do nothing else.
func TestAgentNodeCondition(t *testing.T) {
	srv := clustertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cs := srv.Clientset
	applyRBAC(t, ctx, cs)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "aks-poola-12345678-vmss000000",
		Labels: map[string]string{"kubernetes.azure.com/agentpool": "poola", "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}}}
	if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A condition of the kubelet's, which the agent's merge must keep.
	created, err := cs.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	exp := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts("pullpath").CreateToken(ctx, "pullpath-monitor", &authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest: %v", err)
	}
	tokenFile := writeTemp(t, "token", tr.Status.Token)
	client, err := NewNodeClient(srv.URL, tokenFile, srv.CAFile, node.Name)
	if err != nil {
		t.Fatal(err)
	}
	// The RBAC authorizer sees new bindings after a moment.
	var n *Node
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if n, err = client.Get(ctx); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatalf("the agent's service account cannot get its node: %v", err)
	}
	if n.Pool() != "poola" {
		t.Errorf("pool from the node's labels = %q, want poola", n.Pool())
	}
	// Least privilege: nothing beyond what deploy/monitor/rbac.yaml lists.
	for _, path := range []string{"/api/v1/secrets", "/api/v1/namespaces/pullpath/pods", "/api/v1/nodes"} {
		if err := client.do(ctx, "GET", path, "", nil, nil); err == nil || !strings.Contains(err.Error(), "403") {
			t.Errorf("GET %s with the agent's token: %v, want 403", path, err)
		}
	}

	l := startLab(t)
	healthy, broken := scenario(t, l, "healthy"), scenario(t, l, "dns-resolver-down")
	a := newAgent(l, healthy.Root, Config{Targets: []Target{{Name: "app", Image: healthy.Image, Platform: healthy.Platform}}, Timeout: Duration(2 * time.Second)})
	a.Client, a.Node = client, node.Name
	a.Coord = &Coordinator{Client: client, Namespace: "pullpath"}
	logs := &lockedBuffer{}
	a.Log = logs
	cond := func() corev1.NodeCondition {
		t.Helper()
		got, err := cs.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range got.Status.Conditions {
			if c.Type == ConditionType {
				return c
			}
		}
		t.Fatalf("node %s has no %s condition: %+v", node.Name, ConditionType, got.Status.Conditions)
		return corev1.NodeCondition{}
	}
	events := func() []corev1.Event {
		t.Helper()
		list, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return list.Items
	}

	a.Round(ctx)
	if c := cond(); c.Status != corev1.ConditionTrue || c.Reason != "PullPathWorks" {
		t.Fatalf("after a healthy round: %+v\n%s", c, logs)
	}
	// The pool's Lease, created and taken with the agent's own RBAC.
	lease, err := cs.CoordinationV1().Leases("pullpath").Get(ctx, LeaseName(a.Pool, "app"), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the pool's Lease: %v\n%s", err, logs)
	}
	if h := lease.Spec.HolderIdentity; h == nil || *h != node.Name || lease.Annotations[annoHeadHolder] != node.Name {
		t.Errorf("the Lease's holders: %v, %q; want %s", lease.Spec.HolderIdentity, lease.Annotations[annoHeadHolder], node.Name)
	}
	if strings.Contains(logs.String(), "instead of the pool's Lease") {
		t.Errorf("the agent fell back from the Leases with deploy/monitor's RBAC:\n%s", logs)
	}
	if n := len(events()); n != 0 {
		t.Errorf("%d events after the first round, want none (no transition yet)", n)
	}

	a.Root = broken.Root
	a.Round(ctx)
	c := cond()
	if c.Status != corev1.ConditionFalse || c.Reason != "DnsUnreachable" || !strings.Contains(c.Message, "cause dns.unreachable owner dns") {
		t.Fatalf("after a broken round: %+v", c)
	}
	since := c.LastTransitionTime
	// An unchanged condition is not written again in the next round; it
	// is after HeartbeatPeriod (the agent's clock moves).
	a.Round(ctx)
	if c := cond(); !c.LastTransitionTime.Equal(&since) || !c.LastHeartbeatTime.Equal(&since) {
		t.Errorf("a second broken round moved the transition time (%v → %v) or the heartbeat (%v), want neither", since, c.LastTransitionTime, c.LastHeartbeatTime)
	}
	later := time.Now().Add(HeartbeatPeriod)
	a.Now = func() time.Time { return later }
	a.Round(ctx)
	if c := cond(); !c.LastTransitionTime.Equal(&since) || !c.LastHeartbeatTime.After(since.Time) {
		t.Errorf("a broken round after HeartbeatPeriod moved the transition time (%v → %v) or not the heartbeat (%v)", since, c.LastTransitionTime, c.LastHeartbeatTime)
	}
	ev := events()
	if len(ev) != 1 || ev[0].Reason != "PullPathBroken" || ev[0].Type != "Warning" || ev[0].InvolvedObject.Name != node.Name || ev[0].InvolvedObject.UID == "" {
		t.Fatalf("events after breaking: %+v", ev)
	}

	// The structured result, written with the agent's RBAC.
	got, err := cs.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	doc := got.Annotations[ResultAnnotation]
	schematest.Validate(t, "MonitorNodeResult", doc)
	if r, ok := ParseNodeResult(doc); !ok || len(r.Targets) != 1 || r.Targets[0].Cause != "dns.unreachable" || r.Targets[0].OK {
		t.Errorf("the node's %s annotation: %s", ResultAnnotation, doc)
	}
	// status, as `pullpath monitor status` folds it: from the annotation,
	// with a condition message it could not parse.
	st := Aggregate([]NodeRecord{{Name: node.Name, Pool: n.Pool(), Condition: &Condition{Type: ConditionType, Status: string(c.Status), Reason: c.Reason,
		Message: "unparsable", LastTransitionTime: c.LastTransitionTime.UTC().Format(time.RFC3339)}, Result: doc, WatchedPods: 0}})
	if p := st.Pools[0]; p.State != PoolBroken || p.Cause != "dns.unreachable" || p.Owner != "dns" {
		t.Errorf("status of the broken pool: %+v", p)
	}

	a.Root = healthy.Root
	a.Round(ctx)
	if c := cond(); c.Status != corev1.ConditionTrue {
		t.Fatalf("after the repair: %+v", c)
	}
	ev = events()
	if len(ev) != 2 {
		t.Fatalf("events after the repair: %d, want 2", len(ev))
	}
	var reasons []string
	for _, e := range ev {
		reasons = append(reasons, e.Reason)
	}
	if !strings.Contains(strings.Join(reasons, ","), "PullPathRepaired") {
		t.Errorf("no PullPathRepaired event: %v", reasons)
	}
	// The kubelet's own condition is untouched by the merge.
	got, _ = cs.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
	kept := false
	for _, c := range got.Status.Conditions {
		kept = kept || (c.Type == corev1.NodeReady && c.Reason == "KubeletReady")
	}
	if len(got.Status.Conditions) != 2 || !kept {
		t.Errorf("node conditions after the agent's patches: %+v", got.Status.Conditions)
	}
}
