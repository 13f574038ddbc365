// Package explain reads image pull failure text — kubelet events, container
// waiting messages, `kubectl describe pod` output, `kubectl get events|pod
// -o json|yaml`, and runtime or client errors (containerd, CRI-O, Docker,
// podman, skopeo, crane) — and gives the same verdict a live probe would:
// the failing layer and cause, the failing host and its role, the owner,
// a summary and next steps.
//
// Classify works on one message of any wrapping depth. It decomposes the
// message into its wrapping chain (kubelet → gRPC → runtime wrappers →
// HTTP/URL → Go net/TLS error → registry error body), finds the innermost
// cause and the innermost URL or host, and decides the host's role
// (registry, token realm, blob/CDN host, mirror). It runs in linear time
// with no regular expressions and caps its input at MaxMessageBytes.
//
// Parse recognises the input formats; Explain runs Parse and Classify and
// groups identical failures. The package does no I/O and no networking.
package explain
