package cluster

import (
	"cmp"
	"path"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// NodeLayout is the runtime layout diagnose picks for a node from what the
// API server says about it (status.nodeInfo and spec.providerID), and the
// host paths the probe Job mounts for it.
type NodeLayout struct {
	// Name is the layout, named as runtimecfg names it on disk: k3s, rke2,
	// talos, bottlerocket, gke (COS), eks-al2, eks-al2023,
	// debian (Debian and Ubuntu), containerd (any other containerd
	// node) or cri-o.
	Name string `json:"name"`
	// Why names the node field that decided it.
	Why string `json:"why"`
	// RuntimeVersion is status.nodeInfo.containerRuntimeVersion as the
	// kubelet reported it ("containerd://1.7.27-k3s1"), passed to the
	// probe as --runtime-version.
	RuntimeVersion string `json:"runtime_version,omitempty"`
	// Mounts are the node paths the layout's runtime reads beyond the
	// host /etc and /run every probe Job mounts.
	Mounts []HostMount `json:"mounts"`
}

// HostMount is one read-only hostPath of the probe Job.
type HostMount struct {
	Name string              `json:"name"`
	Path string              `json:"path"`
	Type corev1.HostPathType `json:"type"`
	// Reads says which of the runtime's files the mount is for.
	Reads string `json:"reads"`
}

// baseMounts are mounted on every node: the host's /etc (resolv.conf,
// hosts, the trust store, the systemd units and drop-ins, and every
// layout's files that live in /etc: /etc/containerd/config.toml, its
// conf.d/config.d imports and certs.d, /etc/docker/certs.d, k3s's and
// RKE2's /etc/rancher/*/registries.yaml, Talos's /etc/cri, CRI-O's
// /etc/crio and /etc/containers) and /run (resolv.conf is often a symlink
// to systemd-resolved's files in /run). Both exist on every Linux node,
// so type Directory never fails the pod and never creates anything.
var baseMounts = []HostMount{
	{Name: "host-etc", Path: "/etc", Type: corev1.HostPathDirectory, Reads: "resolver, trust store, units, and the runtime configuration under /etc"},
	{Name: "host-run", Path: "/run", Type: corev1.HostPathDirectory, Reads: "resolv.conf targets (systemd-resolved)"},
}

// usrBin holds the runtime binary of a packaged runtime (Debian's and
// Ubuntu's containerd, containerd.io, Amazon Linux, Bottlerocket, COS,
// Talos, CRI-O): the probe reads its Go build information (never runs it)
// for the version and the TLS ClientHello it sends. /usr/bin exists on
// every Linux node; a File mount of /usr/bin/containerd would fail the pod
// where containerd was installed from the release tarball into
// /usr/local/bin, and the version then comes from --runtime-version.
var usrBin = HostMount{Name: "host-usr-bin", Path: "/usr/bin", Type: corev1.HostPathDirectory, Reads: "the runtime binary's build information"}

// The layouts' own paths outside /etc and /run. Each is a directory the
// distribution always creates, so type Directory neither fails the pod nor
// creates anything. An optional path of the layout (k3s's certs.d, which
// k3s writes only when registries.yaml has mirrors) is reached through
// such an always-present ancestor rather than mounted itself: type
// Directory on the optional path would fail the pod when it is absent, and
// type "" (or DirectoryOrCreate) would let the kubelet or the runtime
// create it on the node (containerd's CRI creates a missing bind-mount
// source as a directory).
var (
	// k3s writes its containerd config.toml (from config.toml.tmpl when
	// present) and, with mirrors in registries.yaml, certs.d/<host>/
	// hosts.toml under agent/etc/containerd at every start
	// (k3s pkg/agent/containerd/config.go; docs.k3s.io "Private Registry
	// Configuration"). The k3s binary embedding containerd is not mounted:
	// it lives in the install script's /usr/local/bin, /opt/bin, or a
	// package's /usr/bin, and a File mount fails the pod where it is not;
	// the version comes from the node's containerRuntimeVersion.
	k3sConfig = HostMount{Name: "host-k3s-containerd", Path: "/var/lib/rancher/k3s/agent/etc/containerd", Type: corev1.HostPathDirectory, Reads: "k3s's generated config.toml and certs.d"}
	// RKE2: the same files under its own data dir
	// (docs.rke2.io "Containerd Registry Configuration"), and its runtime
	// binaries, containerd among them, in /var/lib/rancher/rke2/bin (a
	// symlink into data/<version>/bin that RKE2 creates at every start;
	// the kubelet and the runtime follow it).
	rke2Config = HostMount{Name: "host-rke2-containerd", Path: "/var/lib/rancher/rke2/agent/etc/containerd", Type: corev1.HostPathDirectory, Reads: "RKE2's generated config.toml and certs.d"}
	rke2Bin    = HostMount{Name: "host-rke2-bin", Path: "/var/lib/rancher/rke2/bin", Type: corev1.HostPathDirectory, Reads: "RKE2's containerd binary's build information"}
)

// DetectNodeLayout picks the runtime layout of a node from the API
// server's view of it: the runtime's name from containerRuntimeVersion
// ("cri-o://1.31.1"), k3s and RKE2 from the kubelet's version suffix
// ("v1.31.4+k3s1", "v1.31.4+rke2r1") or providerID ("k3s://node"), the
// others from osImage ("Talos (v1.9.1)", "Bottlerocket OS 1.30.0
// (aws-k8s-1.31)", "Container-Optimized OS from Google", "Amazon Linux
// 2023.6.20250107", "Amazon Linux 2", "Debian GNU/Linux 12 (bookworm)",
// "Ubuntu 24.04.1 LTS").
func DetectNodeLayout(n *corev1.Node) NodeLayout {
	ni := n.Status.NodeInfo
	l := NodeLayout{RuntimeVersion: ni.ContainerRuntimeVersion}
	set := func(name, why string, mounts ...HostMount) NodeLayout {
		l.Name, l.Why, l.Mounts = name, why, mounts
		return l
	}
	kv, os, pid := ni.KubeletVersion, ni.OSImage, n.Spec.ProviderID
	switch {
	case strings.HasPrefix(ni.ContainerRuntimeVersion, "cri-o://"):
		// crio.conf(.d), registries.conf(.d), certs.d, policy.json and the
		// auth file are all in /etc.
		return set("cri-o", "containerRuntimeVersion "+ni.ContainerRuntimeVersion, usrBin)
	case strings.Contains(kv, "+k3s"):
		return set("k3s", "kubeletVersion "+kv, k3sConfig)
	case strings.HasPrefix(pid, "k3s://"):
		return set("k3s", "providerID "+pid, k3sConfig)
	case strings.Contains(kv, "+rke2"):
		return set("rke2", "kubeletVersion "+kv, rke2Config, rke2Bin)
	case strings.HasPrefix(pid, "rke2://"):
		return set("rke2", "providerID "+pid, rke2Config, rke2Bin)
	case strings.HasPrefix(os, "Talos"):
		// /etc/cri/containerd.toml, /etc/cri/conf.d and its hosts dir.
		return set("talos", "osImage "+os, usrBin)
	case strings.HasPrefix(os, "Bottlerocket"):
		// /etc/containerd/config.toml and certs.d, rendered by its API.
		return set("bottlerocket", "osImage "+os, usrBin)
	case strings.HasPrefix(os, "Container-Optimized OS"):
		return set("gke", "osImage "+os, usrBin)
	case strings.HasPrefix(os, "Amazon Linux 2023"):
		return set("eks-al2023", "osImage "+os, usrBin)
	case strings.HasPrefix(os, "Amazon Linux 2"):
		// /etc/containerd/config.toml imports /etc/containerd/config.d.
		return set("eks-al2", "osImage "+os, usrBin)
	case strings.HasPrefix(os, "Debian"), strings.HasPrefix(os, "Ubuntu"):
		// Debian's containerd binary has no module version; its version
		// is in /var/lib/dpkg/status, which is not mounted: the node's
		// containerRuntimeVersion (--runtime-version) is the running
		// daemon's and goes first anyway (runtimecfg.applyVersionSources).
		return set("debian", "osImage "+os, usrBin)
	}
	why := "containerRuntimeVersion " + ni.ContainerRuntimeVersion
	if ni.ContainerRuntimeVersion == "" {
		why = "nothing more specific in status.nodeInfo"
	}
	return set("containerd", why, usrBin)
}

// layoutVolumes returns the probe Job's read-only hostPath volumes and
// mounts for a layout (nil: the default, /etc, /run and /usr/bin): the
// base mounts and the layout's, each at its node path under HostRoot.
func layoutVolumes(l *NodeLayout) ([]corev1.Volume, []corev1.VolumeMount) {
	ms := append([]HostMount{}, baseMounts...)
	if l == nil {
		ms = append(ms, usrBin)
	} else {
		ms = append(ms, l.Mounts...)
	}
	var vols []corev1.Volume
	var mounts []corev1.VolumeMount
	for _, m := range ms {
		t := m.Type
		vols = append(vols, corev1.Volume{Name: m.Name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: m.Path, Type: &t}}})
		mounts = append(mounts, corev1.VolumeMount{Name: m.Name, MountPath: HostRoot + m.Path, ReadOnly: true})
	}
	return vols, mounts
}

