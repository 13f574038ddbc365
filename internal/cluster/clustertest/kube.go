package clustertest

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/pullpath/pullpath/internal/cluster/kube"
)

// FromClientset adapts client-go's typed clientset (or its fake) to
// kube.Interface, the client internal/cluster takes, so that tests may keep
// fake.NewSimpleClientset. The binaries use kube.Client, which does not
// link the typed clientset.
func FromClientset(cs kubernetes.Interface) kube.Interface { return clientset{cs} }

type clientset struct{ cs kubernetes.Interface }

func (c clientset) CoreV1() kube.CoreV1Interface   { return coreV1(c) }
func (c clientset) AppsV1() kube.AppsV1Interface   { return appsV1(c) }
func (c clientset) BatchV1() kube.BatchV1Interface { return batchV1(c) }

func (c clientset) CreateToken(ctx context.Context, namespace, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	return c.cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, tr, metav1.CreateOptions{})
}

type coreV1 struct{ cs kubernetes.Interface }

func (g coreV1) Pods(ns string) kube.PodInterface { return g.cs.CoreV1().Pods(ns) }
func (g coreV1) Events(ns string) kube.Resource[*corev1.Event, *corev1.EventList] {
	return g.cs.CoreV1().Events(ns)
}
func (g coreV1) Nodes() kube.Resource[*corev1.Node, *corev1.NodeList] { return g.cs.CoreV1().Nodes() }
func (g coreV1) ServiceAccounts(ns string) kube.ServiceAccountInterface {
	return g.cs.CoreV1().ServiceAccounts(ns)
}
func (g coreV1) Secrets(ns string) kube.Resource[*corev1.Secret, *corev1.SecretList] {
	return g.cs.CoreV1().Secrets(ns)
}

type appsV1 struct{ cs kubernetes.Interface }

func (g appsV1) Deployments(ns string) kube.Resource[*appsv1.Deployment, *appsv1.DeploymentList] {
	return g.cs.AppsV1().Deployments(ns)
}
func (g appsV1) StatefulSets(ns string) kube.Resource[*appsv1.StatefulSet, *appsv1.StatefulSetList] {
	return g.cs.AppsV1().StatefulSets(ns)
}
func (g appsV1) DaemonSets(ns string) kube.Resource[*appsv1.DaemonSet, *appsv1.DaemonSetList] {
	return g.cs.AppsV1().DaemonSets(ns)
}
func (g appsV1) ReplicaSets(ns string) kube.Resource[*appsv1.ReplicaSet, *appsv1.ReplicaSetList] {
	return g.cs.AppsV1().ReplicaSets(ns)
}

type batchV1 struct{ cs kubernetes.Interface }

func (g batchV1) Jobs(ns string) kube.Resource[*batchv1.Job, *batchv1.JobList] {
	return g.cs.BatchV1().Jobs(ns)
}
