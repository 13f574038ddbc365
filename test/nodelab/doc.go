// Package nodelab runs a small Kubernetes cluster of real nodes in network
// namespaces (the real-node testing tier): etcd, kube-apiserver,
// kube-scheduler and kube-controller-manager in a control-plane namespace,
// the embedded lab registry (TLS, token auth, a redirecting blob host) and
// its DNS in their own namespaces, a second registry standing for MCR that
// serves the pause and probe images, and nodes, each with its own kubelet,
// containerd, runc, resolv.conf, hosts, hosts.toml, trust store, cgroup
// root, /run and CNI bridge, in pools labelled as AKS labels them.
//
// Namespaces are built with test/netlab's helpers and named
// ppn-<pid>-<seq>-<host> (netlab uses pp-), so both tiers can run at once
// and SweepPrefix removes what a killed run left behind. Every address lies
// in 198.18.0.0/15 and none is ever put on an interface of the root
// namespace; tests reach the API server by dialing from inside the
// control-plane namespace.
//
// Every process is started with nsenter --net into its namespace and
// unshare --mount into a private mount namespace (ip netns exec would
// remount /sys and hide the cgroup mounts). There the node's own files are
// bind-mounted over /etc/resolv.conf, /etc/hosts, /etc/containerd and the
// CA bundle, a tmpfs covers /run (containerd 1.6 keeps shim sockets and
// runc state under /run/containerd whatever --state says), and the /proc/sys
// entries the kubelet would set globally (vm.overcommit_memory,
// vm.panic_on_oom, kernel.panic, kernel.panic_on_oops, kernel.keys.*) are
// covered by files holding the values it wants, so it never writes the
// machine's. The kubelet runs with makeIPTablesUtilChains false and
// containerd with restrict_oom_score_adj. Snapshot and Compare check that
// the machine's sysctls and iptables are unchanged after a run.
//
// TestMonitorOnRealNodes installs deploy/monitor's DaemonSet on the nodes
// and scrapes the agents with Debian's Prometheus (StartPrometheus) in the
// control-plane namespace. RouteKubernetesService gives each node the
// kubernetes Service's ClusterIP, as kube-proxy would, inside the node's
// namespace; ReadProcUsage and FindProcess read the agents' cost from
// /proc.
//
// Run it as root with Debian's containerd, runc and containernetworking-
// plugins, and the binaries of tools/kube/build.sh:
//
//	export PULLPATH_KUBE_BIN="$(tools/kube/build.sh)"
//	PULLPATH_NODELAB=1 flock /tmp/pp-netns.lock go test ./test/nodelab/ -v
package nodelab
