// Package registry speaks the distribution protocol the way containerd does
// for a pull: HEAD the manifest with containerd's Accept headers, answer a 401
// challenge at the token realm (anonymous GET, or the OAuth2 POST with a GET
// fallback), GET the manifest or index, pick the node's platform, and stream
// every blob through its digest, following redirects to blob hosts.
//
// It never retries: a diagnosis must see the first failure. Every failure is
// a *verdict.Error carrying the layer, cause, role and endpoint.
package registry
