package clustercmd

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pullpath/pullpath/internal/cli"
	"github.com/pullpath/pullpath/internal/cluster/clustertest"
	"github.com/pullpath/pullpath/internal/monitor"
	"github.com/pullpath/pullpath/internal/verdict"
)

// statusCanary is a bearer token in an agent's condition message: no
// output of monitor status may show it.
const statusCanary = "eyJhbGciOiJIUzI1NiJ9.eyJtb25pdG9yIjoiY2FuYXJ5In0.c3RhdHVzLWNhbmFyeS1zaWc"

// TestMonitorStatus runs `pullpath monitor status` against a real API server
// whose nodes carry PullPathReady conditions as the agents set them (built
// with monitor.NodeCondition from verdicts), in four pools: healthy, broken
// with the image running nowhere, broken but running it, and unreported.
// Subtests check every output format against the same server
// (monitor_output_test.go).
func TestMonitorStatus(t *testing.T) {
	srv := clustertest.Start(t)
	ctx := context.Background()
	cs := srv.Clientset
	timeout := verdictFor("route.timeout")
	// What an agent's evidence could carry, had its redactor missed it.
	timeout.Summary += " (Authorization: Bearer " + statusCanary + ")"
	broken := monitor.NodeCondition([]monitor.Result{{Target: "app", Verdict: timeout}})
	ok := monitor.NodeCondition([]monitor.Result{{Target: "app", Verdict: verdictFor("")}})
	for _, n := range []struct {
		name, pool string
		cond       *monitor.Condition
	}{
		{"aks-a-0", "a", &ok}, {"aks-a-1", "a", &ok}, {"aks-b-0", "b", &broken}, {"aks-c-0", "c", &broken}, {"aks-d-0", "d", nil},
	} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: map[string]string{"kubernetes.azure.com/agentpool": n.pool}}}
		created, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n.cond != nil {
			now := metav1.NewTime(time.Now())
			created.Status.Conditions = []corev1.NodeCondition{{Type: monitor.ConditionType, Status: corev1.ConditionStatus(n.cond.Status),
				Reason: n.cond.Reason, Message: n.cond.Message, LastHeartbeatTime: now, LastTransitionTime: now}}
			if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A running pod of the watched image on pool c only.
	// No controller manager here to make the default service account.
	if _, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app-1", Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: "aks-c-0", Containers: []corev1.Container{{Name: "app", Image: "reg.example/team/app:1.0"}}}}
	p, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = corev1.PodRunning
	if _, err := cs.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	var out, errb bytes.Buffer
	code := cli.Run(ctx, cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb},
		[]string{"pullpath", "monitor", "status", "--kubeconfig", srv.Kubeconfig, "--image", "reg.example/team/app:1.0", "-o", "json"}, NewCmdMonitor)
	if code != cli.ExitFailure {
		t.Fatalf("exit %d, want 1 (two pools broken); stderr %s", code, errb.String())
	}
	var st monitor.Status
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want := map[string]string{"a": monitor.PoolHealthy, "b": monitor.PoolBroken, "c": monitor.PoolBroken, "d": monitor.PoolUnknown}
	if len(st.Pools) != 4 {
		t.Fatalf("pools: %+v", st.Pools)
	}
	for _, p := range st.Pools {
		if p.State != want[p.Name] {
			t.Errorf("pool %s: %s, want %s", p.Name, p.State, want[p.Name])
		}
	}
	b, c := st.Pools[1], st.Pools[2]
	if b.Cause != "route.timeout" || b.Owner != "network" || b.Since == "" || !strings.Contains(b.Warning, "next scale-up") {
		t.Errorf("pool b: %+v", b)
	}
	if c.WatchedPods != 1 || strings.Contains(c.Warning, "next scale-up") {
		t.Errorf("pool c runs the image: %+v", c)
	}

	out.Reset()
	code = cli.Run(ctx, cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb},
		[]string{"pullpath", "monitor", "status", "--kubeconfig", srv.Kubeconfig}, NewCmdMonitor)
	if code != cli.ExitFailure || !strings.Contains(out.String(), "route.timeout") || !strings.Contains(out.String(), "unknown") {
		t.Errorf("text status, exit %d:\n%s", code, out.String())
	}
	t.Logf("monitor status:\n%s", out.String())
	if strings.Contains(out.String()+errb.String(), statusCanary) {
		t.Errorf("text status shows the token of a condition message")
	}
	testMonitorStatusFormats(t, srv.Kubeconfig)
}

func verdictFor(cause string) verdict.Verdict {
	if cause == "" {
		return verdict.OKVerdict("ok")
	}
	return verdict.FromError(verdict.Errorf(cause, verdict.RoleRegistry, "reg.example:443", "dial tcp 198.18.10.5:443: i/o timeout"))
}
