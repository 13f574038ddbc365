package kube

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// Interface is the part of the Kubernetes API pullpath uses. *Client
// implements it over the API server; clustertest.FromClientset adapts client-go's
// typed (or fake) clientset to it for tests.
type Interface interface {
	CoreV1() CoreV1Interface
	AppsV1() AppsV1Interface
	BatchV1() BatchV1Interface
	// CreateToken asks the API server for a token of service account
	// namespace/name (the TokenRequest API, serviceaccounts/token).
	CreateToken(ctx context.Context, namespace, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error)
}

// Resource is the method set of a typed client for one resource (a
// *corev1.Pod with its *corev1.PodList, for example), as client-go's typed
// clients declare it.
type Resource[T, L any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error)
}

// CoreV1Interface holds the core/v1 resources pullpath uses.
type CoreV1Interface interface {
	Pods(namespace string) PodInterface
	Events(namespace string) Resource[*corev1.Event, *corev1.EventList]
	Nodes() Resource[*corev1.Node, *corev1.NodeList]
	ServiceAccounts(namespace string) ServiceAccountInterface
	Secrets(namespace string) Resource[*corev1.Secret, *corev1.SecretList]
}

// PodInterface is the pods client, with the log subresource.
type PodInterface interface {
	Resource[*corev1.Pod, *corev1.PodList]
	// GetLogs returns the request for a pod's log (pods/log); the
	// caller bounds it with opts.LimitBytes and runs it with DoRaw or Stream.
	GetLogs(name string, opts *corev1.PodLogOptions) *rest.Request
}

// ServiceAccountInterface is the service accounts client, with the token
// subresource.
type ServiceAccountInterface interface {
	Resource[*corev1.ServiceAccount, *corev1.ServiceAccountList]
	CreateToken(ctx context.Context, name string, tr *authenticationv1.TokenRequest, opts metav1.CreateOptions) (*authenticationv1.TokenRequest, error)
}

// AppsV1Interface holds the apps/v1 workloads.
type AppsV1Interface interface {
	Deployments(namespace string) Resource[*appsv1.Deployment, *appsv1.DeploymentList]
	StatefulSets(namespace string) Resource[*appsv1.StatefulSet, *appsv1.StatefulSetList]
	DaemonSets(namespace string) Resource[*appsv1.DaemonSet, *appsv1.DaemonSetList]
	ReplicaSets(namespace string) Resource[*appsv1.ReplicaSet, *appsv1.ReplicaSetList]
}

// BatchV1Interface holds batch/v1 jobs.
type BatchV1Interface interface {
	Jobs(namespace string) Resource[*batchv1.Job, *batchv1.JobList]
}

// codecs are the serializers for the types pullpath reads, built on the
// first NewForConfig rather than in an init, so that commands that never
// reach a cluster do not pay for the scheme.
type codecs struct {
	scheme  *runtime.Scheme
	factory serializer.CodecFactory
	params  runtime.ParameterCodec
}

var theCodecs = sync.OnceValue(func() codecs {
	s := runtime.NewScheme()
	// Status, WatchEvent and the option types, unversioned, as client-go's
	// kubernetes/scheme registers them.
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	b := runtime.NewSchemeBuilder(corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme, authenticationv1.AddToScheme)
	utilruntime.Must(b.AddToScheme(s))
	return codecs{scheme: s, factory: serializer.NewCodecFactory(s), params: runtime.NewParameterCodec(s)}
})

// Client is a Kubernetes client for the resources of Interface: one REST
// client per API group version, sharing one transport and one rate limiter,
// as client-go's kubernetes.NewForConfig builds them.
type Client struct {
	core, apps, batch *rest.RESTClient
	params            runtime.ParameterCodec
}

var _ Interface = (*Client)(nil)

