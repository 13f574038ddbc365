// Package kube is pullpath's Kubernetes client: the few resources
// internal/cluster reads and writes (pods, events, nodes, service accounts
// and their tokens, secrets, the apps/v1 workloads and batch/v1 jobs), over
// client-go's rest package with a private runtime.Scheme that registers only
// core/v1, apps/v1, batch/v1 and authentication/v1.
//
// client-go's typed clientset (k8s.io/client-go/kubernetes) and every typed
// client import k8s.io/client-go/kubernetes/scheme, which registers every
// API group Kubernetes serves: about 50 more API packages and their
// apply-configuration types in the link, and an init that runs before every
// command. The interfaces here are the typed clients' method sets, cut down
// to what pullpath calls, so that tests may hand a fake clientset in through
// clustertest.FromClientset and code written against the clientset reads the
// same.
package kube
