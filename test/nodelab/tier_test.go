package nodelab_test

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/pullpath/pullpath/internal/cluster"
	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/tiers"
	"github.com/pullpath/pullpath/test/netlab/minireg"
	"github.com/pullpath/pullpath/test/nodelab"
)

var update = flag.Bool("update", false, "rewrite testdata/kubelet-messages.json from the kubelets' own text")

const (
	mcrHost    = "mcr.nodelab.test"
	pauseImage = mcrHost + "/oss/kubernetes/pause:3.10"
	probeImage = mcrHost + "/pullpath/pullpath-node:test"
	appRepo    = "team/shop"
	namespace  = "shop"
	imageV1    = "AKSUbuntu-2204gen2containerd-202409.23.0"
)

// world is one running tier: network, registries, control plane, nodes.
type world struct {
	t     *testing.T
	net   *nodelab.Net
	lab   *lab.Lab
	cp    *nodelab.ControlPlane
	cs    kubernetes.Interface
	bin   string // tools/kube binaries
	tools string // pullpath, probe and pause binaries
	files nodelab.NodeFiles
	nodes map[string]*nodelab.Node
	image string
	pause v1.Image // the sandbox image MCR serves, for ImportImage
	// probeImg is the probe image MCR serves; pushMCR pushes another.
	probeImg v1.Image
	pushMCR  func(ctx context.Context, ref string, img v1.Image) error
	events   []recorded
	start    time.Time

	last   *cluster.Report
	probed map[string]*cluster.Node
}

// recorded is one message a kubelet wrote, kept as a golden input for
// explain.
type recorded struct {
	Scenario string `json:"scenario"`
	Pool     string `json:"pool"`
	Reason   string `json:"reason"`
	Message  string `json:"message"`
	// Layer and Role are what the probe Job on that pool found.
	Layer string `json:"layer"`
	Cause string `json:"cause"`
	Role  string `json:"role"`
}