// NewForConfig builds a Client from cfg the way kubernetes.NewForConfig
// builds a clientset: the default user agent unless cfg sets one, one HTTP
// client for every group, and a token-bucket rate limiter from cfg.QPS and
// cfg.Burst unless cfg has a RateLimiter.
func NewForConfig(cfg *rest.Config) (*Client, error) {
	c := *cfg
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	if c.RateLimiter == nil && c.QPS > 0 {
		if c.Burst <= 0 {
			return nil, fmt.Errorf("burst is required to be greater than 0 when RateLimiter is not set and QPS is set to greater than 0")
		}
		c.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(c.QPS, c.Burst)
	}
	hc, err := rest.HTTPClientFor(&c)
	if err != nil {
		return nil, err
	}
	cd := theCodecs()
	out := &Client{params: cd.params}
	for _, g := range []struct {
		dst     **rest.RESTClient
		gv      schema.GroupVersion
		apiPath string
	}{
		{&out.core, corev1.SchemeGroupVersion, "/api"},
		{&out.apps, appsv1.SchemeGroupVersion, "/apis"},
		{&out.batch, batchv1.SchemeGroupVersion, "/apis"},
	} {
		if *g.dst, err = restClient(&c, hc, g.gv, g.apiPath, cd); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// restClient is client-go's generated setConfigDefaults plus
// rest.RESTClientForConfigAndClient for one group version.
func restClient(cfg *rest.Config, hc *http.Client, gv schema.GroupVersion, apiPath string, cd codecs) (*rest.RESTClient, error) {
	c := *cfg
	c.GroupVersion = &gv
	c.APIPath = apiPath
	c.NegotiatedSerializer = rest.CodecFactoryForGeneratedClient(cd.scheme, cd.factory).WithoutConversion()
	return rest.RESTClientForConfigAndClient(&c, hc)
}

// CoreV1 returns the core/v1 resources.
func (c *Client) CoreV1() CoreV1Interface { return coreV1{c} }

// AppsV1 returns the apps/v1 resources.
func (c *Client) AppsV1() AppsV1Interface { return appsV1{c} }

// BatchV1 returns the batch/v1 resources.
func (c *Client) BatchV1() BatchV1Interface { return batchV1{c} }

// CreateToken requests a token for service account namespace/name.
func (c *Client) CreateToken(ctx context.Context, namespace, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	return c.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, tr, metav1.CreateOptions{})
}

type coreV1 struct{ c *Client }

func (g coreV1) Pods(ns string) PodInterface {
	return pods{newResource(g.c.core, g.c.params, "pods", ns, func() *corev1.Pod { return &corev1.Pod{} }, func() *corev1.PodList { return &corev1.PodList{} })}
}

func (g coreV1) Events(ns string) Resource[*corev1.Event, *corev1.EventList] {
	return newResource(g.c.core, g.c.params, "events", ns, func() *corev1.Event { return &corev1.Event{} }, func() *corev1.EventList { return &corev1.EventList{} })
}

func (g coreV1) Nodes() Resource[*corev1.Node, *corev1.NodeList] {
	return newResource(g.c.core, g.c.params, "nodes", "", func() *corev1.Node { return &corev1.Node{} }, func() *corev1.NodeList { return &corev1.NodeList{} })
}

func (g coreV1) ServiceAccounts(ns string) ServiceAccountInterface {
	return serviceAccounts{newResource(g.c.core, g.c.params, "serviceaccounts", ns, func() *corev1.ServiceAccount { return &corev1.ServiceAccount{} }, func() *corev1.ServiceAccountList { return &corev1.ServiceAccountList{} })}
}

func (g coreV1) Secrets(ns string) Resource[*corev1.Secret, *corev1.SecretList] {
	return newResource(g.c.core, g.c.params, "secrets", ns, func() *corev1.Secret { return &corev1.Secret{} }, func() *corev1.SecretList { return &corev1.SecretList{} })
}

type appsV1 struct{ c *Client }

func (g appsV1) Deployments(ns string) Resource[*appsv1.Deployment, *appsv1.DeploymentList] {
	return newResource(g.c.apps, g.c.params, "deployments", ns, func() *appsv1.Deployment { return &appsv1.Deployment{} }, func() *appsv1.DeploymentList { return &appsv1.DeploymentList{} })
}

func (g appsV1) StatefulSets(ns string) Resource[*appsv1.StatefulSet, *appsv1.StatefulSetList] {
	return newResource(g.c.apps, g.c.params, "statefulsets", ns, func() *appsv1.StatefulSet { return &appsv1.StatefulSet{} }, func() *appsv1.StatefulSetList { return &appsv1.StatefulSetList{} })
}

func (g appsV1) DaemonSets(ns string) Resource[*appsv1.DaemonSet, *appsv1.DaemonSetList] {
	return newResource(g.c.apps, g.c.params, "daemonsets", ns, func() *appsv1.DaemonSet { return &appsv1.DaemonSet{} }, func() *appsv1.DaemonSetList { return &appsv1.DaemonSetList{} })
}

func (g appsV1) ReplicaSets(ns string) Resource[*appsv1.ReplicaSet, *appsv1.ReplicaSetList] {
	return newResource(g.c.apps, g.c.params, "replicasets", ns, func() *appsv1.ReplicaSet { return &appsv1.ReplicaSet{} }, func() *appsv1.ReplicaSetList { return &appsv1.ReplicaSetList{} })
}

type batchV1 struct{ c *Client }

func (g batchV1) Jobs(ns string) Resource[*batchv1.Job, *batchv1.JobList] {
	return newResource(g.c.batch, g.c.params, "jobs", ns, func() *batchv1.Job { return &batchv1.Job{} }, func() *batchv1.JobList { return &batchv1.JobList{} })
}

// resource is one resource of one group version, in one namespace ("" for
// a cluster-scoped resource or every namespace). Its requests are the ones
// client-go's gentype.Client builds for the generated typed clients, which
// prefer protobuf for the built-in types.
type resource[T, L runtime.Object] struct {
	rc      *rest.RESTClient
	params  runtime.ParameterCodec
	name    string
	ns      string
	newObj  func() T
	newList func() L
}

func newResource[T, L runtime.Object](rc *rest.RESTClient, params runtime.ParameterCodec, name, ns string, newObj func() T, newList func() L) *resource[T, L] {
	return &resource[T, L]{rc: rc, params: params, name: name, ns: ns, newObj: newObj, newList: newList}
}

func (r *resource[T, L]) req(verb string) *rest.Request {
	return r.rc.Verb(verb).UseProtobufAsDefault().NamespaceIfScoped(r.ns, r.ns != "").Resource(r.name)
}

func timeout(opts metav1.ListOptions) time.Duration {
	if opts.TimeoutSeconds == nil {
		return 0
	}
	return time.Duration(*opts.TimeoutSeconds) * time.Second
}

// Get reads the object called name.
func (r *resource[T, L]) Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error) {
	out := r.newObj()
	err := r.req(http.MethodGet).Name(name).VersionedParams(&opts, r.params).Do(ctx).Into(out)
	return out, err
}

