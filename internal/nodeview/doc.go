// Package nodeview reads what a Kubernetes node's container runtime sees from
// a root directory, without touching the network: the resolver configuration
// (/etc/resolv.conf), the hosts file (/etc/hosts), the node trust store and
// containerd's per-registry configuration (certs.d/<host>/hosts.toml), the
// last interpreted by containerd's own parser so that mirrors, CAs and
// skip_verify mean exactly what they mean to the runtime.
//
// Every path is read under the root given to Load, so a copy of a node's /etc
// (or the node's filesystem mounted at /host) is read as the node reads it.
package nodeview
