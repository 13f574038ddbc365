// Package netlab builds small networks of Linux network namespaces in which
// a real container runtime pulls images the way a Kubernetes node does, so
// that pullpath's verdicts can be checked against the runtime itself
// (testing tier 3 in DESIGN.md, issue 3).
//
// A Net is one such network: a node and a second node, a router standing for
// the VPN gateway, a registry network (registry, token, blob and mirror
// addresses) and a DNS host, all on 198.18.0.0/15 addresses, joined by veth
// pairs and never linked to the root namespace. Faults are route changes on
// the router or the registry side (missing route, missing return route,
// silent drop). Each node has its own /etc (resolv.conf, hosts, trust store,
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
package netlab
