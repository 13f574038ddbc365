package cluster

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pullpath/pullpath/internal/cluster/kube"
)

// Kinds lists the workload kinds diagnose accepts, pods first.
var Kinds = []Kind{KindPod, KindDeployment, KindStatefulSet, KindDaemonSet, KindJob}

// KindOf returns the kind an argument names (kubectl's plural and short
// names and a group suffix accepted), if it names one.
func KindOf(arg string) (Kind, bool) {
	k, _, _ := strings.Cut(strings.ToLower(arg), ".")
	kind, ok := kindAliases[k]
	return kind, ok
}

// ListNames lists the names of the objects of kind in namespace, for shell
// completion, with one bounded request (at most limit names).
func ListNames(ctx context.Context, cs kube.Interface, kind Kind, namespace string, limit int64) ([]string, error) {
	c, cancel := reqCtx(ctx)
	defer cancel()
	opts := metav1.ListOptions{Limit: limit}
	var names []string
	switch kind {
	case KindPod:
		l, err := cs.CoreV1().Pods(namespace).List(c, opts)
		if err != nil {
			return nil, err
		}
		for _, o := range l.Items {
			names = append(names, o.Name)
		}
	case KindDeployment:
		l, err := cs.AppsV1().Deployments(namespace).List(c, opts)
		if err != nil {
			return nil, err
		}
		for _, o := range l.Items {
			names = append(names, o.Name)
		}
	case KindStatefulSet:
		l, err := cs.AppsV1().StatefulSets(namespace).List(c, opts)
		if err != nil {
			return nil, err
		}
		for _, o := range l.Items {
			names = append(names, o.Name)
		}
	case KindDaemonSet:
		l, err := cs.AppsV1().DaemonSets(namespace).List(c, opts)
		if err != nil {
			return nil, err
		}
		for _, o := range l.Items {
			names = append(names, o.Name)
		}
	case KindJob:
		l, err := cs.BatchV1().Jobs(namespace).List(c, opts)
		if err != nil {
			return nil, err
		}
		for _, o := range l.Items {
			names = append(names, o.Name)
		}
	default:
		return nil, fmt.Errorf("listing %s: unsupported kind", kind)
	}
	return names, nil
}
