package cluster

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/pullpath/pullpath/internal/cluster/clustertest"
	"github.com/pullpath/pullpath/internal/keychain"
	"github.com/pullpath/pullpath/internal/probe"
	"github.com/pullpath/pullpath/internal/verdict"
)

// TestKeyMatches: diagnose matches a pull secret's keys through the one
// keychain (the kubelet's keyring.go rule), so its answers are the
// kubelet's, including the cases the old path-boundary rule got wrong
// (/v2/ is no path; a path is a string prefix).
func TestKeyMatches(t *testing.T) {
	tests := []struct {
		key, image string
		want       bool
	}{
		{"myacr.azurecr.io", "myacr.azurecr.io/team/app:1.2", true},
		{"https://myacr.azurecr.io", "myacr.azurecr.io/team/app:1.2", true},
		{"https://myacr.azurecr.io/v2/", "myacr.azurecr.io/team/app:1.2", true}, // /v2/ counts as no path
		{"*.azurecr.io", "myacr.azurecr.io/team/app:1.2", true},
		{"*.azurecr.io", "a.b.azurecr.io/team/app:1.2", false}, // one label per *
		{"otheracr.azurecr.io", "myacr.azurecr.io/team/app:1.2", false},
		{"myacr.azurecr.io/team", "myacr.azurecr.io/team/app:1.2", true},
		{"myacr.azurecr.io/tea", "myacr.azurecr.io/team/app:1.2", true}, // a string prefix, as the kubelet has it
		{"myacr.azurecr.io/team-a", "myacr.azurecr.io/team-b/app:1.2", false},
		{"registry.example:5000", "registry.example:5000/app:1", true},
		{"registry.example", "registry.example:5000/app:1", false}, // ports must match
		{"https://index.docker.io/v1/", "nginx:1.25", true},
		{"docker.io", "library/nginx", true},
		{"https://index.docker.io/v1/", "myacr.azurecr.io/team/app:1.2", false},
	}
	for _, tt := range tests {
		t.Run(tt.key+" "+tt.image, func(t *testing.T) {
			ref := parseImage(tt.image)
			k := keychain.Kubelet{PodSecrets: []keychain.Secret{{Name: "s", Auths: map[string]keychain.Entry{tt.key: {}}}}}
			if got := len(k.Resolve(ref.repo).Credentials) > 0; got != tt.want {
				t.Errorf("key %q for %q: matched %v, want %v", tt.key, tt.image, got, tt.want)
			}
		})
	}
}

func TestCacheMatch(t *testing.T) {
	const dg = "sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"
	imgs := func(names ...string) []corev1.ContainerImage {
		return []corev1.ContainerImage{{Names: []string{"mcr.microsoft.com/oss/kubernetes/coredns:v1.11.3"}}, {Names: names}}
	}
	tests := []struct {
		name    string
		image   string
		list    []corev1.ContainerImage
		digests map[string]bool
		want    string
	}{
		{"by name", "nginx:1.25", imgs("docker.io/library/nginx:1.25"), nil, "name"},
		{"familiar name (dockershim)", "docker.io/library/nginx:1.25", imgs("nginx:1.25"), nil, "name"},
		{"by digest of a running replica", "myacr.azurecr.io/team/app:1.2", imgs("myacr.azurecr.io/team/app@" + dg), map[string]bool{dg: true}, "digest"},
		{"pinned digest", "myacr.azurecr.io/team/app@" + dg, imgs("myacr.azurecr.io/team/app@" + dg), map[string]bool{dg: true}, "name"},
		{"other tag", "nginx:1.25", imgs("docker.io/library/nginx:1.24"), nil, ""},
		{"latest implied", "nginx", imgs("docker.io/library/nginx:latest"), nil, "name"},
		{"not listed", "myacr.azurecr.io/team/app:1.2", imgs(), nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref := parseImage(tt.image)
			if got := cacheMatch(tt.list, &ref, tt.digests); got != tt.want {
				t.Errorf("cacheMatch(%q) = %q, want %q", tt.image, got, tt.want)
			}
		})
	}
}

func TestEligible(t *testing.T) {
	node := func(labels map[string]string, taints ...corev1.Taint) *corev1.Node {
		n := &corev1.Node{}
		n.Name = "n1"
		n.Labels = labels
		n.Spec.Taints = taints
		return n
	}
	arm := map[string]string{"kubernetes.io/arch": "arm64", "kubernetes.io/os": "linux", "pool": "a"}
	gpu := corev1.Taint{Key: "sku", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}
	tests := []struct {
		name string
		spec corev1.PodSpec
		node *corev1.Node
		want bool
	}{
		{"no constraints", corev1.PodSpec{}, node(arm), true},
		{"nodeSelector mismatch", corev1.PodSpec{NodeSelector: map[string]string{"kubernetes.io/arch": "amd64"}}, node(arm), false},
		{"nodeSelector match", corev1.PodSpec{NodeSelector: map[string]string{"pool": "a"}}, node(arm), true},
		{"untolerated taint", corev1.PodSpec{}, node(arm, gpu), false},
		{"tolerated by Equal", corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "sku", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}}, node(arm, gpu), true},
		{"tolerated by Exists on key", corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "sku", Operator: corev1.TolerationOpExists}}}, node(arm, gpu), true},
		{"wrong value", corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "sku", Value: "cpu"}}}, node(arm, gpu), false},
		{"tolerate everything", corev1.PodSpec{Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}, node(arm, gpu), true},
		{"PreferNoSchedule does not block", corev1.PodSpec{}, node(arm, corev1.Taint{Key: "x", Effect: corev1.TaintEffectPreferNoSchedule}), true},
		{"not-ready taint is transient", corev1.PodSpec{}, node(arm, corev1.Taint{Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoSchedule}), true},
		{"required affinity In", corev1.PodSpec{Affinity: affinity(corev1.NodeSelectorRequirement{Key: "kubernetes.io/arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}})}, node(arm), false},
		{"required affinity NotIn", corev1.PodSpec{Affinity: affinity(corev1.NodeSelectorRequirement{Key: "kubernetes.io/arch", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"amd64"}})}, node(arm), true},
		{"required affinity DoesNotExist", corev1.PodSpec{Affinity: affinity(corev1.NodeSelectorRequirement{Key: "pool", Operator: corev1.NodeSelectorOpDoesNotExist})}, node(arm), false},
		{"pod OS windows", corev1.PodSpec{OS: &corev1.PodOS{Name: corev1.Windows}}, node(arm), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reasons := eligible(&tt.spec, tt.node)
			if got != tt.want {
				t.Errorf("eligible(%s) = %v (%v), want %v", tt.name, got, reasons, tt.want)
			}
			if !got && len(reasons) == 0 {
				t.Errorf("eligible(%s) = false without a reason", tt.name)
			}
		})
	}
}

