package nodelab_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pullpath/pullpath/internal/keychain"
	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/nodeview/credtest"
	"github.com/pullpath/pullpath/internal/probe"
	"github.com/pullpath/pullpath/internal/runtimecfg"
	"github.com/pullpath/pullpath/test/netlab/minireg"
	"github.com/pullpath/pullpath/test/nodelab"
)

// The registry pair of TestKubeletCredentialRows, in a namespace of its
// own: the upstream and its mirror, each behind its own htpasswd
// (minireg.Gate), each logging the users presented to it.
const (
	krUp     = "credup.lab.test"
	krMirror = "credmirror.lab.test"
	krPusher = "pusher"
	// krProviderGlob is the lab provider's matchImages and the key it
	// answers under: only the team-p repositories of any *.lab.test host.
	krProviderGlob = "*.lab.test/team-p"
)

var (
	krSubnet     = netip.MustParsePrefix("198.18.50.0/24")
	krUpAddr     = netip.MustParseAddr("198.18.50.10")
	krMirrorAddr = netip.MustParseAddr("198.18.50.11")
)

func krEntry(user string) keychain.Entry {
	return keychain.Entry{Username: user, Password: "pw-" + user + "-N0de7"}
}

// krRow is one pod: its pull secrets and service account, the image.
type krRow struct {
	name  string
	repo  string // on krUp
	pod   map[string]keychain.Entry
	sa    map[string]keychain.Entry // the service account's imagePullSecrets
	saOut bool                      // the pod names the service account only (no secret of its own)
	// wantPulled is the kubelet's outcome.
	wantPulled bool
}

func krRows() []krRow {
	return []krRow{
		{name: "secret for the upstream only", repo: "team-a/app", pod: map[string]keychain.Entry{krUp: krEntry("up-user")}, wantPulled: true},
		{name: "secret with both keys", repo: "team-a/app", pod: map[string]keychain.Entry{krUp: krEntry("up-user"), krMirror: krEntry("mirror-user")}, wantPulled: true},
		{name: "path-scoped keys, team-b image", repo: "team-b/app", pod: map[string]keychain.Entry{krUp + "/team-a": krEntry("team-a-user"), krUp + "/team-b": krEntry("team-b-user")}, wantPulled: true},
		{name: "path-scoped key of another team only", repo: "team-b/app", pod: map[string]keychain.Entry{krUp + "/team-a": krEntry("team-a-user")}, wantPulled: false},
		{name: "wildcard key", repo: "team-a/app", pod: map[string]keychain.Entry{"*.lab.test": krEntry("wild-user")}, wantPulled: true},
		{name: "key with a port", repo: "team-a/app", pod: map[string]keychain.Entry{krUp + ":443": krEntry("port-user")}, wantPulled: false},
		{name: "provider matchImages glob", repo: "team-p/app", wantPulled: true},
		{name: "service account secret next to a pod secret", repo: "team-a/app", pod: map[string]keychain.Entry{krUp: krEntry("pod-user")}, sa: map[string]keychain.Entry{krUp: krEntry("sa-user")}, wantPulled: true},
		{name: "service account secret alone", repo: "team-a/app", sa: map[string]keychain.Entry{krUp: krEntry("sa-user")}, saOut: true, wantPulled: true},
		// krNodeConfig: the node's docker config in the kubelet's root
		// dir, keyed to team-n only, so no other row's image matches it.
		{name: "node docker config (kubelet root dir), no secret", repo: "team-n/app", wantPulled: true},
		{name: "node docker config next to a pod secret", repo: "team-n/app", pod: map[string]keychain.Entry{krUp: krEntry("pod-user")}, wantPulled: true},
	}
}

// krNodeConfig is the node docker config every node of the rows holds, in
// its kubelet's --root-dir (where the real kubelet reads it) and at
// /var/lib/kubelet/config.json of its root (where the probe's reader finds
// the default root dir): one key, for the team-n repositories.
func krNodeConfig() []byte {
	e := krEntry("node-user")
	return []byte(fmt.Sprintf(`{"auths":{%q:{"username":%q,"password":%q}}}`, krUp+"/team-n", e.Username, e.Password))
}