func moduleRoot(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// buildTools builds pullpath (for diagnose), the probe image's binary (the
// slim cmd/pullpath-node where it exists, else the nolab build) and pause,
// once per test binary: every world of the package uses the same three
// (linking pullpath alone takes tens of seconds). TestMain removes them.
func buildTools(t *testing.T) string {
	t.Helper()
	toolsOnce.Do(func() { toolsDir, toolsErr = buildToolsOnce(moduleRoot(t)) })
	if toolsErr != nil {
		t.Fatal(toolsErr)
	}
	return toolsDir
}

var (
	toolsOnce sync.Once
	toolsDir  string
	toolsErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if toolsDir != "" {
		os.RemoveAll(toolsDir)
	}
	os.Exit(code)
}

func buildToolsOnce(root string) (string, error) {
	dir, err := os.MkdirTemp("", "nodelab-tools-")
	if err != nil {
		return "", err
	}
	probePkg, tags := "./cmd/pullpath", []string{"-tags", "nolab"}
	if _, err := os.Stat(filepath.Join(root, "cmd", "pullpath-node")); err == nil {
		probePkg, tags = "./cmd/pullpath-node", nil
	}
	for _, b := range []struct {
		out  string
		args []string
	}{
		{"pullpath", []string{"./cmd/pullpath"}},
		{"probe", append(tags, probePkg)},
		{"pause", []string{"./test/nodelab/testdata/pause"}},
	} {
		args := append([]string{"build", "-trimpath", "-o", filepath.Join(dir, b.out)}, b.args...)
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return dir, fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return dir, nil
}

func startWorld(t *testing.T, ctx context.Context, nodeNames []string) *world {
	tiers.Require(t, tiers.Nodelab)
	w := &world{t: t, bin: os.Getenv(nodelab.EnvBin), nodes: map[string]*nodelab.Node{}, start: time.Now()}
	_ = nodelab.Sweep(ctx)
	w.tools = buildTools(t)
	t.Logf("built pullpath, the probe binary and pause in %v", time.Since(w.start).Round(time.Millisecond))
	n, err := nodelab.NewNet(ctx)
	if err != nil {
		t.Fatalf("NewNet: %v", err)
	}
	w.net = n
	t.Cleanup(func() {
		for _, nd := range w.nodes {
			if t.Failed() {
				t.Log(nd.Logs(3000))
			}
			nd.Stop()
		}
		if w.cp != nil {
			if t.Failed() {
				t.Log(w.cp.Logs(3000))
			}
			w.cp.Stop()
		}
		if w.lab != nil {
			w.lab.Close()
		}
		if err := n.Close(); err != nil {
			t.Errorf("closing the net: %v", err)
		}
	})

	// The registry side: the embedded lab inside the registry and DNS
	// namespaces, and MCR serving the pause and probe images.
	l, err := lab.Start(ctx, lab.Options{
		Addrs: lab.Addrs{Registry: nodelab.Registry, Auth: nodelab.Auth, Blob: nodelab.Blob, Mirror: nodelab.Mirror,
			Dead: nodelab.Dead, DNS: nodelab.DNS, DNS2: nodelab.DNS2, DeadDNS: nodelab.DeadDNS},
		Listen: n.Listen, ListenPacket: n.ListenPacket, DialContext: n.DialContext,
		Dir: filepath.Join(n.Dir, "lab"), PublicAddr: nodelab.Public, HTTPSPort: 443, DNSPort: 53,
	})
	if err != nil {
		t.Fatalf("starting the lab: %v", err)
	}
	w.lab = l
	t.Logf("embedded lab up in the registry and DNS namespaces after %v", time.Since(w.start).Round(time.Millisecond))
	// The resolver of a network not linked to the private zone.
	pv, err := n.ServePublicView()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pv.Close() })
	ca, err := minireg.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.Issue(mcrHost)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := n.Listen("tcp", nodelab.MCR.String()+":443")
	if err != nil {
		t.Fatal(err)
	}
	srv := minireg.Serve(ln, cert)
	t.Cleanup(func() { srv.Close() })
	dialMCR := func(ctx context.Context, network, _ string) (net.Conn, error) {
		return n.MCR.DialContext(ctx, network, nodelab.MCR.String()+":443")
	}
	pause, err := nodelab.BinaryImage(filepath.Join(w.tools, "pause"), "/pause")
	if err != nil {
		t.Fatal(err)
	}
	w.pause = pause
	probeImg, err := nodelab.BinaryImage(filepath.Join(w.tools, "probe"), "/pullpath")
	if err != nil {
		t.Fatal(err)
	}
	w.probeImg = probeImg
	w.pushMCR = func(ctx context.Context, ref string, img v1.Image) error {
		return nodelab.PushTo(ctx, ref, img, dialMCR, ca.Pool())
	}
	for _, im := range []struct {
		ref string
		img v1.Image
	}{{pauseImage, pause}, {probeImage, probeImg}} {
		if err := w.pushMCR(ctx, im.ref, im.img); err != nil {
			t.Fatal(err)
		}
	}
	app, err := nodelab.BinaryImage(filepath.Join(w.tools, "pause"), "/app")
	if err != nil {
		t.Fatal(err)
	}
	if w.image, err = l.Push(ctx, appRepo, "1", app); err != nil {
		t.Fatal(err)
	}
	labCA := l.CAPEM
	w.files = nodelab.NodeFiles{
		CABundle: append(append([]byte{}, labCA...), ca.PEM...),
		// The registry's own entry carries its CA: containerd's documented
		// way to give the registry settings. It is not a mirror.
		HostsTOML:    map[string]string{l.Registry: fmt.Sprintf("server = \"https://%[1]s\"\n\n[host.\"https://%[1]s\"]\n  capabilities = [\"pull\", \"resolve\"]\n  ca = \"/etc/containerd/certs.d/%[1]s/ca.crt\"\n", l.Registry)},
		Extra:        map[string][]byte{l.Registry + "/ca.crt": labCA},
		Hosts:        []string{nodelab.MCR.String() + " " + mcrHost},
		SandboxImage: pauseImage,
	}

	// The control plane.
	w.cp, err = nodelab.StartControlPlane(ctx, n, w.bin, nodeNames)
	if err != nil {
		t.Fatalf("starting the control plane: %v", err)
	}
	cfg := &rest.Config{Host: w.cp.URL, BearerToken: w.cp.AdminToken, TLSClientConfig: rest.TLSClientConfig{CAFile: w.cp.CAFile},
		Dial: w.cp.DialContext, Timeout: 20 * time.Second, QPS: 50, Burst: 100}
	if w.cs, err = kubernetes.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	t.Logf("lab, registries and control plane up after %v", time.Since(w.start).Round(time.Millisecond))
	return w
}

// startWorldFor starts a world for the nodes of specs (startWorld) and
// checks, when the test ends, that the machine's sysctls and iptables are
// as before.
func startWorldFor(t *testing.T, ctx context.Context, specs []nodelab.NodeSpec) *world {
	before := nodelab.Snapshot(context.Background())
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	w := startWorld(t, ctx, names)
	t.Cleanup(func() {
		if d := nodelab.Diff(before, nodelab.Snapshot(context.Background())); len(d) > 0 {
			t.Errorf("the tier changed the machine:\n%s", strings.Join(d, "\n"))
		}
	})
	return w
}