func affinity(r corev1.NodeSelectorRequirement) *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{r}}}}}}
}

func TestParseWorkload(t *testing.T) {
	tests := []struct {
		args    []string
		want    WorkloadRef
		wantErr bool
	}{
		{[]string{"app-1"}, WorkloadRef{Kind: KindPod, Name: "app-1", Namespace: "ns"}, false},
		{[]string{"pod", "app-1"}, WorkloadRef{Kind: KindPod, Name: "app-1", Namespace: "ns"}, false},
		{[]string{"deployment/app"}, WorkloadRef{Kind: KindDeployment, Name: "app", Namespace: "ns"}, false},
		{[]string{"deploy/app"}, WorkloadRef{Kind: KindDeployment, Name: "app", Namespace: "ns"}, false},
		{[]string{"deployments.apps/app"}, WorkloadRef{Kind: KindDeployment, Name: "app", Namespace: "ns"}, false},
		{[]string{"sts/db"}, WorkloadRef{Kind: KindStatefulSet, Name: "db", Namespace: "ns"}, false},
		{[]string{"daemonset", "agent"}, WorkloadRef{Kind: KindDaemonSet, Name: "agent", Namespace: "ns"}, false},
		{[]string{"job/migrate"}, WorkloadRef{Kind: KindJob, Name: "migrate", Namespace: "ns"}, false},
		{[]string{"service/app"}, WorkloadRef{}, true},
		{[]string{"deployment/"}, WorkloadRef{}, true},
		{[]string{"a", "b", "c"}, WorkloadRef{}, true},
		{[]string{"pod", "a/b"}, WorkloadRef{}, true},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			got, err := ParseWorkload(tt.args, "ns")
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("ParseWorkload(%q) = %v, %v; want %v (error %v)", tt.args, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestParseProbeLog(t *testing.T) {
	rep := probe.Report{Image: clustertest.Image, Verdict: verdict.Verdict{Layer: verdict.LayerDNS, Cause: "dns.private-zone", Owner: verdict.OwnerDNS}}
	js, _ := json.Marshal(rep)
	tests := []struct {
		name    string
		log     string
		want    string
		wantErr bool
	}{
		{"report only", string(js), "dns.private-zone", false},
		{"noise first", "probing...\n" + string(js) + "\n", "dns.private-zone", false},
		{"empty", "", "", true},
		{"not json", "exec format error\n", "", true},
		{"bad layer", `{"image":"x","verdict":{"layer":"warp"}}`, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseProbeLog([]byte(tt.log))
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseProbeLog(%q) error = %v, want error %v", tt.log, err, tt.wantErr)
			}
			if err == nil && got.Verdict.Cause != tt.want {
				t.Errorf("ParseProbeLog(%q) cause = %q, want %q", tt.log, got.Verdict.Cause, tt.want)
			}
		})
	}
}

func TestProbeTargets(t *testing.T) {
	f := clustertest.AKS(fixtureNow)
	r := diagnoseFake(t, f, WorkloadRef{Kind: KindDeployment, Name: clustertest.Deployment, Namespace: clustertest.Namespace})
	got := ProbeTargets(r)
	want := []ProbeTarget{
		{Node: clustertest.NewNode, Pool: "user2", Why: "landed", Platform: "linux/amd64"},
		{Node: "aks-armpool-45678901-vmss000000", Pool: "armpool", Why: "newest of pool", Platform: "linux/arm64"},
		{Node: "aks-user1-23456789-vmss000002", Pool: "user1", Why: "newest of pool", Platform: "linux/amd64"},
		{Node: clustertest.NewNode2, Pool: "user2", Why: "newest of pool", Platform: "linux/amd64"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ProbeTargets (-want +got):\n%s", diff)
	}
}

func TestProbeJobSpec(t *testing.T) {
	po := ProbeOptions{Image: "myacr.azurecr.io/tools/pullpath:v1", RunID: "abcd1234", Deadline: 90 * time.Second, StepTimeout: 10 * time.Second}
	j := ProbeJob(ProbeTarget{Node: clustertest.NewNode, Platform: "linux/amd64"}, clustertest.Image, "shop", po, "acr-pull")
	checkProbeJob(t, j, clustertest.NewNode, "linux/amd64", "acr-pull")
}
