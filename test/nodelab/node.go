package nodelab

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/pullpath/pullpath/test/netlab"
)

// NodeSpec is one node to add.
type NodeSpec struct {
	// Name is the node name (AKS style: aks-<pool>-<id>-vmss00000N).
	Name string
	// Pool is the agent pool; NodeImageVersion the AKS node image.
	Pool, NodeImageVersion string
	// Mode is the AKS pool mode, "System" or "User".
	Mode string
	// Taints are registered with the node, as key=value:Effect.
	Taints []string
	// Index picks the node's subnet, 198.18.(100+Index).0/24; unique per Net.
	Index int
	// RootFiles are extra files of the node's root (path under Root ->
	// content); those in RootExec are made executable. KubeletArgs are
	// added to the kubelet's command line (e.g. its credential provider
	// flags, which may name files in RootFiles by their Root path).
	RootFiles   map[string][]byte
	RootExec    []string
	KubeletArgs []string
	// RootBinds are directories of the node's root (paths under Root)
	// bind-mounted over the same path in the node's private mount
	// namespace (containerd's and the kubelet's view, and so what a
	// hostPath volume of a pod on the node sees); the target must exist on
	// this machine, and nothing of the machine changes.
	RootBinds []string
	// ClusterDNS, when set, is the kubelet's clusterDNS (cluster domain
	// cluster.local): the nameserver of its ClusterFirst pods
	// (ServeClusterDNS). Unset, such pods get the node's resolver.
	ClusterDNS []netip.Addr
	// ContainerdConfig, when set, is where (a path under Root) the node's
	// containerd configuration is written and started from, as a
	// distribution lays it out (k3s:
	// var/lib/rancher/k3s/agent/etc/containerd/config.toml, under the
	// var/lib every node binds); ConfigPath is its CRI registry
	// config_path (default /etc/containerd/certs.d).
	ContainerdConfig, ConfigPath string
	// ProviderID is the kubelet's providerID (k3s registers "k3s://<node>").
	ProviderID string
	// Containerd is the containerd binary the node runs (a path, or a name
	// on PATH); empty is Debian's containerd 1.6 on PATH. A containerd 2.x
	// (tools/containerd2, PULLPATH_CONTAINERD2) reads the same version 2
	// config.toml: it migrates it to version 3 in memory at start.
	// tools/containerd2 builds the daemon only, so its pods run under
	// Debian's containerd-shim-runc-v2 on PATH.
	Containerd string
	// CRIProxy, when set, stands between the kubelet and containerd: it
	// serves on cri-proxy.sock in the node's directory, the kubelet's
	// containerRuntimeEndpoint and imageServiceEndpoint, and forwards every
	// call to containerd's socket (its Upstream is set here). The node's
	// Stop closes it.
	CRIProxy *CRIProxy
}

// NodeFiles are the files every node gets: the CA bundle its trust store
// holds, the hosts.toml files of its certs.d, the images the runtime uses.
type NodeFiles struct {
	// CABundle is the node's /etc/ssl/certs/ca-certificates.crt.
	CABundle []byte
	// HostsTOML maps a registry host to its certs.d hosts.toml; Extra files
	// go next to it (e.g. "registry.lab.test/ca.crt").
	HostsTOML map[string]string
	Extra     map[string][]byte
	// Hosts are extra /etc/hosts lines.
	Hosts []string
	// SandboxImage is containerd's sandbox_image.
	SandboxImage string
}

// Node is a running node: containerd then the kubelet, in one private
// mount namespace inside the node's network namespace.
type Node struct {
	Spec NodeSpec
	// NS is the node's network namespace; Addr its address (--node-ip).
	NS   *netlab.Netns
	Addr netip.Addr
	// Dir holds the node's files, containerd's root and the kubelet's.
	Dir string
	// Root is the node's root directory as pullpath probe --root reads it
	// (Root/etc/resolv.conf, ...).
	Root string
	// CgroupRoot is the kubelet's --cgroup-root (under every v1 hierarchy
	// or the v2 tree).
	CgroupRoot string

	proc *Proc
}

