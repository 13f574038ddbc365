package cluster

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/pullpath/pullpath/internal/verdict"
)

// Input is everything Analyze needs, as typed API objects. Gather fills it
// from a cluster; tests and benchmarks build it directly.
type Input struct {
	// Workload is what the user asked about.
	Workload WorkloadRef
	// Template is the pod spec used for eligibility: the workload's pod
	// template, or the pod's own spec for a bare pod.
	Template *corev1.PodSpec
	// Pods are the workload's pods (for a bare pod, just that pod).
	Pods []corev1.Pod
	// Nodes are all nodes of the cluster.
	Nodes []corev1.Node
	// Events are events about the workload and its pods; NodeEvents are
	// events about nodes (cluster-autoscaler, node lifecycle, kubelet).
	Events     []corev1.Event
	NodeEvents []corev1.Event
	// ServiceAccount is the pods' service account, nil when not found.
	ServiceAccount *corev1.ServiceAccount
	// PullSecrets are the referenced pull secrets, summarised by Gather so
	// that no secret content travels further than reading it.
	PullSecrets map[string]SecretInfo
	// Probes are probe results by node name (only with --probe).
	Probes map[string]*ProbeResult
	// Replicas is the workload's spec.replicas, when it has one (nil
	// otherwise). ReplicaSets are the names of a Deployment's ReplicaSets.
	// Both explain a workload without pods.
	Replicas    *int32
	ReplicaSets []string
	// Errors are partial failures while reading (e.g. forbidden to list
	// events); the report carries them as notes.
	Errors []string
}

// SecretInfo is what diagnose may know about a pull secret: whether it
// exists, its type and the registry keys of its entries. It never holds a
// credential.
type SecretInfo struct {
	Found    bool
	Readable bool
	Type     corev1.SecretType
	// Registries are the keys of the auths map (hosts or URLs).
	Registries []string
	// Problem is set when the secret cannot be used (bad JSON, no auths).
	Problem string
}

// Classifier classifies one kubelet or runtime message into a verdict.
// internal/explain provides the real one (explain.Classify).
type Classifier func(msg string) verdict.Verdict

type options struct {
	classify  Classifier
	now       time.Time
	maxImages int
}

// Option configures Analyze and Diagnose.
type Option func(*options)

// WithClassifier sets the message classifier. The default names no step
// (every message is layer unknown).
func WithClassifier(c Classifier) Option {
	return func(o *options) {
		if c != nil {
			o.classify = c
		}
	}
}

// WithNow sets the time node ages are computed against. The default is
// time.Now().
func WithNow(t time.Time) Option { return func(o *options) { o.now = t } }

// WithMaxListedImages sets the kubelet's nodeStatusMaxImages the cluster
// uses: a node listing this many images may hold more than it lists. The
// default is 50, the kubelet's default.
func WithMaxListedImages(n int) Option { return func(o *options) { o.maxImages = n } }

func buildOptions(opts []Option) options {
	o := options{classify: unknownClassifier, now: time.Now(), maxImages: 50}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

func unknownClassifier(msg string) verdict.Verdict {
	d := verdict.Describe("unknown", verdict.RoleNone, "")
	return verdict.Verdict{Layer: verdict.LayerUnknown, Cause: verdict.CodeUnknown, Summary: d.Summary, Next: d.Next, Evidence: msg}
}
