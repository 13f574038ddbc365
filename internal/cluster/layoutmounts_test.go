package cluster

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/pullpath/pullpath/internal/cluster/clustertest"
)

var updateJobs = flag.Bool("update-jobs", false, "rewrite testdata/probejob/*.yaml")

// layoutNodes are nodes as the API server shows them on each layout
// (status.nodeInfo as the kubelets of these distributions report it), with
// the node paths their probe Job must mount and nothing else.
var layoutNodes = []struct {
	layout                       string
	kubelet, runtime, os, provID string
	mounts                       []string
}{
	{"k3s", "v1.31.4+k3s1", "containerd://1.7.23-k3s2", "Ubuntu 24.04.1 LTS", "k3s://n1",
		[]string{"/etc", "/run", "/var/lib/rancher/k3s/agent/etc/containerd"}},
	{"rke2", "v1.31.4+rke2r1", "containerd://1.7.23-k3s2", "SUSE Linux Enterprise Server 15 SP6", "",
		[]string{"/etc", "/run", "/var/lib/rancher/rke2/agent/etc/containerd", "/var/lib/rancher/rke2/bin"}},
	{"talos", "v1.32.0", "containerd://2.0.1", "Talos (v1.9.1)", "",
		[]string{"/etc", "/run", "/usr/bin"}},
	{"bottlerocket", "v1.31.4-eks-0a21954", "containerd://1.7.24+bottlerocket", "Bottlerocket OS 1.30.0 (aws-k8s-1.31)", "aws:///us-west-2a/i-0123456789abcdef0",
		[]string{"/etc", "/run", "/usr/bin"}},
	{"gke", "v1.31.5-gke.1023000", "containerd://1.7.24", "Container-Optimized OS from Google", "gce://proj/us-central1-a/gke-n1",
		[]string{"/etc", "/run", "/usr/bin"}},
	{"eks-al2023", "v1.31.4-eks-aeac579", "containerd://1.7.25", "Amazon Linux 2023.6.20250107", "aws:///us-west-2a/i-0123456789abcdef1",
		[]string{"/etc", "/run", "/usr/bin"}},
	{"eks-al2", "v1.30.8-eks-aeac579", "containerd://1.7.25", "Amazon Linux 2", "aws:///us-west-2a/i-0123456789abcdef2",
		[]string{"/etc", "/run", "/usr/bin"}},
	{"debian", "v1.32.4", "containerd://1.6.20~ds1", "Debian GNU/Linux 12 (bookworm)", "",
		[]string{"/etc", "/run", "/usr/bin"}},
	{"cri-o", "v1.31.6", "cri-o://1.31.5-3.rhaos4.18.gitdad78d5.el9", "Red Hat Enterprise Linux CoreOS 418.94.202501221327-0", "",
		[]string{"/etc", "/run", "/usr/bin"}},
	{"containerd", "v1.31.6", "containerd://1.7.21", "Flatcar Container Linux by Kinvolk 4081.2.1 (Oklo)", "",
		[]string{"/etc", "/run", "/usr/bin"}},
}

// TestProbeJobPerLayout: diagnose picks each node's layout from the API
// server's view of it, and the probe Job mounts, read-only and with an
// exact hostPath type, the node paths that layout's runtime reads and no
// other, and passes the reported runtime version on. The whole Job is
// compared with a golden file (go test -run TestProbeJobPerLayout
// -update-jobs rewrites them).
func TestProbeJobPerLayout(t *testing.T) {
	po := ProbeOptions{Image: "myacr.azurecr.io/tools/pullpath:v1", RunID: "golden01"}
	for _, tt := range layoutNodes {
		t.Run(tt.layout, func(t *testing.T) {
			n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: clustertest.NewNode}, Spec: corev1.NodeSpec{ProviderID: tt.provID},
				Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: tt.kubelet, ContainerRuntimeVersion: tt.runtime, OSImage: tt.os, OperatingSystem: "linux", Architecture: "amd64"}}}
			targets := withLayouts([]ProbeTarget{{Node: n.Name, Platform: "linux/amd64"}}, []corev1.Node{n})
			l := targets[0].Layout
			if l == nil || l.Name != tt.layout {
				t.Fatalf("layout = %+v, want %s", l, tt.layout)
			}
			j := ProbeJob(targets[0], clustertest.Image, "shop", po, "acr-pull")
			checkProbeJob(t, j, n.Name, "linux/amd64", "acr-pull", tt.mounts...)
			args := j.Spec.Template.Spec.Containers[0].Args
			if i := slices.Index(args, "--runtime-version"); i < 0 || i+1 >= len(args) || args[i+1] != tt.runtime {
				t.Errorf("args %q: want --runtime-version %s", args, tt.runtime)
			}
			got, err := yaml.Marshal(j)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "probejob", tt.layout+".yaml")
			if *updateJobs {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update-jobs)", err)
			}
			if string(want) != string(got) {
				t.Errorf("probe Job for %s differs from %s (-update-jobs rewrites it):\n%s", tt.layout, golden, lineDiff(string(want), string(got)))
			}
		})
	}
}

