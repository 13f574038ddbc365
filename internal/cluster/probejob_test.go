package cluster

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/pullpath/pullpath/internal/cluster/clustertest"
)

// checkProbeJob asserts the safety and pinning properties of a probe Job,
// whether built in memory or read back from an API server. hostPaths are
// the node paths it must mount read-only, and no other (default: /etc,
// /run and /usr/bin, the Job of a node whose layout is not known).
func checkProbeJob(t *testing.T, j *batchv1.Job, node, platform, secret string, hostPaths ...string) {
	t.Helper()
	ps := j.Spec.Template.Spec
	if ps.NodeName != node {
		t.Errorf("nodeName = %q, want %q", ps.NodeName, node)
	}
	if !ps.HostNetwork || ps.DNSPolicy != corev1.DNSDefault {
		t.Errorf("hostNetwork = %v, dnsPolicy = %q; want true, Default (the node's resolver)", ps.HostNetwork, ps.DNSPolicy)
	}
	if !slices.ContainsFunc(ps.Tolerations, func(tl corev1.Toleration) bool {
		return tl.Operator == corev1.TolerationOpExists && tl.Key == "" && tl.Effect == ""
	}) {
		t.Errorf("tolerations = %+v, want one that tolerates every taint", ps.Tolerations)
	}
	if ps.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy = %q, want Never", ps.RestartPolicy)
	}
	if ps.AutomountServiceAccountToken == nil || *ps.AutomountServiceAccountToken {
		t.Errorf("automountServiceAccountToken = %v, want false", ps.AutomountServiceAccountToken)
	}
	if j.Spec.ActiveDeadlineSeconds == nil || *j.Spec.ActiveDeadlineSeconds <= 0 {
		t.Errorf("activeDeadlineSeconds = %v, want set", j.Spec.ActiveDeadlineSeconds)
	}
	if j.Spec.TTLSecondsAfterFinished == nil || *j.Spec.TTLSecondsAfterFinished <= 0 {
		t.Errorf("ttlSecondsAfterFinished = %v, want set", j.Spec.TTLSecondsAfterFinished)
	}
	if j.Spec.BackoffLimit == nil || *j.Spec.BackoffLimit != 0 {
		t.Errorf("backoffLimit = %v, want 0", j.Spec.BackoffLimit)
	}
	for _, l := range []string{LabelManagedBy, LabelRun, LabelComponent} {
		if j.Labels[l] == "" || j.Spec.Template.Labels[l] == "" {
			t.Errorf("label %s missing on job or pod template", l)
		}
	}
	if j.Annotations[AnnotationNode] != node {
		t.Errorf("annotation %s = %q, want %q", AnnotationNode, j.Annotations[AnnotationNode], node)
	}
	if len(ps.Containers) != 1 {
		t.Fatalf("containers = %d, want 1", len(ps.Containers))
	}
	c := ps.Containers[0]
	sc := c.SecurityContext
	if sc == nil || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) != 0 {
		t.Errorf("capabilities = %+v, want drop ALL, add none", sc)
	}
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("readOnlyRootFilesystem not true")
	}
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Privileged != nil && *sc.Privileged {
		t.Errorf("privilege escalation or privileged allowed: %+v", sc)
	}
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"probe " + "myacr.azurecr.io/team/app:1.2", "--root " + HostRoot, "-o json", "--deadline", "--platform " + platform} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	// The host's /etc and /run (resolv.conf often links into /run) and
	// the layout's paths, all read-only, and no other host path.
	if len(hostPaths) == 0 {
		hostPaths = []string{"/etc", "/run", "/usr/bin"}
	}
	mounted := map[string]bool{}
	for _, m := range c.VolumeMounts {
		for _, hp := range hostPaths {
			if m.MountPath == HostRoot+hp {
				mounted[hp] = m.ReadOnly && slices.ContainsFunc(ps.Volumes, func(v corev1.Volume) bool {
					return v.Name == m.Name && v.HostPath != nil && v.HostPath.Path == hp
				})
			}
		}
		if !m.ReadOnly && m.MountPath != "/tmp" {
			t.Errorf("mount %s is writable", m.MountPath)
		}
	}
	for _, hp := range hostPaths {
		if !mounted[hp] {
			t.Errorf("host %s is not mounted read-only at %s%s: mounts %+v, volumes %+v", hp, HostRoot, hp, c.VolumeMounts, ps.Volumes)
		}
	}
	for _, v := range ps.Volumes {
		if v.HostPath == nil {
			continue
		}
		if !slices.Contains(hostPaths, v.HostPath.Path) {
			t.Errorf("unexpected hostPath %s", v.HostPath.Path)
		}
		// An exact type, checked before mounting: never one that creates
		// the path (…OrCreate) nor the unchecked "" (the runtime creates a
		// missing bind-mount source).
		if ty := v.HostPath.Type; ty == nil || *ty != corev1.HostPathDirectory && *ty != corev1.HostPathFile {
			t.Errorf("hostPath %s has type %v, want Directory or File", v.HostPath.Path, ty)
		}
	}
	hasSecret := strings.Contains(args, "--docker-config "+pullSecretDir+"/config.json")
	if (secret != "") != hasSecret {
		t.Errorf("args %q: pull secret flag present = %v, want %v", args, hasSecret, secret != "")
	}
	if secret != "" && !slices.ContainsFunc(ps.Volumes, func(v corev1.Volume) bool { return v.Secret != nil && v.Secret.SecretName == secret }) {
		t.Errorf("pull secret %s not mounted", secret)
	}
}