// krRuntime is one node of TestKubeletCredentialRows: the containerd its
// kubelet pulls through.
type krRuntime struct {
	name  string // "1.6", "2.x": pod and secret names carry it
	node  string
	bin   string // NodeSpec.Containerd: "" is Debian's containerd on PATH
	index int
	want  keychain.Runtime // the rule the node's real version and config must give
	// proxy, when set, stands between the node's kubelet and containerd
	// (NodeSpec.CRIProxy) and records the kubelet's PullImage requests.
	proxy *nodelab.CRIProxy
}

func krRuntimes(t *testing.T) []krRuntime {
	out := []krRuntime{{name: "16", node: "aks-keys-44444444-vmss000000", index: 4, want: keychain.Containerd16, proxy: &nodelab.CRIProxy{}}}
	if p := os.Getenv("PULLPATH_CONTAINERD2"); p != "" {
		out = append(out, krRuntime{name: "2x", node: "aks-keystwo-55555555-vmss000000", bin: p, index: 5, want: keychain.Containerd2Transfer})
	} else {
		t.Log("PULLPATH_CONTAINERD2 is not set (export PULLPATH_CONTAINERD2=$(sh tools/containerd2/build.sh)/containerd): the containerd 2.x node is not started and its rows are not run")
	}
	return out
}