// mountedPaths are the node paths a layout's Job mounts.
func mountedPaths(l *NodeLayout) []string {
	ps := []string{}
	for _, m := range baseMounts {
		ps = append(ps, m.Path)
	}
	if l == nil {
		return append(ps, usrBin.Path)
	}
	for _, m := range l.Mounts {
		ps = append(ps, m.Path)
	}
	return ps
}

// underMounts reports whether node path p is inside one of the mounted
// node paths.
func underMounts(p string, mounted []string) bool {
	p = path.Clean(p)
	for _, d := range mounted {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// withLayouts sets each target's layout from its node.
func withLayouts(targets []ProbeTarget, nodes []corev1.Node) []ProbeTarget {
	for i := range targets {
		for j := range nodes {
			if nodes[j].Name == targets[i].Node {
				l := DetectNodeLayout(&nodes[j])
				targets[i].Layout = &l
			}
		}
	}
	return targets
}

// CRI-O's per-namespace directories, as CRI-O's defaults name them
// (pkg/config DefaultConfig: signature_policy_dir /etc/crio/policies since
// 1.28, namespaced_auth_dir /etc/crio/auth since 1.35).
const (
	crioDefaultAuthDir   = "/etc/crio/auth"
	crioDefaultPolicyDir = "/etc/crio/policies"
)

// crioNamespaceMounts returns the read-only hostPath volumes of CRI-O's
// namespaced_auth_dir and signature_policy_dir for a CRI-O node, each only
// when it lies outside the paths the Job mounts anyway (the defaults are
// under /etc) and only when the node's CRI-O reads it: CRI-O creates both
// at start (pkg/config ImageConfig.Validate: os.MkdirAll), so type
// Directory is exact there and never creates anything; a CRI-O older than
// the directory (known from containerRuntimeVersion) has none, and the
// mount is left out rather than failing the pod.
func crioNamespaceMounts(l *NodeLayout, po ProbeOptions, mounted []string) ([]corev1.Volume, []corev1.VolumeMount) {
	major, minor, known := crioVersion(l.RuntimeVersion)
	atLeast := func(m, n int) bool { return !known || major > m || (major == m && minor >= n) }
	var vols []corev1.Volume
	var mounts []corev1.VolumeMount
	add := func(name, dir string) {
		if !path.IsAbs(dir) || underMounts(dir, mounted) {
			return
		}
		dir = path.Clean(dir)
		t := corev1.HostPathDirectory
		vols = append(vols, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir, Type: &t}}})
		mounts = append(mounts, corev1.VolumeMount{Name: name, MountPath: HostRoot + dir, ReadOnly: true})
	}
	if atLeast(1, 35) {
		add("host-crio-auth", cmp.Or(po.CRIONamespacedAuthDir, crioDefaultAuthDir))
	}
	if atLeast(1, 28) {
		add("host-crio-policies", cmp.Or(po.CRIOSignaturePolicyDir, crioDefaultPolicyDir))
	}
	return vols, mounts
}

// crioVersion reads major.minor from "cri-o://1.35.2".
func crioVersion(v string) (int, int, bool) {
	rest, ok := strings.CutPrefix(v, "cri-o://")
	if !ok {
		return 0, 0, false
	}
	parts := strings.SplitN(strings.TrimPrefix(rest, "v"), ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(strings.TrimRightFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return major, minor, true
}
