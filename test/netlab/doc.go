// Package netlab builds small networks of Linux network namespaces in which
// a real container runtime pulls images the way a Kubernetes node does, so
// that pullpath's verdicts can be checked against the runtime itself
// (the network-namespace testing tier).
//
// A Net is one such network: a node and a second node, a router standing for
// the VPN gateway, a registry network (registry, token, blob and mirror
// addresses) and a DNS host, all on 198.18.0.0/15 addresses, joined by veth
// pairs and never linked to the root namespace. Faults are route changes on
// the router or the registry side (missing route, missing return route,
// silent drop), and nftables rules in the router for a path-MTU black hole
// (MTUBlackHole: routes locked at a small MTU, ICMP frag-needed dropped) and
// a drop of everything after the SYN-ACK (DropAfterConnect). Each node has its own /etc (resolv.conf, hosts, trust store,
// containerd certs.d) under a temporary root, seen by processes started with
// Netns.Command through `ip netns exec` and its /etc/netns bind mounts, so
// nothing in the lab ever reads the machine's resolver configuration.
//
// Servers of the embedded lab bind inside the namespaces through Net.Listen
// and Net.ListenPacket (a socket keeps the namespace it was created in).
// StartContainerd runs Debian's containerd inside a namespace with its own
// root, state and socket.
//
// Everything here needs root on Linux and the ip command; Sweep removes what
// an earlier, killed run left behind.
//
// # The ground-truth tier
//
// TestScenarios (scenarios_test.go) is the table of network faults: for every row a Net
// is built, the embedded lab (internal/lab) runs as a helper process inside
// the registry namespace (its DNS servers bound in the DNS namespace), the
// row's network faults are applied, containerd is started in the node
// namespace with the scenario's node root as its /etc, and then
//
//  1. containerd pulls through CRI PullImage (internal/cri) as the kubelet
//     does; its error text must show the expected layer and role;
//  2. `pullpath probe IMAGE --root <node root> -o json` runs in the same
//     namespace and must give the same layer and role;
//  3. `pullpath explain -o json` reads containerd's own event text and must
//     give the same layer (and role, where the text shows one).
//
// A column whose command is still a placeholder is reported "(not built)".
// Run it as root with Debian's containerd and iproute2 installed
// (apt-get install -y --no-upgrade containerd iproute2):
//
//	PULLPATH_NETLAB=1 go test ./test/netlab/ ./internal/cri/ -v
//
// Rows run 8 at a time (PULLPATH_NETLAB_PARALLEL); the tier takes about two
// minutes, bounded by the row whose dropped mirror costs containerd 30 s per
// request. -update rewrites testdata/containerd-errors.jsonl, the corpus of
// containerd's verbatim errors; PULLPATH_NETLAB_BIN runs a given pullpath
// binary instead of building ./cmd/pullpath.
package netlab