// TestKubeletCredentialRows checks the keychain against real kubelets: one
// node per containerd (Debian's 1.6, and the pinned 2.2.9 when
// PULLPATH_CONTAINERD2 is set, which pulls through its transfer service),
// whose real kubelet pulls from a registry pair where the mirror (first in
// hosts.toml) and the upstream each have their own htpasswd. Each row is
// one pod (pull secrets, service account, the node's credential provider
// with a matchImages glob), run on each node in turn. For every host, the
// users the keychain predicts over the kubelet's attempts (keychain.Kubelet
// and keychain.Route with the rule the probe derives from the node: the
// runtime version the kubelet reports, runtimecfg's pull path) must be
// those the registry logged, and the pod's pull must succeed exactly when
// predicted.
//
// The kubelet's ServerAddress is captured: the containerd 1.6 node's kubelet
// talks to containerd through a CRI proxy (nodelab.CRIProxy: every call
// forwarded unchanged, PullImage requests decoded and recorded without
// their secrets), and every PullImage request of every row must carry an
// empty auth.server_address, an AuthConfig exactly when the row has a
// credential, with username and password only, as kubelet v1.32.4 builds
// it (pkg/credentialprovider keyring.go BasicDockerKeyring.Add sets
// Username, Password and Email; kuberuntime_image.go PullImage copies
// ServerAddress from it). The 2.2.9 node runs without the proxy, the
// control: both nodes must log the same predicted users. There the field is
// still read off the rows: containerd's ParseAuth gives an AuthConfig with
// a server address only to that address's host, so a mirror that logs the
// pod's user proves the kubelet sent none.
func TestKubeletCredentialRows(t *testing.T) {
	before := nodelab.Snapshot(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	runtimes := krRuntimes(t)
	var nodeNames []string
	for _, r := range runtimes {
		nodeNames = append(nodeNames, r.node)
	}
	w := startWorld(t, ctx, nodeNames)
	t.Cleanup(func() {
		if d := nodelab.Diff(before, nodelab.Snapshot(context.Background())); len(d) > 0 {
			t.Errorf("the tier changed the machine:\n%s", strings.Join(d, "\n"))
		}
	})

	// The registry pair.
	if _, err := w.net.AddHost(ctx, "creds", krSubnet, krUpAddr, krMirrorAddr); err != nil {
		t.Fatal(err)
	}
	ca, err := minireg.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	upUsers := map[string]string{krPusher: "push-pw"}
	for _, u := range []string{"up-user", "team-a-user", "team-b-user", "wild-user", "port-user", "prov-user", "pod-user", "sa-user", "node-user"} {
		upUsers[u] = krEntry(u).Password
	}
	gates := map[string]*minireg.Gate{
		krUp:     {Users: upUsers, Realm: krUp, Quiet: krPusher},
		krMirror: {Users: map[string]string{krPusher: "push-pw", "mirror-user": krEntry("mirror-user").Password}, Realm: krMirror, Quiet: krPusher},
	}
	addrs := map[string]netip.Addr{krUp: krUpAddr, krMirror: krMirrorAddr}
	app, err := nodelab.BinaryImage(filepath.Join(w.tools, "pause"), "/app")
	if err != nil {
		t.Fatal(err)
	}
	for host, g := range gates {
		cert, err := ca.Issue(host)
		if err != nil {
			t.Fatal(err)
		}
		g.Inner = registry.New(registry.Logger(log.New(io.Discard, "", 0)))
		ln, err := w.net.Listen("tcp", addrs[host].String()+":443")
		if err != nil {
			t.Fatal(err)
		}
		srv := minireg.ServeHandler(ln, cert, g)
		t.Cleanup(func() { srv.Close() })
		addr := addrs[host].String() + ":443"
		tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return w.net.DialContext(ctx, network, addr)
		}, TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}
		for _, repo := range []string{"team-a/app", "team-b/app", "team-p/app", "team-n/app"} {
			ref, err := name.ParseReference(host + "/" + repo + ":1")
			if err != nil {
				t.Fatal(err)
			}
			if err := remote.Write(ref, app, remote.WithContext(ctx), remote.WithTransport(tr), remote.WithAuth(&authn.Basic{Username: krPusher, Password: "push-pw"})); err != nil {
				t.Fatalf("pushing %s: %v", ref, err)
			}
		}
		tr.CloseIdleConnections()
		g.Take()
	}

	// The node: hosts.toml puts the mirror first; the node trusts the
	// pair's CA; the credential provider answers for team-p only.
	w.files.CABundle = append(append([]byte{}, w.files.CABundle...), ca.PEM...)
	w.files.Hosts = append(append([]string{}, w.files.Hosts...), krUpAddr.String()+" "+krUp, krMirrorAddr.String()+" "+krMirror)
	w.files.HostsTOML[krUp] = fmt.Sprintf("server = \"https://%s\"\n\n[host.\"https://%s\"]\n  capabilities = [\"pull\", \"resolve\"]\n", krUp, krMirror)
	provider := credtest.Build(t)
	for _, r := range runtimes {
		spec := credSpec(nodelab.NodeSpec{Name: r.node, Pool: strings.Split(r.node, "-")[1], NodeImageVersion: imageV1, Mode: "User", Index: r.index,
			// config.toml in the node root, where the probe's runtimecfg reads it.
			ContainerdConfig: "etc/containerd/config.toml", Containerd: r.bin, CRIProxy: r.proxy},
			provider, krProviderGlob, "prov-user", "good", krEntry("prov-user").Password)
		spec.RootFiles["var/lib/kubelet/config.json"] = krNodeConfig()
		nd := w.addNode(ctx, spec)
		// Before any pod: the kubelet keeps what it read for 5 minutes
		// (CachingDockerConfigProvider).
		if err := os.WriteFile(filepath.Join(nd.Dir, "kubelet", "config.json"), krNodeConfig(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	providers := nodeview.CredentialProviderConfig{Providers: []nodeview.CredentialProvider{{Name: "lab-provider", MatchImages: []string{krProviderGlob}}}}

	var out []string
	for _, r := range runtimes {
		nd := w.nodes[r.node]
		rt, plan, fb, label := krRule(ctx, t, w, nd, r.node)
		if rt != r.want {
			t.Errorf("%s: the probe's rule is %s, want %s", label, rt, r.want)
		}
		table, empty, captured := krRun(ctx, t, w, r, gates, providers, rt, plan, fb)
		t.Logf("%s: rows (row | host | predicted | logged | kubelet):\n%s", label, strings.Join(table, "\n"))
		t.Logf("%s: the kubelet's AuthConfig.server_address: empty in %d rows (the mirror, another host than the image's registry, logged the pod's user: containerd's ParseAuth gives an AuthConfig with a server address to that host only)", label, empty)
		out = append(out, "#### node tier: the real kubelet → "+label, "", "| row (one pod each) | host | predicted | logged | kubelet event |", "|---|---|---|---|---|")
		out = append(append(out, table...), "")
		if r.proxy != nil {
			methods := r.proxy.Methods()
			var names []string
			for m, n := range methods {
				names = append(names, fmt.Sprintf("%s ×%d", m, n))
			}
			slices.Sort(names)
			t.Logf("%s: calls through the CRI proxy: %s", label, strings.Join(names, ", "))
			if methods["/runtime.v1.RuntimeService/RunPodSandbox"] == 0 || methods["/runtime.v1.RuntimeService/CreateContainer"] == 0 || methods["/runtime.v1.ImageService/PullImage"] == 0 {
				t.Errorf("%s: the kubelet's sandbox, container and pull calls did not all go through the proxy: %v", label, methods)
			}
			if bad := r.proxy.Undecoded(); len(bad) > 0 {
				t.Errorf("%s: PullImage requests that did not decode: %v", label, bad)
			}
			t.Logf("%s: PullImage requests captured by the CRI proxy (row | requests | auth | server_address | fields set):\n%s", label, strings.Join(captured, "\n"))
			out = append(out, "#### node tier: the kubelet's PullImage requests, captured (→ "+label+")", "",
				"| row (one pod each) | PullImage requests | AuthConfig | server_address | fields set |", "|---|---|---|---|---|")
			out = append(append(out, captured...), "")
		}
	}
	if p := os.Getenv("PULLPATH_CREDS_TABLE"); p != "" {
		os.WriteFile(p, []byte(strings.Join(out, "\n")), 0o644)
	}
}

// krRule is what the probe derives from the node for the credential
// routing: the runtime version the kubelet reports for it (CRI Version,
// node.status.nodeInfo), runtimecfg's reading of its config.toml (the pull
// path) and hosts.toml plan, probe.RuntimeRouting's rule and fallbacks.
// label names the runtime as the docs' tables do.
func krRule(ctx context.Context, t *testing.T, w *world, nd *nodelab.Node, nodeName string) (keychain.Runtime, []keychain.Host, keychain.Fallbacks, string) {
	t.Helper()
	node, err := w.cs.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reported := node.Status.NodeInfo.ContainerRuntimeVersion // "containerd://1.6.20~ds1"
	version, ok := strings.CutPrefix(reported, "containerd://")
	if !ok {
		t.Fatalf("%s reports runtime %q, want containerd", nodeName, reported)
	}
	rc, err := runtimecfg.Load(nd.Root, nodeview.RuntimeBinary{Path: "/usr/bin/containerd", ModuleVersion: version, ConfigFlag: "/etc/containerd/config.toml"}, runtimecfg.Options{})
	if err != nil {
		t.Fatalf("runtimecfg: %v", err)
	}
	view, err := nodeview.Load(nd.Root)
	if err != nil {
		t.Fatal(err)
	}
	p, err := rc.Plan(ctx, view, krUp, false)
	if err != nil {
		t.Fatalf("runtimecfg plan: %v", err)
	}
	rt, fb, notes := probe.RuntimeRouting(rc, nd.Root, p.Hosts)
	if len(notes) > 0 {
		t.Errorf("%s: runtime routing notes: %v", nodeName, notes)
	}
	var plan []keychain.Host
	for _, h := range p.Hosts {
		plan = append(plan, keychain.PlanHost{Host: h.Host, Mirror: h.Mirror})
	}
	if len(plan) != 2 || !plan[0].IsMirror() || plan[0].HostPort() != krMirror || plan[1].HostPort() != krUp {
		t.Fatalf("%s: plan %+v, want the mirror then the upstream", nodeName, plan)
	}
	label := "containerd " + strings.TrimSuffix(version, "+unknown")
	switch {
	case rc.Runtime.AtLeast(2, 1) && rc.PullPath == runtimecfg.PullTransfer:
		label += " (transfer service)"
	case rc.Runtime.AtLeast(2, 1):
		label += " (local pull)"
	}
	t.Logf("%s: kubelet reports %s; runtimecfg: version %s, pull path %q (%s); rule %s", nodeName, reported, rc.Runtime.Version, rc.PullPath, rc.PullPathReason, rt)
	return rt, plan, fb, label
}

// krRun runs the rows on r's node and returns the table's lines and the
// number of rows proving an empty server_address.
func krRun(ctx context.Context, t *testing.T, w *world, r krRuntime, gates map[string]*minireg.Gate, providers nodeview.CredentialProviderConfig,
	rt keychain.Runtime, plan []keychain.Host, fb keychain.Fallbacks) (table []string, serverAddressEmpty int, captured []string) {
	// The node keyring, as the probe reads it from the node root.
	root := w.nodes[r.node].Root
	jsonFiles, cfgFiles, _ := nodeview.KubeletDockerConfigFiles(root)
	nodeAuths, nodeFile, skipped := keychain.NodeDockerConfig(func(p string) ([]byte, error) {
		hp, err := nodeview.InRoot(root, p)
		if err != nil {
			return nil, err
		}
		return keychain.ReadFile(hp)
	}, jsonFiles, cfgFiles)
	if nodeFile != "/var/lib/kubelet/config.json" || len(nodeAuths) != 1 || len(skipped) > 0 {
		t.Fatalf("the probe's reader found the node docker config %q (%d keys, skipped %v), want /var/lib/kubelet/config.json", nodeFile, len(nodeAuths), skipped)
	}
	nodeRing := &keychain.Keyring{}
	nodeRing.Add(keychain.Source{Kind: keychain.KindNodeConfig, Name: nodeFile}, nodeAuths)
	for i, row := range krRows() {
		image := krUp + "/" + row.repo + ":1"
		podName := fmt.Sprintf("row%s-%d", r.name, i+1)
		// The secrets and the service account of the row.
		secretOf := func(suffix string, auths map[string]keychain.Entry) string {
			if len(auths) == 0 {
				return ""
			}
			n := podName + "-" + suffix
			cfg := `{"auths":{`
			var parts []string
			for k, e := range auths {
				parts = append(parts, fmt.Sprintf("%q:{\"username\":%q,\"password\":%q}", k, e.Username, e.Password))
			}
			cfg += strings.Join(parts, ",") + "}}"
			if _, err := w.cs.CoreV1().Secrets(namespace).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: n},
				Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(cfg)}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			return n
		}
		podSecret, saSecret := secretOf("pod", row.pod), secretOf("sa", row.sa)
		spec := corev1.PodSpec{NodeName: r.node, AutomountServiceAccountToken: ptr(false), TerminationGracePeriodSeconds: ptr(int64(0)),
			Containers: []corev1.Container{{Name: "app", Image: image, ImagePullPolicy: corev1.PullAlways}}}
		if podSecret != "" {
			spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: podSecret}}
		}
		if saSecret != "" {
			sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: podName}, ImagePullSecrets: []corev1.LocalObjectReference{{Name: saSecret}}}
			if _, err := w.cs.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			spec.ServiceAccountName = podName
		}

		// The prediction, from what the API server holds (the pod as
		// admitted: the ServiceAccount admission plugin copies the
		// service account's secrets only into a pod without any).
		for _, g := range gates {
			g.Take()
		}
		var seenPulls int
		if r.proxy != nil {
			seenPulls = len(r.proxy.Pulls())
		}
		pod, err := w.cs.CoreV1().Pods(namespace).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: podName, Namespace: namespace}, Spec: spec}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		kube := keychain.Kubelet{}
		for _, ref := range pod.Spec.ImagePullSecrets {
			auths := row.pod
			if ref.Name == saSecret {
				auths = row.sa
			}
			kube.PodSecrets = append(kube.PodSecrets, keychain.Secret{Name: ref.Name, Auths: auths})
		}
		if row.saOut && len(pod.Spec.ImagePullSecrets) != 1 {
			t.Errorf("%s: the admitted pod has pull secrets %v, want the service account's", row.name, pod.Spec.ImagePullSecrets)
		}
		kube.Node = nodeRing
		ring := &keychain.Keyring{}
		for _, p := range providers.Matching(krUp + "/" + row.repo) {
			ring.Add(keychain.Source{Kind: keychain.KindProvider, Name: p.Name}, map[string]keychain.Entry{krProviderGlob: krEntry("prov-user")})
		}
		kube.Providers = ring
		res := kube.Resolve(keychain.Repository(krUp, row.repo))
		attempts := []*keychain.Credential{nil}
		if len(res.Credentials) > 0 {
			attempts = attempts[:0]
			for j := range res.Credentials {
				attempts = append(attempts, &res.Credentials[j])
			}
		}
		predicted := map[string][]string{}
		names := map[string][]string{}
		pulled := false
		tries := 0 // the kubelet's PullImage requests up to the one that works
		for _, cred := range attempts {
			tries++
			for _, r := range keychain.Route(rt, krUp, row.repo, plan, cred, fb) {
				if r.Credential != nil && !slices.Contains(predicted[r.Host], r.Credential.Username) {
					predicted[r.Host] = append(predicted[r.Host], r.Credential.Username)
					names[r.Host] = append(names[r.Host], r.Credential.Username+" ("+r.Credential.Name()+")")
				}
				if r.Credential != nil && gates[r.Host].Accepts(r.Credential.Username, r.Credential.Password) {
					pulled = true
					break
				}
			}
			if pulled {
				break
			}
		}

		// The kubelet's pull.
		var ev corev1.Event
		w.poll(ctx, 2*time.Minute, "the kubelet's pull of "+podName, func() bool {
			for _, e := range w.podEvents(ctx, podName) {
				if e.Reason == "Pulled" || (e.Reason == "Failed" && strings.HasPrefix(e.Message, "Failed to pull image")) {
					ev = e
					return true
				}
			}
			return false
		})
		logged := map[string]string{}
		for host, g := range gates {
			logged[host] = g.Take()
		}
		// Under load the kubelet's first attempt sometimes carries no
		// credential although the admitted pod names one: its own
		// secret read failed for that attempt (seen in three loaded runs
		// out of six on different rows; the CRI proxy showed a PullImage
		// without AuthConfig). It retries after its back-off with the
		// secret. Only that shape is waited out, and it is logged: every
		// host saw nothing but anonymous requests and the kubelet failed
		// although a credential was predicted. The rows then judge the
		// retry.
		if ev.Reason == "Failed" && len(res.Credentials) > 0 && krAllAnonymous(logged) {
			t.Logf("%s: the kubelet's first pull carried no credential (%s); waiting for its retry", row.name, ev.Message)
			if r.proxy != nil {
				seenPulls = len(r.proxy.Pulls())
			}
			first := ev.LastTimestamp
			w.poll(ctx, 2*time.Minute, "the kubelet's retry of "+podName, func() bool {
				for _, e := range w.podEvents(ctx, podName) {
					if e.Reason == "Pulled" || (e.Reason == "Failed" && strings.HasPrefix(e.Message, "Failed to pull image") && e.Count > 1 && e.LastTimestamp != first) {
						ev = e
						return true
					}
				}
				return false
			})
			for host, g := range gates {
				logged[host] = g.Take()
			}
		}
		if r.proxy != nil {
			captured = append(captured, krCaptured(t, row.name, image, r.proxy.Pulls()[seenPulls:], len(res.Credentials) > 0, pulled, tries))
		}
		if err := w.cs.CoreV1().Pods(namespace).Delete(ctx, podName, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))}); err != nil {
			t.Fatal(err)
		}
		w.poll(ctx, time.Minute, podName+" deleted", func() bool {
			_, err := w.cs.CoreV1().Pods(namespace).Get(ctx, podName, metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		})
		if ev.Reason == "Pulled" != row.wantPulled || pulled != row.wantPulled {
			t.Errorf("%s: the kubelet's %s (%s); predicted pulled %v, want %v", row.name, ev.Reason, ev.Message, pulled, row.wantPulled)
		}
		for _, h := range plan {
			host := h.HostPort()
			want := strings.Join(predicted[host], ",")
			if want == "" {
				want = "anonymous"
			}
			shown := strings.Join(names[host], ", ")
			if shown == "" {
				shown = "anonymous"
			}
			if logged[host] != want {
				t.Errorf("%s: %s logged %q, the keychain predicted %q", row.name, host, logged[host], want)
			}
			table = append(table, fmt.Sprintf("| %s | %s | %s | %s | %s |", row.name, host, shown, logged[host], ev.Reason))
		}
		if strings.Contains(ev.Message, "N0de7") {
			t.Errorf("%s: the kubelet's event shows a password", row.name)
		}
		if len(res.Credentials) > 0 && logged[krMirror] != "anonymous" {
			// ParseAuth would have withheld a credential with a server
			// address from the mirror: the kubelet's was empty.
			serverAddressEmpty++
		}
	}
	return table, serverAddressEmpty, captured
}

