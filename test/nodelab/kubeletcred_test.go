package nodelab_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pullpath/pullpath/internal/cluster"
	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/nodeview/credtest"
	"github.com/pullpath/pullpath/test/nodelab"
)

// credNode is one node of TestKubeletCredentialProvider: its kubelet runs
// the test credential provider (internal/nodeview/testdata/credprovider, the
// kubelet's real protocol) in mode, answering with pass.
type credNode struct {
	spec       nodelab.NodeSpec
	mode, pass string
}

// credSpec configures the kubelet of s with a CredentialProviderConfig for
// the provider binary, laid out as on AKS: the config and the provider in
// /var/lib/kubelet (outside the host /etc and /run every probe Job mounts),
// their flags in /etc/default/kubelet's KUBELET_FLAGS. The files live in the
// node's root; its /var/lib and /etc/default are bound over the machine's
// in the node's mount namespace only, so the kubelet, a probe Job's hostPath
// volumes and `probe --root` all read the same files by their node paths.
func credSpec(s nodelab.NodeSpec, provider, registry, user, mode, pass string) nodelab.NodeSpec {
	return credSpecEnv(s, provider, registry, user, mode, pass, nil)
}

// credSpecEnv is credSpec with env added to the provider's entry in the
// config (PP_PASS_FILE, PP_CACHE_DURATION: see the test provider).
func credSpecEnv(s nodelab.NodeSpec, provider, registry, user, mode, pass string, env map[string]string) nodelab.NodeSpec {
	bin, _ := os.ReadFile(provider)
	cfg := credtest.Config(credtest.Provider{MatchImages: []string{registry}, Mode: mode, Key: registry, User: user, Pass: pass})
	for _, k := range slices.Sorted(maps.Keys(env)) {
		cfg += fmt.Sprintf("      - {name: %s, value: %q}\n", k, env[k])
	}
	const cfgPath, binDir = "/var/lib/kubelet/credential-provider-config.yaml", "/var/lib/kubelet/credential-provider"
	flags := []string{"--image-credential-provider-config=" + cfgPath, "--image-credential-provider-bin-dir=" + binDir}
	s.RootFiles = map[string][]byte{
		cfgPath[1:]:                  []byte(cfg),
		binDir[1:] + "/lab-provider": bin,
		"etc/default/kubelet":        []byte("KUBELET_FLAGS=" + strings.Join(flags, " ") + "\n"),
	}
	s.RootExec = []string{binDir[1:] + "/lab-provider"}
	s.RootBinds = []string{"var/lib", "etc/default"}
	s.KubeletArgs = flags
	return s
}

