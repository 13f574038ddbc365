// Package monitor is pullpath's node agent: it runs the probe engine on a
// schedule from the node's own network namespace and files (the DaemonSet
// mounts the host's / at /host), and reports what it sees as Prometheus
// metrics, a node condition and events on transitions, so that a broken pull
// path is seen before a scale-up lands on it.
//
// It knows nothing of how a probe works (internal/probe does that) and links
// no typed Kubernetes client: the node condition, the node's labels and the
// events go through a small REST client (kube.go) that speaks only the few
// JSON shapes it needs. Status aggregation for `pullpath monitor status`
// (status.go) works on plain node records, filled by internal/cluster in the
// full binary.
package monitor