// krCaptured checks the PullImage requests the CRI proxy recorded for one
// row (pulls) against what kubelet v1.32.4 sends: every request for the
// row's image, auth.server_address empty, an AuthConfig exactly when the
// keychain has a credential, carrying username and password only; when the
// pull works, as many requests as credentials tried up to the one that
// works (tries). It returns the row's line of the docs' table.
func krCaptured(t *testing.T, row, image string, pulls []nodelab.PullRecord, withCred, pulled bool, tries int) string {
	t.Helper()
	if len(pulls) == 0 {
		t.Errorf("%s: no PullImage request went through the CRI proxy", row)
		return fmt.Sprintf("| %s | 0 | | | |", row)
	}
	if pulled && len(pulls) != tries {
		t.Errorf("%s: %d PullImage requests, want %d (the kubelet tries its credentials in turn until one works)", row, len(pulls), tries)
	}
	var auths, addrs, fields []string
	for i, p := range pulls {
		if p.Image != image {
			t.Errorf("%s: PullImage request %d is for %q, want %q", row, i+1, p.Image, image)
		}
		if p.ServerAddress != "" {
			t.Errorf("%s: PullImage request %d carries server_address %q, want empty", row, i+1, p.ServerAddress)
		}
		if p.Auth != withCred {
			t.Errorf("%s: PullImage request %d has an AuthConfig: %v, want %v", row, i+1, p.Auth, withCred)
		}
		if p.Auth && (!p.Username || !p.Password || p.AuthField || p.IdentityToken || p.RegistryToken) {
			t.Errorf("%s: PullImage request %d sets %+v, want username and password only", row, i+1, p)
		}
		auth, addr, set := "none", "(no AuthConfig)", "–"
		if p.Auth {
			auth, addr = "yes", strconv.Quote(p.ServerAddress)
			var f []string
			for _, x := range []struct {
				name string
				on   bool
			}{{"username", p.Username}, {"password", p.Password}, {"auth", p.AuthField}, {"identity_token", p.IdentityToken}, {"registry_token", p.RegistryToken}} {
				if x.on {
					f = append(f, x.name)
				}
			}
			set = strings.Join(f, ", ")
		}
		if !slices.Contains(auths, auth) {
			auths = append(auths, auth)
		}
		if !slices.Contains(addrs, addr) {
			addrs = append(addrs, addr)
		}
		if !slices.Contains(fields, set) {
			fields = append(fields, set)
		}
	}
	return fmt.Sprintf("| %s | %d | %s | %s | %s |", row, len(pulls), strings.Join(auths, "/"), strings.Join(addrs, "/"), strings.Join(fields, "/"))
}

// krAllAnonymous says whether every host logged only anonymous requests.
func krAllAnonymous(logged map[string]string) bool {
	for _, l := range logged {
		for _, u := range strings.Split(l, ",") {
			if u != "" && u != "anonymous" {
				return false
			}
		}
	}
	return true
}