// addNode starts a node and waits until it is Ready. fault, when set, runs
// in the node's namespace right after it starts (before any pod lands).
func (w *world) addNode(ctx context.Context, s nodelab.NodeSpec, fault ...[]string) *nodelab.Node {
	w.t.Helper()
	nd, err := w.net.AddNode(ctx, w.cp, w.bin, s, w.files)
	if err != nil {
		w.t.Fatalf("adding node %s: %v", s.Name, err)
	}
	w.nodes[s.Name] = nd
	for _, f := range fault {
		if err := nd.Fault(ctx, f...); err != nil {
			w.t.Fatalf("fault on %s: %v", s.Name, err)
		}
	}
	started := time.Now()
	w.poll(ctx, 90*time.Second, "node "+s.Name+" Ready", func() bool {
		if nd.Exited() {
			w.t.Fatalf("node %s exited:\n%s", s.Name, nd.Logs(4000))
		}
		node, err := w.cs.CoreV1().Nodes().Get(ctx, s.Name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return true
			}
		}
		return false
	})
	w.t.Logf("node %s (pool %s) Ready %v after its kubelet started", s.Name, s.Pool, time.Since(started).Round(time.Millisecond))
	return nd
}

func (w *world) poll(ctx context.Context, limit time.Duration, what string, cond func() bool) {
	w.t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			w.t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// startPullpath starts the pullpath binary inside the control-plane
// namespace with the lab's resolv.conf, the way an operator runs it next
// to the cluster; stdout and stderr go to files named by the returned path
// (+".err").
func (w *world) startPullpath(ctx context.Context, args ...string) (*nodelab.Proc, string) {
	w.t.Helper()
	out := filepath.Join(w.net.Dir, fmt.Sprintf("pullpath-%d.out", time.Now().UnixNano()))
	script := fmt.Sprintf("exec %s \"$@\" >%s 2>%s.err", filepath.Join(w.tools, "pullpath"), out, out)
	p, err := nodelab.Start(ctx, nodelab.Spec{
		NS:    w.net.Control,
		Binds: []nodelab.Bind{{Source: filepath.Join(w.cp.Dir, "resolv.conf"), Target: "/etc/resolv.conf"}, {Source: filepath.Join(w.cp.Dir, "hosts"), Target: "/etc/hosts"}},
		Args:  append([]string{"/bin/sh", "-c", script, "sh", "--kubeconfig", w.cp.AdminKubeconfig}, args...),
		Env:   []string{"PATH=/usr/bin:/bin", "HOME=/root"},
		Log:   out + ".log",
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return p, out
}

// runPullpath runs pullpath (see startPullpath) and returns its stdout,
// stderr and exit code.
func (w *world) runPullpath(ctx context.Context, args ...string) (string, string, int) {
	w.t.Helper()
	p, out := w.startPullpath(ctx, args...)
	code := p.Wait()
	stdout, _ := os.ReadFile(out)
	stderr, _ := os.ReadFile(out + ".err")
	return string(stdout), string(stderr), code
}

func ptr[T any](v T) *T { return &v }

// appDeployment is the workload: one replica per node (required pod
// anti-affinity on the hostname), no toleration for the system pool.
func appDeployment(image string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": "app"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: namespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					AutomountServiceAccountToken:  ptr(false),
					TerminationGracePeriodSeconds: ptr(int64(1)),
					Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
							LabelSelector: &metav1.LabelSelector{MatchLabels: labels}, TopologyKey: "kubernetes.io/hostname",
						}},
					}},
					Containers: []corev1.Container{{Name: "app", Image: image, ImagePullPolicy: corev1.PullIfNotPresent}},
				},
			},
		},
	}
}

func (w *world) pods(ctx context.Context) []corev1.Pod {
	l, err := w.cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=app"})
	if err != nil {
		w.t.Fatal(err)
	}
	return l.Items
}

func running(p *corev1.Pod) bool {
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Running != nil {
			return true
		}
	}
	return false
}

// podEvents returns the kubelet's events about pod.
func (w *world) podEvents(ctx context.Context, pod string) []corev1.Event {
	l, err := w.cs.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod})
	if err != nil {
		w.t.Fatal(err)
	}
	return l.Items
}

// failedPull waits for the kubelet's "Failed to pull image" event on pod.
func (w *world) failedPull(ctx context.Context, pod string) corev1.Event {
	var ev corev1.Event
	w.poll(ctx, 2*time.Minute, "a Failed to pull event on "+pod, func() bool {
		for _, e := range w.podEvents(ctx, pod) {
			if e.Reason == "Failed" && strings.HasPrefix(e.Message, "Failed to pull image") {
				ev = e
				return true
			}
		}
		return false
	})
	return ev
}

// cachedOn reports whether node lists image in its status.images.
func (w *world) cachedOn(ctx context.Context, node, image string) bool {
	n, err := w.cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return false
	}
	for _, im := range n.Status.Images {
		for _, name := range im.Names {
			if name == image {
				return true
			}
		}
	}
	return false
}
