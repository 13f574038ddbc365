package cluster

import (
	"fmt"
	"strings"
)

// Kind is a workload kind diagnose accepts.
type Kind string

// The kinds.
const (
	KindPod         Kind = "pod"
	KindDeployment  Kind = "deployment"
	KindStatefulSet Kind = "statefulset"
	KindDaemonSet   Kind = "daemonset"
	KindJob         Kind = "job"
)

// WorkloadRef names a workload: kind, name and namespace.
type WorkloadRef struct {
	Kind      Kind
	Name      string
	Namespace string
}

// String is kind/name.
func (w WorkloadRef) String() string { return string(w.Kind) + "/" + w.Name }

var kindAliases = map[string]Kind{
	"pod": KindPod, "pods": KindPod, "po": KindPod,
	"deployment": KindDeployment, "deployments": KindDeployment, "deploy": KindDeployment,
	"statefulset": KindStatefulSet, "statefulsets": KindStatefulSet, "sts": KindStatefulSet,
	"daemonset": KindDaemonSet, "daemonsets": KindDaemonSet, "ds": KindDaemonSet,
	"job": KindJob, "jobs": KindJob,
}

// ParseWorkload parses the arguments of diagnose the way kubectl does:
// "KIND NAME", "KIND/NAME" or a bare "NAME" (a pod). Kinds accept kubectl's
// short names (deploy, sts, ds, po) and a group suffix (deployment.apps).
func ParseWorkload(args []string, namespace string) (WorkloadRef, error) {
	var kind, name string
	switch len(args) {
	case 1:
		if k, n, ok := strings.Cut(args[0], "/"); ok {
			kind, name = k, n
		} else {
			kind, name = "pod", args[0]
		}
	case 2:
		if strings.Contains(args[1], "/") {
			return WorkloadRef{}, fmt.Errorf("parsing workload %q: use KIND NAME or KIND/NAME", strings.Join(args, " "))
		}
		kind, name = args[0], args[1]
	default:
		return WorkloadRef{}, fmt.Errorf("parsing workload: want KIND/NAME, KIND NAME or a pod NAME, got %d arguments", len(args))
	}
	kind, _, _ = strings.Cut(strings.ToLower(kind), ".")
	k, ok := kindAliases[kind]
	if !ok {
		return WorkloadRef{}, fmt.Errorf("parsing workload: unknown kind %q (want pod, deployment, statefulset, daemonset or job)", kind)
	}
	if name == "" || strings.Contains(name, "/") {
		return WorkloadRef{}, fmt.Errorf("parsing workload: bad name %q", name)
	}
	return WorkloadRef{Kind: k, Name: name, Namespace: namespace}, nil
}
