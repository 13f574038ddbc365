// Package runtimecfg reads the node's container runtime configuration from a
// node root and turns it into the runtime's ordered pull plan: which
// endpoints the runtime tries for a registry, in which order, with which TLS
// settings, capabilities and path rewrites.
//
// It finds the runtime from the files (the containerd binary and the version
// its build information or the package database gives), reads
// /etc/containerd/config.toml (or the unit's --config) with its imports the
// way that containerd version does, and decides between the two registry
// models containerd has:
//
//   - config_path: a colon list of certs.d roots whose hosts.toml files are
//     read by containerd's own parser (internal/nodeview.RegistryHosts);
//   - the legacy inline keys mirrors, configs (tls, auth) and auths, read
//     only when config_path is empty.
//
// The rules differ by containerd version and are listed in rules.go, each
// with the version that introduced it and how it was verified.
//
// The plan (Plan, Endpoint) is self-contained: every endpoint in the
// runtime's order with its role, TLS settings and capabilities, so that a
// consumer (the probe, the credential planner) needs nothing else. Lints are
// warnings registered in internal/verdict's catalogue; a configuration the
// runtime refuses is a config-layer *verdict.Error naming the file and line.
package runtimecfg
