package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/pullpath/pullpath/internal/cluster/kube"
)

// ErrNotFound is wrapped by Gather's error when the workload does not exist.
var ErrNotFound = errors.New("not found")

// ErrForbidden is wrapped by Gather's error when the credentials may not
// read the workload.
var ErrForbidden = errors.New("forbidden")

const (
	// maxEventPods bounds the pods whose events are read.
	maxEventPods = 10
	// maxNodeEvents bounds the node events read.
	maxNodeEvents = 5000
	// pageSize is the list page size for nodes.
	pageSize = 500
	// requestTimeout bounds every API request.
	requestTimeout = 30 * time.Second
)

// NewClientset builds pullpath's Kubernetes client (kube.Client, not
// client-go's typed clientset) from cfg (KubeFlags.Clientset builds cfg
// from kubectl's flags) with pullpath's user agent, a request timeout unless
// --request-timeout set one, and rate limits.
func NewClientset(cfg *rest.Config) (kube.Interface, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.Timeout == 0 {
		cfg.Timeout = requestTimeout
	}
	cfg.UserAgent = "pullpath-diagnose"
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 100
	}
	cs, err := kube.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	return cs, nil
}

func apiErr(what string, err error) error {
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("getting %s: %w: %w", what, ErrNotFound, err)
	case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
		return fmt.Errorf("getting %s: %w: %w", what, ErrForbidden, err)
	}
	return fmt.Errorf("getting %s: %w", what, err)
}

func reqCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, requestTimeout)
}

// Gather reads from the cluster everything Analyze needs about ref: the
// workload and its pods, their events, every node, node events, the service
// account and the pull secrets (summarised, never kept). Reading the
// workload is required; everything else degrades to a note in
// Input.Errors when it cannot be read.
func Gather(ctx context.Context, cs kube.Interface, ref WorkloadRef) (*Input, error) {
	in := &Input{Workload: ref, PullSecrets: map[string]SecretInfo{}}
	if err := gatherWorkload(ctx, cs, ref, in); err != nil {
		return in, err
	}
	gatherEvents(ctx, cs, ref, in)
	if err := gatherNodes(ctx, cs, in); err != nil {
		in.Errors = append(in.Errors, err.Error())
	}
	gatherIdentity(ctx, cs, ref.Namespace, in)
	return in, nil
}