// TestKubeletCredentialProvider is the credential provider on real kubelets: three nodes
// whose kubelets pull a private image with the test credential provider,
// which returns the lab's credentials, wrong ones, or never answers. On each
// node the kubelet's real pull and `pullpath-node probe --as-kubelet` must
// agree on the layer, and the probe names the provider's fault.
func TestKubeletCredentialProvider(t *testing.T) {
	before := nodelab.Snapshot(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	names := []string{"aks-credgood-11111111-vmss000000", "aks-credbad-22222222-vmss000000", "aks-credslow-33333333-vmss000000"}
	w := startWorld(t, ctx, names)
	t.Cleanup(func() {
		if d := nodelab.Diff(before, nodelab.Snapshot(context.Background())); len(d) > 0 {
			t.Errorf("the tier changed the machine:\n%s", strings.Join(d, "\n"))
		}
	})
	provider := credtest.Build(t)
	app, err := nodelab.BinaryImage(filepath.Join(w.tools, "pause"), "/app")
	if err != nil {
		t.Fatal(err)
	}
	image, err := w.lab.Push(ctx, "private/shop", "1", app)
	if err != nil {
		t.Fatal(err)
	}
	const canary = "pp-canary-N0deT13r-secret"
	nodes := []credNode{
		{nodelab.NodeSpec{Name: names[0], Pool: "credgood", NodeImageVersion: imageV1, Mode: "User", Index: 1}, "good", w.lab.Password},
		{nodelab.NodeSpec{Name: names[1], Pool: "credbad", NodeImageVersion: imageV1, Mode: "User", Index: 2}, "good", canary},
		{nodelab.NodeSpec{Name: names[2], Pool: "credslow", NodeImageVersion: imageV1, Mode: "User", Index: 3}, "sleep", w.lab.Password},
	}
	for _, n := range nodes {
		w.addNode(ctx, credSpec(n.spec, provider, w.lab.Registry, w.lab.Username, n.mode, n.pass))
	}
	if _, err := w.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	created := map[string]time.Time{}
	for _, n := range nodes {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app-" + n.spec.Pool, Namespace: namespace},
			Spec: corev1.PodSpec{NodeName: n.spec.Name, AutomountServiceAccountToken: ptr(false), TerminationGracePeriodSeconds: ptr(int64(1)),
				Containers: []corev1.Container{{Name: "app", Image: image, ImagePullPolicy: corev1.PullAlways}}}}
		if _, err := w.cs.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		created[n.spec.Pool] = time.Now()
	}

	// The probes, as a probe Job would run them on each node (its network
	// namespace, the node's root), in parallel with the kubelets' pulls.
	type probed struct {
		out  string
		code int
		ms   time.Duration
	}
	results := make([]probed, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nd := w.nodes[n.spec.Name]
			start := time.Now()
			cmd := nd.NS.Command(ctx, filepath.Join(w.tools, "probe"), "probe", image, "--root", nd.Root, "--as-kubelet", "-o", "json", "--blobs", "head")
			out, err := cmd.Output()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Errorf("probe on %s: %v", n.spec.Name, err)
			}
			results[i] = probed{string(out), code, time.Since(start)}
		}()
	}

	// The kubelets' own outcome for each pod.
	outcome := func(pool string) (corev1.Event, time.Duration) {
		var ev corev1.Event
		w.poll(ctx, 3*time.Minute, "the kubelet's pull of app-"+pool, func() bool {
			for _, e := range w.podEvents(ctx, "app-"+pool) {
				if e.Reason == "Pulled" || (e.Reason == "Failed" && strings.HasPrefix(e.Message, "Failed to pull image")) {
					ev = e
					return true
				}
			}
			return false
		})
		return ev, time.Since(created[pool])
	}
	// kubeletReason is Pulled or Failed, probeCause the probe's verdict
	// cause ("ok" when it works), layer what both say, kubeletCause what
	// explain reads in the kubelet's event. The kubelet's event of the slow
	// provider shows only the anonymous pull that followed its timeout
	// (auth.no-credentials): the probe names the timeout and, in its
	// detail, that same anonymous failure.
	wants := []credWant{{"Pulled", "ok", "none", ""}, {"Failed", "auth.bad-credentials", "auth", "auth.bad-credentials"},
		{"Failed", "auth.provider-timeout", "auth", "auth.no-credentials"}}
	events := make([]corev1.Event, len(nodes))
	for i, n := range nodes {
		ev, took := outcome(n.spec.Pool)
		events[i] = ev
		t.Logf("pool %s: the kubelet's %s after %v: %s", n.spec.Pool, ev.Reason, took.Round(time.Millisecond), ev.Message)
	}
	wg.Wait()
	for i, n := range nodes {
		ev, wt, res := events[i], wants[i], results[i]
		if ev.Reason != wt.kubeletReason {
			t.Errorf("pool %s: the kubelet's event is %s (%s), want %s", n.spec.Pool, ev.Reason, ev.Message, wt.kubeletReason)
		}
		kubeletLayer := "none"
		kubeletCause := ""
		if ev.Reason == "Failed" {
			v := explain.Classify(ev.Message).Verdict
			kubeletLayer, kubeletCause = string(v.Layer), v.Cause
		}
		var rep struct {
			Verdict struct {
				Layer, Cause, Summary string
			} `json:"verdict"`
			Identity           string `json:"identity"`
			CredentialProvider *struct {
				Provider string `json:"provider"`
				Error    string `json:"error"`
				Millis   int64  `json:"ms"`
			} `json:"credential_provider"`
		}
		if err := json.Unmarshal([]byte(res.out), &rep); err != nil {
			t.Errorf("pool %s: probe -o json (exit %d): %v\n%s", n.spec.Pool, res.code, err, res.out)
			continue
		}
		t.Logf("pool %s: probe --as-kubelet (exit %d, %v): %s %s; identity %s; explain on the kubelet's text: %s %s",
			n.spec.Pool, res.code, res.ms.Round(time.Millisecond), rep.Verdict.Layer, rep.Verdict.Cause, rep.Identity, kubeletLayer, kubeletCause)
		if rep.Verdict.Cause != wt.probeCause || rep.Verdict.Layer != wt.layer {
			t.Errorf("pool %s: probe says %s/%s, want %s/%s", n.spec.Pool, rep.Verdict.Layer, rep.Verdict.Cause, wt.layer, wt.probeCause)
		}
		if kubeletLayer != wt.layer {
			t.Errorf("pool %s: explain on the kubelet's message says layer %s, the probe %s: they disagree", n.spec.Pool, kubeletLayer, rep.Verdict.Layer)
		}
		// The cause, not only the layer: a kubelet that ignored the
		// provider and pulled anonymously gives auth.no-credentials.
		if kubeletCause != wt.kubeletCause {
			t.Errorf("pool %s: explain on the kubelet's message gives cause %q, want %q", n.spec.Pool, kubeletCause, wt.kubeletCause)
		}
		if wt.kubeletCause != "" && wt.kubeletCause != wt.probeCause && !strings.Contains(rep.Verdict.Summary, "the anonymous pull then failed: "+wt.kubeletCause) {
			t.Errorf("pool %s: the probe's %s does not say the anonymous pull then failed with %s, as the kubelet's event does: %s", n.spec.Pool, rep.Verdict.Cause, wt.kubeletCause, rep.Verdict.Summary)
		}
		if wt.probeCause == "auth.provider-timeout" && rep.CredentialProvider != nil {
			// The probe waits the kubelet's deadline for the provider, and
			// the kubelet failed the pull about that long after the pod.
			wait := time.Duration(rep.CredentialProvider.Millis) * time.Millisecond
			kubeletWait := ev.FirstTimestamp.Sub(created[n.spec.Pool])
			t.Logf("pool %s: the probe waited %v for the provider, the kubelet's deadline is %v, its event came %v after the pod", n.spec.Pool, wait.Round(time.Millisecond), nodeview.ProviderExecTimeout, kubeletWait.Round(time.Second))
			if d := wait - nodeview.ProviderExecTimeout; d < 0 || d > 3*time.Second {
				t.Errorf("pool %s: the probe waited %v for the provider, want the kubelet's %v (within 3s)", n.spec.Pool, wait, nodeview.ProviderExecTimeout)
			}
			if d := kubeletWait - wait; d < -2*time.Second || d > 15*time.Second {
				t.Errorf("pool %s: the kubelet's event came %v after the pod, the probe's provider wait was %v: more than the pull's few seconds apart", n.spec.Pool, kubeletWait, wait)
			}
		}
		if rep.CredentialProvider == nil || rep.CredentialProvider.Provider != "lab-provider" {
			t.Errorf("pool %s: credential_provider = %+v, want lab-provider run", n.spec.Pool, rep.CredentialProvider)
		}
		for _, secret := range []string{canary, w.lab.Password} {
			if strings.Contains(res.out, secret) {
				t.Errorf("pool %s: the probe's output holds a provider credential", n.spec.Pool)
			}
		}
	}
	// diagnose --probe: its probe Jobs mount only the provider's config
	// file and bin dir (AKS's paths, known from the nodes' labels) and run
	// the provider chrooted into the host root; on every pool they must
	// agree with the probe run on the node above and with the kubelet.
	w.diagnoseAsKubelet(ctx, "pod/app-credbad", nodes, wants, []string{canary, w.lab.Password}, explain.Classify(events[1].Message).Verdict.Cause)

	// The kubelet ran the sleeping provider until its one-minute deadline,
	// then pulled anonymously: explain reads an anonymous 401.
	if ev := events[2]; ev.Reason == "Failed" {
		if c := explain.Classify(ev.Message).Verdict.Cause; c != "auth.no-credentials" {
			t.Errorf("pool credslow: explain on the kubelet's message gives %s, want auth.no-credentials (the anonymous pull after the provider's timeout)", c)
		}
		if took := ev.FirstTimestamp.Sub(created["credslow"]); took < 55*time.Second {
			t.Errorf("pool credslow: the kubelet failed %v after the pod was created, want about a minute (its provider deadline)", took)
		}
	}
}

