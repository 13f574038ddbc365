package cluster

import (
	"path"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ProviderPaths are the node paths of the kubelet's image credential
// provider setup (--image-credential-provider-config and
// --image-credential-provider-bin-dir) that the probe Job mounts read-only,
// so that the probe can run the node's provider as the kubelet does.
type ProviderPaths struct {
	// Distribution names where the paths come from: "AKS", "EKS", "GKE",
	// or "flag" for --probe-credential-provider-config/-bin-dir.
	Distribution string `json:"distribution"`
	Config       string `json:"config"`
	BinDir       string `json:"bin_dir"`
}

// Where the managed distributions put the kubelet's provider setup. The
// API server does not expose it: the two are kubelet flags, not fields of
// the KubeletConfiguration that nodes/proxy/configz serves.
//
//   - AKS: AgentBaker passes
//     --image-credential-provider-config=/var/lib/kubelet/credential-provider-config.yaml
//     --image-credential-provider-bin-dir=/var/lib/kubelet/credential-provider
//     (Azure/AgentBaker pkg/agent baker tests, "OOT credentialprovider"
//     entries; cloud-provider-azure site/content/en/topics/credential-provider.md).
//     The in-tree ACR credentials are gone since Kubernetes 1.30, so an
//     AKS node from 1.30 on has them.
//   - EKS: nodeadm writes /etc/eks/image-credential-provider/config.json and
//     the bin dir /etc/eks/image-credential-provider (amazon-eks-ami
//     nodeadm internal/kubelet, imageCredentialProviderRoot), inside the
//     host /etc the Job mounts anyway.
//   - GKE: /home/kubernetes/cri-auth-config.yaml and /home/kubernetes/bin
//     (kubernetes/kubernetes cluster/gce/config-default.sh,
//     AUTH_PROVIDER_GCP_LINUX_CONF_FILE and AUTH_PROVIDER_GCP_LINUX_BIN_DIR;
//     GKE's own images are not public, so this is the upstream layout).
//
// A path that is not there makes the probe pod fail to mount (hostPath
// types File and Directory): the alternative, no type, lets the runtime
// create a missing path on the node, and the probe never changes the node.
// Hence the version floor and the Linux-only rule.
var distributionPaths = []struct {
	label    string // a node label only this distribution sets
	paths    ProviderPaths
	minMinor int // the first Kubernetes 1.x whose nodes have the paths
}{
	{"kubernetes.azure.com/cluster", ProviderPaths{"AKS", "/var/lib/kubelet/credential-provider-config.yaml", "/var/lib/kubelet/credential-provider"}, 30},
	{"eks.amazonaws.com/nodegroup", ProviderPaths{"EKS", "/etc/eks/image-credential-provider/config.json", "/etc/eks/image-credential-provider"}, 27},
	{"cloud.google.com/gke-nodepool", ProviderPaths{"GKE", "/home/kubernetes/cri-auth-config.yaml", "/home/kubernetes/bin"}, 30},
}

// NodeProviderPaths returns where n's distribution keeps the kubelet's
// credential provider setup, or nil when it is not known (another
// distribution, an older kubelet, a Windows node).
func NodeProviderPaths(n *corev1.Node) *ProviderPaths {
	if os := nodeOS(n); os != "" && os != "linux" {
		return nil
	}
	minor, ok := kubeletMinor(n.Status.NodeInfo.KubeletVersion)
	for _, d := range distributionPaths {
		if _, has := n.Labels[d.label]; has && ok && minor >= d.minMinor {
			p := d.paths
			return &p
		}
	}
	return nil
}

// kubeletMinor returns the minor version of a kubelet version such as
// "v1.32.4" or "v1.30.5-eks-1234". A kubelet built from source without
// version stamping reports "v0.0.0-master+$Format:%H$" (the node tier's
// does): a development build, counted as newer than any release.
func kubeletMinor(v string) (int, bool) {
	if strings.HasPrefix(v, "v0.0.0-master") {
		return 1 << 30, true
	}
	v = strings.TrimPrefix(v, "v")
	major, rest, ok := strings.Cut(v, ".")
	if !ok || major != "1" {
		return 0, false
	}
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	m, err := strconv.Atoi(rest[:end])
	return m, err == nil
}

// withProviderPaths sets each target's provider paths: those of
// --probe-credential-provider-config/-bin-dir when given, else those its
// node's distribution uses.
func withProviderPaths(targets []ProbeTarget, nodes []corev1.Node, po ProbeOptions) []ProbeTarget {
	byName := map[string]*corev1.Node{}
	for i := range nodes {
		byName[nodes[i].Name] = &nodes[i]
	}
	for i := range targets {
		switch {
		case po.ProviderConfig != "" && po.ProviderBinDir != "":
			targets[i].Provider = &ProviderPaths{Distribution: "flag", Config: path.Clean(po.ProviderConfig), BinDir: path.Clean(po.ProviderBinDir)}
		case byName[targets[i].Node] != nil:
			targets[i].Provider = NodeProviderPaths(byName[targets[i].Node])
		}
	}
	return targets
}

// providerMounts returns the hostPath volumes and mounts that show the
// probe the provider setup p at its node paths under HostRoot, read-only:
// the config file (type File) and the bin dir (type Directory), each only
// when outside the node paths the Job mounts anyway (mounted). Nothing else of
// the node is mounted: all of /var/lib/kubelet would hold every pod's
// secrets.
func providerMounts(p *ProviderPaths, mounted []string) ([]corev1.Volume, []corev1.VolumeMount) {
	if p == nil {
		return nil, nil
	}
	var vols []corev1.Volume
	var mounts []corev1.VolumeMount
	add := func(name, nodePath string, typ corev1.HostPathType) {
		if !path.IsAbs(nodePath) || underMounts(nodePath, mounted) {
			return
		}
		t := typ
		vols = append(vols, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: nodePath, Type: &t}}})
		mounts = append(mounts, corev1.VolumeMount{Name: name, MountPath: HostRoot + nodePath, ReadOnly: true})
	}
	add("host-credential-provider-config", p.Config, corev1.HostPathFile)
	add("host-credential-provider-bin", p.BinDir, corev1.HostPathDirectory)
	return vols, mounts
}