func gatherWorkload(ctx context.Context, cs kube.Interface, ref WorkloadRef, in *Input) error {
	c, cancel := reqCtx(ctx)
	defer cancel()
	ns := ref.Namespace
	var (
		sel      *metav1.LabelSelector
		owner    types.UID
		viaRS    bool
		template corev1.PodSpec
	)
	switch ref.Kind {
	case KindPod:
		p, err := cs.CoreV1().Pods(ns).Get(c, ref.Name, metav1.GetOptions{})
		if err != nil {
			return apiErr(ref.String(), err)
		}
		in.Pods = []corev1.Pod{*p}
		in.Template = &in.Pods[0].Spec
		return nil
	case KindDeployment:
		d, err := cs.AppsV1().Deployments(ns).Get(c, ref.Name, metav1.GetOptions{})
		if err != nil {
			return apiErr(ref.String(), err)
		}
		sel, owner, viaRS, template = d.Spec.Selector, d.UID, true, d.Spec.Template.Spec
		in.Replicas = d.Spec.Replicas
	case KindStatefulSet:
		s, err := cs.AppsV1().StatefulSets(ns).Get(c, ref.Name, metav1.GetOptions{})
		if err != nil {
			return apiErr(ref.String(), err)
		}
		sel, owner, template = s.Spec.Selector, s.UID, s.Spec.Template.Spec
		in.Replicas = s.Spec.Replicas
	case KindDaemonSet:
		s, err := cs.AppsV1().DaemonSets(ns).Get(c, ref.Name, metav1.GetOptions{})
		if err != nil {
			return apiErr(ref.String(), err)
		}
		sel, owner, template = s.Spec.Selector, s.UID, s.Spec.Template.Spec
	case KindJob:
		j, err := cs.BatchV1().Jobs(ns).Get(c, ref.Name, metav1.GetOptions{})
		if err != nil {
			return apiErr(ref.String(), err)
		}
		sel, owner, template = j.Spec.Selector, j.UID, j.Spec.Template.Spec
	default:
		return fmt.Errorf("getting %s: unsupported kind", ref)
	}
	in.Template = &template
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return fmt.Errorf("reading the selector of %s: %w", ref, err)
	}
	owners := map[types.UID]bool{owner: true}
	if viaRS {
		rss, err := cs.AppsV1().ReplicaSets(ns).List(c, metav1.ListOptions{LabelSelector: selector.String()})
		if err != nil {
			in.Errors = append(in.Errors, fmt.Sprintf("listing replicasets: %v (pods are matched by label only)", err))
			owners = nil
		} else {
			for i := range rss.Items {
				if ctl := metav1.GetControllerOf(&rss.Items[i]); ctl != nil && ctl.UID == owner {
					owners[rss.Items[i].UID] = true
					in.ReplicaSets = append(in.ReplicaSets, rss.Items[i].Name)
				}
			}
		}
	}
	pods, err := cs.CoreV1().Pods(ns).List(c, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return apiErr("pods of "+ref.String(), err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if owners != nil {
			ctl := metav1.GetControllerOf(p)
			if ctl == nil || !owners[ctl.UID] {
				continue
			}
		}
		in.Pods = append(in.Pods, *p)
	}
	return nil
}

// notRunning reports a pod whose events matter: pending, or a container
// waiting.
func notRunning(p *corev1.Pod) bool {
	if p.Status.Phase == corev1.PodPending {
		return true
	}
	for _, ss := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for i := range ss {
			if ss[i].State.Waiting != nil {
				return true
			}
		}
	}
	return false
}

func gatherEvents(ctx context.Context, cs kube.Interface, ref WorkloadRef, in *Input) {
	names := []string{}
	for _, p := range podsByAge(in.Pods) {
		if notRunning(p) && len(names) < maxEventPods {
			names = append(names, p.Name)
		}
	}
	list := func(ns string, sel fields.Set, limit int64) ([]corev1.Event, error) {
		c, cancel := reqCtx(ctx)
		defer cancel()
		l, err := cs.CoreV1().Events(ns).List(c, metav1.ListOptions{FieldSelector: sel.String(), Limit: limit})
		if err != nil {
			return nil, err
		}
		return l.Items, nil
	}
	for _, n := range names {
		evs, err := list(ref.Namespace, fields.Set{"involvedObject.kind": "Pod", "involvedObject.name": n}, 1000)
		if err != nil {
			in.Errors = append(in.Errors, fmt.Sprintf("listing events of pod %s: %v", n, err))
			continue
		}
		in.Events = append(in.Events, evs...)
	}
	if ref.Kind != KindPod {
		if evs, err := list(ref.Namespace, fields.Set{"involvedObject.name": ref.Name}, 1000); err == nil {
			in.Events = append(in.Events, evs...)
		}
	}
	// With no pod, the ReplicaSets' events say why (FailedCreate).
	for i, rs := range in.ReplicaSets {
		if len(in.Pods) > 0 || i >= maxEventPods {
			break
		}
		if evs, err := list(ref.Namespace, fields.Set{"involvedObject.kind": "ReplicaSet", "involvedObject.name": rs}, 100); err == nil {
			in.Events = append(in.Events, evs...)
		}
	}
	// Node events live in the default namespace.
	evs, err := list(metav1.NamespaceDefault, fields.Set{"involvedObject.kind": "Node"}, maxNodeEvents)
	if err != nil {
		in.Errors = append(in.Errors, fmt.Sprintf("listing node events: %v (the trigger is inferred from node ages only)", err))
		return
	}
	in.NodeEvents = evs
}

