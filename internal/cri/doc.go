// Package cri is a small client of the Container Runtime Interface image
// service (k8s.io/cri-api runtime.v1 ImageService). It asks the node's
// runtime (containerd) to pull an image over its unix socket exactly as the
// kubelet does, so that the runtime's own result and error text can be set
// beside pullpath's step-by-step probe (a fresh pull by the runtime is
// the test that counts).
//
// The error a failed pull returns keeps the runtime's gRPC status text
// verbatim (PullError.Text), in the form the kubelet puts into its
// "Failed to pull image" event.
package cri
