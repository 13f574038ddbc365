// Package netpath checks one host the way the node's container runtime
// reaches it, step by step: dns (every nameserver of the node's resolv.conf
// asked directly, /etc/hosts first, CNAME chains, private-zone answers),
// route (a TCP connect with the egress interface and gateway of the route
// taken) and tls (the presented chain, verified against the node trust
// store with Go's own rules). It knows nothing of registries: the caller
// names the host, the port and the TLS configuration.
//
// Every network step has a deadline, and every failure is a
// *verdict.Error whose wrapped error is Go's own (so its text is what
// containerd would log); the caller sets Role and Endpoint.
package netpath