// Labels returns the node labels AKS sets, for --node-labels.
func (s NodeSpec) Labels() map[string]string {
	return map[string]string{
		"kubernetes.azure.com/agentpool":          s.Pool,
		"agentpool":                               s.Pool,
		"kubernetes.azure.com/mode":               strings.ToLower(s.Mode),
		"kubernetes.azure.com/node-image-version": s.NodeImageVersion,
		"kubernetes.azure.com/role":               "agent",
		"kubernetes.azure.com/cluster":            "MC_nodelab",
	}
}

// kernelTunables are the /proc/sys entries the kubelet's container manager
// sets (setupKernelTunables) with the values it wants. Each node covers
// them with files holding these values, so the kubelet finds them right
// and writes nothing, and no write could reach the machine.
var kernelTunables = map[string]string{
	"vm/overcommit_memory":      "1",
	"vm/panic_on_oom":           "0",
	"kernel/panic":              "10",
	"kernel/panic_on_oops":      "1",
	"kernel/keys/root_maxkeys":  "1000000",
	"kernel/keys/root_maxbytes": "25000000",
}

// AddNode creates the node's namespace and files and starts containerd and
// the kubelet. It returns once both run; the node registers on its own.
func (n *Net) AddNode(ctx context.Context, cp *ControlPlane, bin string, s NodeSpec, f NodeFiles) (nd *Node, err error) {
	subnet := netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 18, byte(100 + s.Index), 0}), 24)
	addr := netip.AddrFrom4([4]byte{198, 18, byte(100 + s.Index), 10})
	ns, err := n.AddHost(ctx, "n"+fmt.Sprint(s.Index), subnet, addr)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(n.Dir, "node-"+s.Name)
	nd = &Node{Spec: s, NS: ns, Addr: addr, Dir: dir, Root: filepath.Join(dir, "root"), CgroupRoot: "/" + n.ID + "-" + s.Name}
	defer func() {
		if err != nil {
			nd.Stop()
			nd = nil
		}
	}()
	etc := filepath.Join(nd.Root, "etc")
	files := map[string][]byte{
		"etc/resolv.conf":                   []byte("nameserver " + DNS.String() + "\n"),
		"etc/hosts":                         []byte("127.0.0.1 localhost\n" + addr.String() + " " + s.Name + "\n" + strings.Join(f.Hosts, "\n") + "\n"),
		"etc/ssl/certs/ca-certificates.crt": f.CABundle,
	}
	for host, toml := range f.HostsTOML {
		files["etc/containerd/certs.d/"+host+"/hosts.toml"] = []byte(toml)
	}
	for p, b := range f.Extra {
		files["etc/containerd/certs.d/"+p] = b
	}
	for p, b := range s.RootFiles {
		files[p] = b
	}
	rootBinds := s.RootBinds
	if !slices.Contains(rootBinds, "var/lib") {
		// Every AKS node from Kubernetes 1.30 on has the out-of-tree ACR
		// credential provider's config and bin dir in /var/lib/kubelet, and
		// diagnose --probe mounts both into its Job (hostPath File and
		// Directory, which fail the pod when absent). These nodes carry AKS
		// labels, so they get the paths too; the config matches only ACR
		// hosts, the kubelet is not given it, and no lab image is in ACR, so
		// nothing pulls differently.
		files[aksProviderConfig] = []byte(aksProviderConfigYAML)
		files[aksProviderBinDir+"/.keep"] = nil
		rootBinds = append(slices.Clone(rootBinds), "var/lib")
	}
	for p, b := range files {
		if err := writeFile(filepath.Join(nd.Root, p), b); err != nil {
			return nil, err
		}
	}
	for _, p := range s.RootExec {
		if err := os.Chmod(filepath.Join(nd.Root, p), 0o755); err != nil {
			return nil, err
		}
	}
	extraArgs := ""
	for _, a := range s.KubeletArgs {
		extraArgs += " " + shellQuote(a)
	}
	if err := os.MkdirAll(filepath.Join(etc, "containerd", "certs.d"), 0o755); err != nil {
		return nil, err
	}
	binds := []Bind{
		{filepath.Join(etc, "resolv.conf"), "/etc/resolv.conf"},
		{filepath.Join(etc, "hosts"), "/etc/hosts"},
		{filepath.Join(etc, "ssl/certs/ca-certificates.crt"), "/etc/ssl/certs/ca-certificates.crt"},
		{filepath.Join(etc, "containerd"), "/etc/containerd"},
	}
	for _, p := range rootBinds {
		binds = append(binds, Bind{filepath.Join(nd.Root, p), "/" + p})
	}
	keys := make([]string, 0, len(kernelTunables))
	for k := range kernelTunables {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := filepath.Join(dir, "sysctl", strings.ReplaceAll(k, "/", "."))
		if err := writeFile(p, []byte(kernelTunables[k]+"\n")); err != nil {
			return nil, err
		}
		binds = append(binds, Bind{p, "/proc/sys/" + k})
	}
	if err := makeCgroupRoot(nd.CgroupRoot); err != nil {
		return nil, err
	}

	cd := filepath.Join(dir, "containerd")
	socket := filepath.Join(cd, "containerd.sock")
	cni := filepath.Join(dir, "cni")
	cdConfig := filepath.Join(cd, "config.toml")
	cdText := containerdConfig(cd, cni, f.SandboxImage)
	if s.ContainerdConfig != "" {
		cdConfig = filepath.Join(nd.Root, s.ContainerdConfig)
	}
	if s.ConfigPath != "" {
		cdText = strings.Replace(cdText, `config_path = "/etc/containerd/certs.d"`, fmt.Sprintf("config_path = %q", s.ConfigPath), 1)
	}
	if err := writeFile(cdConfig, []byte(cdText)); err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(cni, "10-nodelab.conflist"), []byte(cniConflist(s.Index, filepath.Join(dir, "cni-ipam"), len(s.ClusterDNS) > 0))); err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "kubelet.kubeconfig")
	if err := writeKubeconfig(kubeconfig, cp.URL, cp.CAFile, "system:node:"+s.Name, cp.NodeToken(s.Name)); err != nil {
		return nil, err
	}
	kcfg := filepath.Join(dir, "kubelet.yaml")
	kubeletSocket := socket
	if p := s.CRIProxy; p != nil {
		p.Upstream = socket
		kubeletSocket = filepath.Join(dir, "cri-proxy.sock")
		if err := p.Serve(kubeletSocket); err != nil {
			return nil, fmt.Errorf("CRI proxy: %w", err)
		}
	}
	if err := writeFile(kcfg, []byte(kubeletConfig(nd, kubeletSocket))); err != nil {
		return nil, err
	}
	var labels []string
	for k, v := range s.Labels() {
		labels = append(labels, k+"="+v)
	}
	sort.Strings(labels)
	cdBin := s.Containerd
	if cdBin == "" {
		cdBin = "containerd"
	}
	script := fmt.Sprintf(`%[14]s --config %[1]s >>%[2]s 2>&1 &
i=0
while [ ! -S %[3]s ]; do i=$((i+1)); if [ $i -gt 600 ]; then echo "containerd did not start" >&2; exit 1; fi; sleep 0.1; done
exec %[4]s --config=%[5]s --kubeconfig=%[6]s --hostname-override=%[7]s --node-ip=%[8]s --root-dir=%[9]s --cert-dir=%[10]s --node-labels=%[11]s --v=1%[13]s >>%[12]s 2>&1
`, shellQuote(cdConfig), shellQuote(filepath.Join(dir, "containerd.log")), shellQuote(socket),
		shellQuote(filepath.Join(bin, "kubelet")), shellQuote(kcfg), shellQuote(kubeconfig), shellQuote(s.Name), addr,
		shellQuote(filepath.Join(dir, "kubelet")), shellQuote(filepath.Join(dir, "kubelet-pki")), shellQuote(strings.Join(labels, ",")),
		shellQuote(filepath.Join(dir, "kubelet.log")), extraArgs, shellQuote(cdBin))
	if err := writeFile(filepath.Join(dir, "node.sh"), []byte(script)); err != nil {
		return nil, err
	}
	nd.proc, err = Start(ctx, Spec{NS: ns, PrivateRun: true, Binds: binds, Args: []string{"/bin/sh", filepath.Join(dir, "node.sh")}, Env: baseEnv(), Log: filepath.Join(dir, "node.log")})
	if err != nil {
		return nil, err
	}
	return nd, nil
}