func gatherNodes(ctx context.Context, cs kube.Interface, in *Input) error {
	opts := metav1.ListOptions{Limit: pageSize}
	for {
		c, cancel := reqCtx(ctx)
		l, err := cs.CoreV1().Nodes().List(c, opts)
		cancel()
		if err != nil {
			return fmt.Errorf("listing nodes: %w (pools, caches and the trigger are unknown)", err)
		}
		in.Nodes = append(in.Nodes, l.Items...)
		if l.Continue == "" {
			return nil
		}
		opts.Continue = l.Continue
	}
}

func gatherIdentity(ctx context.Context, cs kube.Interface, ns string, in *Input) {
	var spec *corev1.PodSpec
	if len(in.Pods) > 0 {
		spec = &podsByAge(in.Pods)[0].Spec
	} else {
		spec = in.Template
	}
	if spec == nil {
		return
	}
	refs := slices.Clone(spec.ImagePullSecrets)
	saName := spec.ServiceAccountName
	if saName == "" {
		saName = "default"
	}
	c, cancel := reqCtx(ctx)
	sa, err := cs.CoreV1().ServiceAccounts(ns).Get(c, saName, metav1.GetOptions{})
	cancel()
	switch {
	case err == nil:
		in.ServiceAccount = sa
		refs = append(refs, sa.ImagePullSecrets...)
	default:
		in.Errors = append(in.Errors, fmt.Sprintf("getting service account %s: %v", saName, err))
	}
	for _, r := range refs {
		if _, done := in.PullSecrets[r.Name]; done {
			continue
		}
		c, cancel := reqCtx(ctx)
		s, err := cs.CoreV1().Secrets(ns).Get(c, r.Name, metav1.GetOptions{})
		cancel()
		switch {
		case apierrors.IsNotFound(err):
			in.PullSecrets[r.Name] = SecretInfo{Readable: true}
		case apierrors.IsForbidden(err):
			in.PullSecrets[r.Name] = SecretInfo{Problem: "not allowed to read secrets (see deploy/: the optional pullpath-diagnose-secrets role); whether it exists is unknown"}
		case err != nil:
			in.PullSecrets[r.Name] = SecretInfo{Problem: "reading it failed: " + err.Error()}
		default:
			in.PullSecrets[r.Name] = summariseSecret(s)
		}
	}
}

// summariseSecret keeps the type and the registry keys of a pull secret and
// drops everything else; nothing of a credential survives it.
func summariseSecret(s *corev1.Secret) SecretInfo {
	info := SecretInfo{Found: true, Readable: true, Type: s.Type}
	var keys map[string]json.RawMessage
	switch s.Type {
	case corev1.SecretTypeDockerConfigJson:
		raw, ok := s.Data[corev1.DockerConfigJsonKey]
		if !ok {
			info.Problem = "no " + corev1.DockerConfigJsonKey + " key"
			return info
		}
		var cfg struct {
			Auths map[string]json.RawMessage `json:"auths"`
		}
		if err := json.Unmarshal(raw, &cfg); err != nil {
			info.Problem = "its " + corev1.DockerConfigJsonKey + " is not valid JSON"
			return info
		}
		keys = cfg.Auths
	case corev1.SecretTypeDockercfg:
		raw, ok := s.Data[corev1.DockerConfigKey]
		if !ok {
			info.Problem = "no " + corev1.DockerConfigKey + " key"
			return info
		}
		if err := json.Unmarshal(raw, &keys); err != nil {
			info.Problem = "its " + corev1.DockerConfigKey + " is not valid JSON"
			return info
		}
	default:
		return info
	}
	for k := range keys {
		info.Registries = append(info.Registries, k)
	}
	slices.Sort(info.Registries)
	if len(info.Registries) == 0 {
		info.Problem = "it holds no registry entry"
	}
	return info
}