// List reads the objects opts selects.
func (r *resource[T, L]) List(ctx context.Context, opts metav1.ListOptions) (L, error) {
	out := r.newList()
	err := r.req(http.MethodGet).VersionedParams(&opts, r.params).Timeout(timeout(opts)).Do(ctx).Into(out)
	return out, err
}

// Watch watches the objects opts selects.
func (r *resource[T, L]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return r.req(http.MethodGet).VersionedParams(&opts, r.params).Timeout(timeout(opts)).Watch(ctx)
}

// Create creates obj and returns the server's copy.
func (r *resource[T, L]) Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error) {
	out := r.newObj()
	err := r.req(http.MethodPost).VersionedParams(&opts, r.params).Body(obj).Do(ctx).Into(out)
	return out, err
}

// Delete deletes the object called name.
func (r *resource[T, L]) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return r.req(http.MethodDelete).Name(name).Body(&opts).Do(ctx).Error()
}

// Patch patches the object called name (or its subresource) with data.
func (r *resource[T, L]) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error) {
	out := r.newObj()
	err := r.rc.Patch(pt).UseProtobufAsDefault().NamespaceIfScoped(r.ns, r.ns != "").Resource(r.name).
		Name(name).SubResource(subresources...).VersionedParams(&opts, r.params).Body(data).Do(ctx).Into(out)
	return out, err
}

type pods struct {
	*resource[*corev1.Pod, *corev1.PodList]
}

// GetLogs returns the request for the log of pod name.
func (p pods) GetLogs(name string, opts *corev1.PodLogOptions) *rest.Request {
	return p.rc.Get().Namespace(p.ns).Name(name).Resource("pods").SubResource("log").VersionedParams(opts, p.params)
}

type serviceAccounts struct {
	*resource[*corev1.ServiceAccount, *corev1.ServiceAccountList]
}

// CreateToken requests a token for service account name.
func (s serviceAccounts) CreateToken(ctx context.Context, name string, tr *authenticationv1.TokenRequest, opts metav1.CreateOptions) (*authenticationv1.TokenRequest, error) {
	out := &authenticationv1.TokenRequest{}
	err := s.req(http.MethodPost).Name(name).SubResource("token").VersionedParams(&opts, s.params).Body(tr).Do(ctx).Into(out)
	return out, err
}