// Exited reports whether the node's kubelet (or its start script) ended.
func (nd *Node) Exited() bool { return nd.proc == nil || nd.proc.Exited() }

// Logs returns the tail of the node's logs.
func (nd *Node) Logs(n int) string {
	var b strings.Builder
	for _, f := range []string{"node.log", "containerd.log", "kubelet.log"} {
		fmt.Fprintf(&b, "=== %s %s\n%s\n", nd.Spec.Name, f, tail(filepath.Join(nd.Dir, f), n))
	}
	return b.String()
}

// Stop ends the kubelet and containerd, kills every process left in the
// node's namespace and cgroup root (shims and containers), and removes the
// cgroup root.
func (nd *Node) Stop() {
	if nd.proc != nil {
		nd.proc.Stop(10 * time.Second)
	}
	if nd.Spec.CRIProxy != nil {
		nd.Spec.CRIProxy.Close()
	}
	ctx := context.Background()
	for try := 0; try < 20; try++ {
		pids, _ := nd.NS.Pids(ctx)
		pids = append(pids, cgroupPids(nd.CgroupRoot)...)
		if len(pids) == 0 {
			break
		}
		for _, p := range pids {
			if p != os.Getpid() {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	removeCgroupRoot(nd.CgroupRoot)
}

// Fault runs `ip args...` inside the node's namespace (e.g. route del).
func (nd *Node) Fault(ctx context.Context, args ...string) error { return nd.NS.IP(ctx, args...) }

func writeFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// containerdConfig is netlab's containerd configuration with the node
// tier's additions: runc through CRI with restrict_oom_score_adj (runc
// cannot set oom_score_adj here without CAP_SYS_RESOURCE), the lab's pause
// image and Debian's CNI plugins with a per-node conflist directory.
func containerdConfig(dir, cniDir, sandbox string) string {
	c := netlab.ContainerdConfig(dir)
	c = strings.Replace(c, "  disable_tcp_service = true\n", fmt.Sprintf("  disable_tcp_service = true\n  restrict_oom_score_adj = true\n  sandbox_image = %q\n", sandbox), 1)
	c = strings.Replace(c, fmt.Sprintf("    bin_dir = %q\n    conf_dir = %q\n", filepath.Join(dir, "cni"), filepath.Join(dir, "cni")),
		fmt.Sprintf("    bin_dir = %q\n    conf_dir = %q\n", CNIBinDir, cniDir), 1)
	return c
}

// cniConflist is a bridge network for the node's pods, 10.244.<index>.0/24,
// with host-local IPAM keeping its state under ipamDir (not the machine's
// /var/lib/cni). containerd adds the loopback network itself. With
// routed, the pods get a default route through the bridge (a node with a
// cluster DNS, whose pods leave the node; Net.RoutePods routes them back).
func cniConflist(index int, ipamDir string, routed bool) string {
	return fmt.Sprintf(`{
  "cniVersion": "0.4.0",
  "name": "nodelab",
  "plugins": [{
    "type": "bridge",
    "bridge": "cni0",
    "isGateway": true,
    "isDefaultGateway": %t,
    "ipMasq": false,
    "ipam": {"type": "host-local", "ranges": [[{"subnet": %q}]], "dataDir": %q}
  }]
}
`, routed, PodSubnet(index), ipamDir)
}

func kubeletConfig(nd *Node, socket string) string {
	var taints strings.Builder
	for _, t := range nd.Spec.Taints {
		kv, effect, _ := strings.Cut(t, ":")
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&taints, "- {key: %q, value: %q, effect: %q}\n", k, v, effect)
	}
	tl := "registerWithTaints: []\n"
	if taints.Len() > 0 {
		tl = "registerWithTaints:\n" + taints.String()
	}
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %[1]s
port: 10250
readOnlyPort: 0
healthzPort: 0
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
cgroupRoot: %[2]s
cgroupsPerQOS: true
containerRuntimeEndpoint: unix://%[3]s
imageServiceEndpoint: unix://%[3]s
failSwapOn: false
makeIPTablesUtilChains: false
oomScoreAdj: 0
protectKernelDefaults: false
resolvConf: /etc/resolv.conf
podLogsDir: %[4]s
volumePluginDir: %[5]s
localStorageCapacityIsolation: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {"memory.available": "50Mi", "nodefs.available": "1%%", "imagefs.available": "1%%", "nodefs.inodesFree": "1%%", "imagefs.inodesFree": "1%%"}
rotateCertificates: false
serverTLSBootstrap: false
nodeStatusUpdateFrequency: 10s
%[6]s%[7]s%[8]s`, nd.Addr, nd.CgroupRoot, socket, filepath.Join(nd.Dir, "pod-logs"), filepath.Join(nd.Dir, "volume-plugins"), tl, clusterDNS(nd.Spec.ClusterDNS), providerID(nd.Spec.ProviderID))
}

// providerID is the kubelet's providerID line, or "".
func providerID(id string) string {
	if id == "" {
		return ""
	}
	return fmt.Sprintf("providerID: %q\n", id)
}

// clusterDNS is the kubelet's clusterDomain and clusterDNS, or "".
func clusterDNS(servers []netip.Addr) string {
	if len(servers) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("clusterDomain: cluster.local\nclusterDNS:\n")
	for _, s := range servers {
		fmt.Fprintf(&b, "- %s\n", s)
	}
	return b.String()
}

// cgroupMounts lists the cgroup hierarchies of this machine: each v1
// controller directory under /sys/fs/cgroup, or /sys/fs/cgroup itself on a
// pure v2 machine.
func cgroupMounts() []string {
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		return []string{"/sys/fs/cgroup"}
	}
	var out []string
	for _, c := range []string{"cpu", "cpuacct", "cpuset", "memory", "pids", "blkio", "devices", "freezer", "hugetlb", "systemd"} {
		p := filepath.Join("/sys/fs/cgroup", c)
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			out = append(out, p)
		}
	}
	return out
}

func makeCgroupRoot(root string) error {
	for _, m := range cgroupMounts() {
		d := filepath.Join(m, root)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("creating cgroup %s: %w", d, err)
		}
		if filepath.Base(m) == "cpuset" {
			for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
				b, err := os.ReadFile(filepath.Join(m, f))
				if err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(d, f), b, 0o644); err != nil {
					return fmt.Errorf("writing %s: %w", filepath.Join(d, f), err)
				}
			}
		}
	}
	return nil
}

// cgroupPids lists the processes in root's subtree, in every hierarchy.
func cgroupPids(root string) []int {
	var pids []int
	for _, m := range cgroupMounts() {
		_ = filepath.WalkDir(filepath.Join(m, root), func(p string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			b, err := os.ReadFile(filepath.Join(p, "cgroup.procs"))
			if err != nil {
				return nil
			}
			for _, f := range strings.Fields(string(b)) {
				var pid int
				if _, err := fmt.Sscan(f, &pid); err == nil {
					pids = append(pids, pid)
				}
			}
			return nil
		})
	}
	return pids
}

// removeCgroupRoot removes root's subtree, deepest first.
func removeCgroupRoot(root string) error {
	var errs []error
	for _, m := range cgroupMounts() {
		var dirs []string
		_ = filepath.WalkDir(filepath.Join(m, root), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := syscall.Rmdir(dirs[i]); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, fmt.Errorf("removing cgroup %s: %w", dirs[i], err))
			}
		}
	}
	return errors.Join(errs...)
}

// The paths of AKS's ACR credential provider (AgentBaker: the kubelet's
// --image-credential-provider-config and -bin-dir from Kubernetes 1.30),
// under the node root.
const (
	aksProviderConfig = "var/lib/kubelet/credential-provider-config.yaml"
	aksProviderBinDir = "var/lib/kubelet/credential-provider"
)

// aksProviderConfigYAML is the shape of AKS's provider config.
const aksProviderConfigYAML = `apiVersion: kubelet.config.k8s.io/v1
kind: CredentialProviderConfig
providers:
  - name: acr-credential-provider
    apiVersion: credentialprovider.kubelet.k8s.io/v1
    defaultCacheDuration: 10m
    matchImages:
      - "*.azurecr.io"
      - "*.azurecr.cn"
      - "*.azurecr.de"
      - "*.azurecr.us"
    args:
      - /etc/kubernetes/azure.json
`
