package cluster

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pullpath/pullpath/internal/cluster/clustertest"
)

func provNode(name, version, os string, labels map[string]string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: version, OperatingSystem: os}}}
}

func TestNodeProviderPaths(t *testing.T) {
	aks := map[string]string{"kubernetes.azure.com/cluster": "MC_rg_c_westeurope", "kubernetes.azure.com/agentpool": "user1"}
	tests := []struct {
		name string
		node corev1.Node
		want *ProviderPaths
	}{
		{"AKS 1.30", provNode("a", "v1.30.5", "linux", aks), &ProviderPaths{"AKS", "/var/lib/kubelet/credential-provider-config.yaml", "/var/lib/kubelet/credential-provider"}},
		{"AKS 1.29: maybe the in-tree ACR credentials, not mounted", provNode("a", "v1.29.9", "linux", aks), nil},
		{"AKS Windows", provNode("a", "v1.31.1", "windows", aks), nil},
		{"AKS, OS from the label", provNode("a", "v1.31.1", "", map[string]string{"kubernetes.azure.com/cluster": "x", "kubernetes.io/os": "windows"}), nil},
		{"EKS", provNode("e", "v1.31.2-eks-7f9249a", "linux", map[string]string{"eks.amazonaws.com/nodegroup": "ng"}), &ProviderPaths{"EKS", "/etc/eks/image-credential-provider/config.json", "/etc/eks/image-credential-provider"}},
		{"GKE", provNode("g", "v1.32.2-gke.1297002", "linux", map[string]string{"cloud.google.com/gke-nodepool": "default-pool"}), &ProviderPaths{"GKE", "/home/kubernetes/cri-auth-config.yaml", "/home/kubernetes/bin"}},
		{"kubeadm: not known", provNode("k", "v1.33.0", "linux", map[string]string{"node-role.kubernetes.io/worker": ""}), nil},
		{"no version", provNode("a", "", "linux", aks), nil},
		{"unparseable version", provNode("a", "v1.x", "linux", aks), nil},
		{"unstamped development build", provNode("a", "v0.0.0-master+$Format:%H$", "linux", aks), &ProviderPaths{"AKS", "/var/lib/kubelet/credential-provider-config.yaml", "/var/lib/kubelet/credential-provider"}},
		{"v0.0.0 otherwise", provNode("a", "v0.0.0", "linux", aks), nil},
		{"major 2", provNode("a", "v2.1.0", "linux", aks), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, NodeProviderPaths(&tt.node)); diff != "" {
				t.Errorf("NodeProviderPaths (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWithProviderPaths(t *testing.T) {
	nodes := []corev1.Node{
		provNode("aks-1", "v1.32.4", "linux", map[string]string{"kubernetes.azure.com/cluster": "x"}),
		provNode("kind-1", "v1.33.0", "linux", nil),
	}
	targets := func() []ProbeTarget { return []ProbeTarget{{Node: "aks-1"}, {Node: "kind-1"}, {Node: "gone"}} }
	got := withProviderPaths(targets(), nodes, ProbeOptions{})
	if got[0].Provider == nil || got[0].Provider.Distribution != "AKS" || got[1].Provider != nil || got[2].Provider != nil {
		t.Errorf("by distribution: %+v %+v %+v, want AKS, nil, nil", got[0].Provider, got[1].Provider, got[2].Provider)
	}
	got = withProviderPaths(targets(), nodes, ProbeOptions{ProviderConfig: "/var/lib/rancher/credentialprovider/config.yaml", ProviderBinDir: "/var/lib/rancher/credentialprovider/bin/"})
	want := &ProviderPaths{"flag", "/var/lib/rancher/credentialprovider/config.yaml", "/var/lib/rancher/credentialprovider/bin"}
	for _, tg := range got {
		if diff := cmp.Diff(want, tg.Provider); diff != "" {
			t.Errorf("%s with the flags (-want +got):\n%s", tg.Node, diff)
		}
	}
}

// TestProbeJobProviderMounts: with the node's provider paths known, the Job
// mounts exactly the config file and the bin dir, read-only, with hostPath
// types that refuse to create anything on the node, and adds only
// SYS_CHROOT (the probe runs the provider chrooted into /host). Paths inside
// host /etc need no mount of their own.
func TestProbeJobProviderMounts(t *testing.T) {
	po := ProbeOptions{Image: "myacr.azurecr.io/tools/pullpath:v1", RunID: "abcd1234"}
	tests := []struct {
		name string
		p    *ProviderPaths
		want map[string]corev1.HostPathType // host path -> type
	}{
		{"AKS", &ProviderPaths{"AKS", "/var/lib/kubelet/credential-provider-config.yaml", "/var/lib/kubelet/credential-provider"},
			map[string]corev1.HostPathType{"/var/lib/kubelet/credential-provider-config.yaml": corev1.HostPathFile, "/var/lib/kubelet/credential-provider": corev1.HostPathDirectory}},
		{"GKE", &ProviderPaths{"GKE", "/home/kubernetes/cri-auth-config.yaml", "/home/kubernetes/bin"},
			map[string]corev1.HostPathType{"/home/kubernetes/cri-auth-config.yaml": corev1.HostPathFile, "/home/kubernetes/bin": corev1.HostPathDirectory}},
		{"EKS: all inside /etc", &ProviderPaths{"EKS", "/etc/eks/image-credential-provider/config.json", "/etc/eks/image-credential-provider"}, map[string]corev1.HostPathType{}},
		{"config in /etc, bin dir elsewhere", &ProviderPaths{"flag", "/etc/kubernetes/cp.yaml", "/usr/local/bin"}, map[string]corev1.HostPathType{"/usr/local/bin": corev1.HostPathDirectory}},
		{"bin dir inside the mounted /usr/bin: no second mount", &ProviderPaths{"flag", "/etc/kubernetes/cp.yaml", "/usr/bin"}, map[string]corev1.HostPathType{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := ProbeJob(ProbeTarget{Node: clustertest.NewNode, Provider: tt.p}, clustertest.Image, "shop", po, "")
			ps := j.Spec.Template.Spec
			c := ps.Containers[0]
			got := map[string]corev1.HostPathType{}
			for _, v := range ps.Volumes {
				if v.HostPath == nil || v.HostPath.Path == "/etc" || v.HostPath.Path == "/run" || v.HostPath.Path == "/usr/bin" {
					continue
				}
				if v.HostPath.Type == nil {
					t.Errorf("hostPath %s has no type: the runtime would create it on the node", v.HostPath.Path)
					continue
				}
				got[v.HostPath.Path] = *v.HostPath.Type
				i := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == v.Name })
				if i < 0 || !c.VolumeMounts[i].ReadOnly || c.VolumeMounts[i].MountPath != HostRoot+v.HostPath.Path {
					t.Errorf("hostPath %s: mount %+v, want read-only at %s%s", v.HostPath.Path, c.VolumeMounts, HostRoot, v.HostPath.Path)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("provider hostPaths (-want +got):\n%s", diff)
			}
			sc := c.SecurityContext
			if !slices.Equal(sc.Capabilities.Add, []corev1.Capability{"SYS_CHROOT"}) || !slices.Contains(sc.Capabilities.Drop, "ALL") {
				t.Errorf("capabilities %+v, want drop ALL, add SYS_CHROOT only", sc.Capabilities)
			}
			if *sc.ReadOnlyRootFilesystem != true || *sc.AllowPrivilegeEscalation {
				t.Errorf("security context loosened: %+v", sc)
			}
			if args := strings.Join(c.Args, " "); !strings.Contains(args, "--root "+HostRoot) {
				t.Errorf("args %q lack --root %s", args, HostRoot)
			}
		})
	}
	// Without provider paths the Job is as before: no capability at all.
	j := ProbeJob(ProbeTarget{Node: clustertest.NewNode, Platform: "linux/amd64"}, clustertest.Image, "shop", po, "")
	checkProbeJob(t, j, clustertest.NewNode, "linux/amd64", "")
}
