// Package cluster diagnoses an image pull failure of a Kubernetes workload
// from the cluster's point of view: the failure the kubelet reported, the
// node the pod landed on, the node pools that could run it, which nodes hold
// the image in their cache (and so only look healthy), the change in the
// timeline that triggered the failure, the pull identity (without secrets),
// and, on request, a pullpath probe run on the nodes themselves as Jobs.
//
// It is the only package of pullpath that imports client-go. Reading the API
// (Gather, RunProbes) is kept apart from the analysis (Analyze), which is a
// pure function from typed objects to a Report, so it can be tested and
// benchmarked without a cluster. It renders nothing: diagnose's text and
// HTML renderers are internal/cli/clustercmd's, beside the other commands'.
package cluster
