// Package probe walks the whole pull path for one image the way the node's
// runtime (containerd) would: node view → plan of hosts → dns, route and tls
// for every host as it is discovered → the registry session (manifest HEAD,
// token realm, manifest, index → platform, config and every layer blob,
// following redirects to blob hosts) → a trace → the verdict.
package probe