// TestSettleProbeSandboxImage: a node that cannot pull its sandbox (pause)
// image never starts the probe container; the kubelet's
// FailedCreatePodSandBox event is the probe's outcome, classified as
// evidence about the node's path, not a timeout. The message is the shape
// the node tier's kubelet (v1.32.4, containerd 1.6.20) wrote.
func TestSettleProbeSandboxImage(t *testing.T) {
	const msg = `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox image "mcr.nodelab.test/oss/kubernetes/pause:3.10": failed to pull image "mcr.nodelab.test/oss/kubernetes/pause:3.10": failed to pull and unpack image "mcr.nodelab.test/oss/kubernetes/pause:3.10": failed to resolve reference "mcr.nodelab.test/oss/kubernetes/pause:3.10": failed to do request: Head "https://mcr.nodelab.test/v2/oss/kubernetes/pause/manifests/3.10": dial tcp 198.18.40.10:443: connect: network is unreachable`
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pullpath-probe-1", Namespace: "shop"},
		Spec:       corev1.PodSpec{NodeName: "n1"},
		Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "probe", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}},
		}}},
	}
	tests := []struct {
		name, target string
		events       []corev1.Event
		want         ProbeStatus
		same         bool
	}{
		{"sandbox image from another registry", "registry.lab.test", []corev1.Event{{Reason: "FailedCreatePodSandBox", Message: msg}}, ProbeImagePull, false},
		{"sandbox image from the diagnosed registry", "mcr.nodelab.test", []corev1.Event{{Reason: "FailedCreatePodSandBox", Message: msg}}, ProbeImagePull, true},
		{"sandbox fails for another reason: still waiting", "registry.lab.test", []corev1.Event{{Reason: "FailedCreatePodSandBox", Message: "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox"}}, ProbeTimeout, false},
		{"no event yet: still waiting", "registry.lab.test", nil, ProbeTimeout, false},
		// The kubelet's event when a hostPath of type File is missing on the node (seen on the node tier).
		{"a node path the Job mounts is missing", "registry.lab.test", []corev1.Event{{Reason: "FailedMount", Message: `MountVolume.SetUp failed for volume "host-credential-provider-config" : hostPath type check failed: /var/lib/kubelet/credential-provider-config.yaml is not a file`}}, ProbeError, false},
		{"another mount failure: still waiting", "registry.lab.test", []corev1.Event{{Reason: "FailedMount", Message: `MountVolume.SetUp failed for volume "pull-secret" : secret "acr-pull" not found`}}, ProbeTimeout, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewClientset(pod.DeepCopy())
			for i, e := range tt.events {
				e.ObjectMeta = metav1.ObjectMeta{Name: fmt.Sprintf("e%d", i), Namespace: "shop"}
				e.InvolvedObject = corev1.ObjectReference{Kind: "Pod", Name: pod.Name, Namespace: "shop"}
				if _, err := cs.CoreV1().Events("shop").Create(t.Context(), &e, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			r := &ProbeResult{Job: "j", Image: "mcr.nodelab.test/pullpath/pullpath-node:test", Status: ProbeTimeout}
			settleProbe(t.Context(), clustertest.FromClientset(cs), pod, r, classify, "mcr.nodelab.test", tt.target)
			if r.Status != tt.want || r.SameRegistry != tt.same {
				t.Fatalf("settleProbe: status %s same-registry %v, want %s %v (%s)", r.Status, r.SameRegistry, tt.want, tt.same, r.Error)
			}
			if tt.want == ProbeImagePull && (string(r.Verdict.Layer) != "route" || !strings.Contains(r.Error, "mcr.nodelab.test/oss/kubernetes/pause:3.10")) {
				t.Errorf("settleProbe: verdict %s/%s, error %q; want route, naming the sandbox image", r.Verdict.Layer, r.Verdict.Cause, r.Error)
			}
		})
	}
}
