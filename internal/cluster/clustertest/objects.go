package clustertest

import "k8s.io/apimachinery/pkg/runtime"

// Objects returns every object of the fixture, for client-go's fake
// clientset (fake.NewSimpleClientset(f.Objects()...)).
func (f *Fixture) Objects() []runtime.Object {
	var objs []runtime.Object
	for i := range f.Namespaces {
		objs = append(objs, &f.Namespaces[i])
	}
	for i := range f.Nodes {
		objs = append(objs, &f.Nodes[i])
	}
	for i := range f.ServiceAccounts {
		objs = append(objs, &f.ServiceAccounts[i])
	}
	for i := range f.Secrets {
		objs = append(objs, &f.Secrets[i])
	}
	for i := range f.Deployments {
		objs = append(objs, &f.Deployments[i])
	}
	for i := range f.ReplicaSets {
		objs = append(objs, &f.ReplicaSets[i])
	}
	for i := range f.Pods {
		objs = append(objs, &f.Pods[i])
	}
	for i := range f.Events {
		objs = append(objs, &f.Events[i])
	}
	return objs
}