// credWant is one row's expected outcome (see TestKubeletCredentialProvider).
type credWant struct{ kubeletReason, probeCause, layer, kubeletCause string }

// diagnoseAsKubelet runs `pullpath diagnose REF --probe` and checks that the
// probe Job on each credNode reached the cause and layer of wants (and so
// the kubelet's verdict), with the kubelet credential provider run in the
// Job, that the pools' identities name it, and that no secret is printed.
func (w *world) diagnoseAsKubelet(ctx context.Context, ref string, nodes []credNode, wants []credWant, secrets []string, podCause string) {
	t := w.t
	start := time.Now()
	out, stderr, code := w.runPullpath(ctx, "diagnose", ref, "-n", namespace, "--probe", "--probe-image", probeImage, "--probe-deadline", "100s", "-o", "json")
	t.Logf("diagnose %s --probe: exit %d after %v\n%s", ref, code, time.Since(start).Round(time.Millisecond), stderr)
	for _, secret := range secrets {
		if strings.Contains(out, secret) || strings.Contains(stderr, secret) {
			t.Errorf("diagnose --probe printed a provider credential")
		}
	}
	var rep cluster.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("diagnose -o json: %v\n%s", err, out)
	}
	// The pod-level verdict: the failing pod's node (pool credbad), whose
	// kubelet event explain reads as podCause.
	t.Logf("diagnose %s: verdict %s/%s owner %s on %s", ref, rep.Verdict.Layer, rep.Verdict.Cause, rep.Verdict.Owner, rep.Node)
	if rep.Verdict.OK || rep.Verdict.Cause != podCause || rep.Node != nodes[1].spec.Name {
		t.Errorf("diagnose %s: verdict %s/%s on node %q, want %s (the kubelet's event, explained) on %s", ref, rep.Verdict.Layer, rep.Verdict.Cause, rep.Node, podCause, nodes[1].spec.Name)
	}
	byNode := map[string]*cluster.Node{}
	for i := range rep.Nodes {
		byNode[rep.Nodes[i].Name] = &rep.Nodes[i]
	}
	identity := map[string]string{}
	for _, p := range rep.Pools {
		identity[p.Name] = p.Identity
	}
	for i, n := range nodes {
		nd := byNode[n.spec.Name]
		if nd == nil || nd.Probe == nil {
			t.Errorf("pool %s: no probe ran on %s", n.spec.Pool, n.spec.Name)
			continue
		}
		pr, wt := nd.Probe, wants[i]
		t.Logf("pool %s: the probe Job: %s %s/%s (%s); pool identity %q", n.spec.Pool, pr.Status, pr.Verdict.Layer, pr.Verdict.Cause, pr.Error, identity[n.spec.Pool])
		if pr.Status != cluster.ProbeDone || pr.Report == nil {
			t.Errorf("pool %s: probe Job status %s (%s), want done", n.spec.Pool, pr.Status, pr.Error)
			continue
		}
		cause := pr.Verdict.Cause
		if cause == "" && pr.Verdict.OK {
			cause = "ok"
		}
		if cause != wt.probeCause || string(pr.Verdict.Layer) != wt.layer {
			t.Errorf("pool %s: the probe Job says %s/%s, want %s/%s (as the kubelet and the probe on the node)", n.spec.Pool, pr.Verdict.Layer, pr.Verdict.Cause, wt.layer, wt.probeCause)
		}
		if cp := pr.Report.CredentialProvider; cp == nil || cp.Provider != "lab-provider" {
			t.Errorf("pool %s: the probe Job did not run the node's provider: credential_provider = %+v", n.spec.Pool, cp)
		}
		if !strings.Contains(identity[n.spec.Pool], "lab-provider") {
			t.Errorf("pool %s: identity %q does not name the kubelet credential provider lab-provider", n.spec.Pool, identity[n.spec.Pool])
		}
	}
}
