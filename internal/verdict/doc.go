// Package verdict holds the vocabulary every pullpath verdict speaks, whether
// it comes from a live probe, from reading a kubelet event, or from a cluster
// diagnosis: the layer of the pull path that failed, the finer cause, the
// role of the failing endpoint, who owns the fix, and what to check next.
//
// The words are the stable interface described in docs/contract.md. The ordering
// rules (pull order, "furthest along the path") and the catalogue of causes
// with their owners and next steps live here so that the probe and the
// message classifier cannot drift apart.
package verdict