// lineDiff lists the lines only in want (-) or only in got (+).
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for _, l := range w {
		if !slices.Contains(g, l) {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}

// TestProbeJobLayoutWithProvider: a provider path inside a layout mount
// gets no second mount; /usr/bin is no longer implied on a layout that
// does not mount it (k3s), so a provider bin dir there is mounted itself.
func TestProbeJobLayoutWithProvider(t *testing.T) {
	po := ProbeOptions{Image: "myacr.azurecr.io/tools/pullpath:v1", RunID: "golden01"}
	k3s := &NodeLayout{Name: "k3s", Mounts: []HostMount{k3sConfig}}
	j := ProbeJob(ProbeTarget{Node: "n1", Layout: k3s, Provider: &ProviderPaths{"flag", "/etc/rancher/cp.yaml", "/usr/bin"}}, clustertest.Image, "shop", po, "")
	var paths []string
	for _, v := range j.Spec.Template.Spec.Volumes {
		if v.HostPath != nil {
			paths = append(paths, v.HostPath.Path)
		}
	}
	want := []string{"/etc", "/run", "/var/lib/rancher/k3s/agent/etc/containerd", "/usr/bin"}
	if !slices.Equal(paths, want) {
		t.Errorf("hostPaths %v, want %v", paths, want)
	}
}

// TestPodViewJobSharesSkeleton: the node probe's and the pod-view probe's
// Jobs come from one skeleton; they differ where they must (view label,
// network, DNS, user, host mounts, the secret's file mode) and nowhere
// else in the Job's own spec.
func TestPodViewJobSharesSkeleton(t *testing.T) {
	po := ProbeOptions{Image: "mcr.example/pullpath:1", RunID: "abc", PodView: true}
	tg := ProbeTarget{Node: "n1", Platform: "linux/amd64"}
	nj, pj := ProbeJob(tg, "reg.example/app:1", "shop", po, "pull"), PodViewJob(tg, "reg.example/app:1", "shop", po, "pull")
	if *nj.Spec.ActiveDeadlineSeconds != *pj.Spec.ActiveDeadlineSeconds || *nj.Spec.TTLSecondsAfterFinished != *pj.Spec.TTLSecondsAfterFinished || *nj.Spec.BackoffLimit != *pj.Spec.BackoffLimit {
		t.Errorf("deadline/TTL/backoff differ: %+v vs %+v", nj.Spec, pj.Spec)
	}
	mode := func(ps corev1.PodSpec) int32 {
		for _, v := range ps.Volumes {
			if v.Secret != nil {
				return *v.Secret.DefaultMode
			}
		}
		return -1
	}
	if m, pm := mode(nj.Spec.Template.Spec), mode(pj.Spec.Template.Spec); m != 0o400 || pm != 0o444 {
		t.Errorf("secret modes %o (node), %o (pod view), want 400 and 444", m, pm)
	}
	for k, v := range nj.Labels {
		if k != LabelView && pj.Labels[k] != v {
			t.Errorf("label %s: %q vs %q", k, v, pj.Labels[k])
		}
	}
}

// TestProbeJobCRIONamespace: on a CRI-O node the Job passes the workload's
// namespace as --pod-namespace and mounts CRI-O's namespaced_auth_dir and
// signature_policy_dir read-only, type Directory (CRI-O creates both at
// start), only when they lie outside /etc and only when the node's CRI-O
// reads them; a containerd node gets neither.
func TestProbeJobCRIONamespace(t *testing.T) {
	type mount struct {
		path string
		typ  corev1.HostPathType
	}
	jobOf := func(layout NodeLayout, po ProbeOptions) ([]string, []mount, []string) {
		t.Helper()
		po.Image, po.RunID = "myacr.azurecr.io/tools/pullpath:v1", "ns01"
		j := ProbeJob(ProbeTarget{Node: "n1", Layout: &layout}, clustertest.Image, "pullpath", po, "")
		ps := j.Spec.Template.Spec
		var paths []string
		var extra []mount
		byName := map[string]corev1.VolumeMount{}
		for _, m := range ps.Containers[0].VolumeMounts {
			byName[m.Name] = m
		}
		for _, v := range ps.Volumes {
			if v.HostPath == nil {
				continue
			}
			paths = append(paths, v.HostPath.Path)
			m := byName[v.Name]
			if !m.ReadOnly || m.MountPath != HostRoot+v.HostPath.Path {
				t.Errorf("%s mounted at %s read-only=%v", v.HostPath.Path, m.MountPath, m.ReadOnly)
			}
			if strings.HasPrefix(v.Name, "host-crio-") {
				extra = append(extra, mount{v.HostPath.Path, *v.HostPath.Type})
			}
		}
		return ps.Containers[0].Args, extra, paths
	}
	crio := func(v string) NodeLayout {
		return NodeLayout{Name: "cri-o", RuntimeVersion: v, Mounts: []HostMount{usrBin}}
	}
	nsArg := func(args []string) string {
		if i := slices.Index(args, "--pod-namespace"); i >= 0 && i+1 < len(args) {
			return args[i+1]
		}
		return ""
	}
	custom := ProbeOptions{PodNamespace: "shop", CRIONamespacedAuthDir: "/var/lib/crio/auth", CRIOSignaturePolicyDir: "/var/lib/crio/policies/"}

	// Defaults: /etc/crio/auth and /etc/crio/policies are under /etc.
	args, extra, paths := jobOf(crio("cri-o://1.35.1"), ProbeOptions{PodNamespace: "shop"})
	if nsArg(args) != "shop" || len(extra) != 0 || !slices.Equal(paths, []string{"/etc", "/run", "/usr/bin"}) {
		t.Errorf("defaults: --pod-namespace %q, extra %v, paths %v", nsArg(args), extra, paths)
	}
	// Moved directories: both mounted, type Directory, path cleaned.
	_, extra, _ = jobOf(crio("cri-o://1.35.1"), custom)
	if want := []mount{{"/var/lib/crio/auth", corev1.HostPathDirectory}, {"/var/lib/crio/policies", corev1.HostPathDirectory}}; !slices.Equal(extra, want) {
		t.Errorf("1.35 moved dirs: %v, want %v", extra, want)
	}
	// CRI-O 1.31 (OpenShift's version string) has no namespaced auth dir:
	// a Directory mount of it would fail the pod.
	_, extra, _ = jobOf(crio("cri-o://1.31.5-3.rhaos4.18.gitdad78d5.el9"), custom)
	if want := []mount{{"/var/lib/crio/policies", corev1.HostPathDirectory}}; !slices.Equal(extra, want) {
		t.Errorf("1.31 moved dirs: %v, want %v", extra, want)
	}
	// CRI-O 1.27: neither.
	if _, extra, _ = jobOf(crio("cri-o://1.27.0"), custom); len(extra) != 0 {
		t.Errorf("1.27: %v", extra)
	}
	// A moved directory still under /etc: no second mount.
	if _, extra, _ = jobOf(crio("cri-o://1.35.1"), ProbeOptions{PodNamespace: "shop", CRIONamespacedAuthDir: "/etc/crio/ns-auth"}); len(extra) != 0 {
		t.Errorf("dir under /etc mounted again: %v", extra)
	}
	// containerd: no flag, no mount, whatever the options.
	args, extra, paths = jobOf(NodeLayout{Name: "debian", RuntimeVersion: "containerd://1.6.20~ds1", Mounts: []HostMount{usrBin}}, custom)
	if nsArg(args) != "" || len(extra) != 0 || !slices.Equal(paths, []string{"/etc", "/run", "/usr/bin"}) {
		t.Errorf("containerd: --pod-namespace %q, extra %v, paths %v", nsArg(args), extra, paths)
	}
}
