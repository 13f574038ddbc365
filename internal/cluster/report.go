package cluster

import (
	"time"

	"github.com/pullpath/pullpath/internal/probe"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Report is the result of a diagnosis; its JSON form is part of the contract
// (docs/contract.md, diagnose). Fields are added, never renamed.
type Report struct {
	Workload  string `json:"workload"` // kind/name, e.g. "deployment/app"
	Namespace string `json:"namespace"`
	// Image is the image whose pull is diagnosed: the first container that
	// fails to pull, else the first container's image.
	Image string `json:"image"`
	// Reference is Image normalised the way containerd names it.
	Reference string `json:"reference,omitempty"`
	// Registry is the registry host of Image (host[:port]).
	Registry string          `json:"registry,omitempty"`
	Verdict  verdict.Verdict `json:"verdict"`
	// Summary is the one-paragraph answer for the workload: the failing
	// step, its owner, the trigger, the broken and the fine pools.
	Summary string `json:"summary"`
	// Node is the node the failing pod landed on, if any.
	Node       string      `json:"node,omitempty"`
	Containers []Container `json:"containers"`
	Events     []Event     `json:"events"`
	Trigger    Trigger     `json:"trigger"`
	Pools      []Pool      `json:"pools"`
	Nodes      []Node      `json:"nodes"`
	Replicas   []Replica   `json:"replicas"`
	Cache      CacheMap    `json:"cache"`
	Identity   Identity    `json:"identity"`
	Next       []string    `json:"next"`
	// Notes are caveats about the evidence: what could not be read, what
	// absence means, how pools were named.
	Notes    []string          `json:"notes"`
	Warnings []verdict.Warning `json:"warnings"`
	// Generated is the time the report was made.
	Generated time.Time `json:"generated"`
}

// Failed reports whether the diagnosis found a pull failure.
func (r *Report) Failed() bool { return !r.Verdict.OK }

// Container is one container (or init container) of a pod of the workload
// and the state of its image.
type Container struct {
	Pod   string `json:"pod"`
	Node  string `json:"node,omitempty"`
	Name  string `json:"name"`
	Init  bool   `json:"init,omitempty"`
	Image string `json:"image"`
	// State is waiting, running or terminated ("" when the kubelet has not
	// reported it yet).
	State   string `json:"state,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// PullFailure is true when the container waits because of its image.
	PullFailure bool             `json:"pull_failure,omitempty"`
	Verdict     *verdict.Verdict `json:"verdict,omitempty"`
}

// Event is one event that bears on the pull, oldest first.
type Event struct {
	Object  string           `json:"object"` // kind/name
	Type    string           `json:"type,omitempty"`
	Reason  string           `json:"reason"`
	Message string           `json:"message"`
	Count   int32            `json:"count,omitempty"`
	First   time.Time        `json:"first,omitzero"`
	Last    time.Time        `json:"last,omitzero"`
	Verdict *verdict.Verdict `json:"verdict,omitempty"`
}

// TriggerKind names the change in the timeline that exposed the failure.
type TriggerKind string

// The trigger kinds (docs/contract.md).
const (
	TriggerNone            TriggerKind = "none"
	TriggerScaleUp         TriggerKind = "scale-up"
	TriggerNodeReplacement TriggerKind = "node-replacement"
	TriggerPoolUpgrade     TriggerKind = "pool-upgrade"
)

// Trigger is the change that put a replica on a node without the image. It
// is the trigger, not the cause (a cached image lies: the scale-up is the trigger).
type Trigger struct {
	Kind     TriggerKind `json:"kind"`
	Node     string      `json:"node,omitempty"`
	Pool     string      `json:"pool,omitempty"`
	Time     time.Time   `json:"time,omitzero"`
	Evidence string      `json:"evidence,omitempty"`
}

// PoolStatus is what is known about pulling the image in a pool.
type PoolStatus string

// Pool statuses.
const (
	// PoolBroken: a pod or a probe failed to pull on a node of the pool.
	PoolBroken PoolStatus = "broken"
	// PoolFine: a probe pulled the image on a node of the pool.
	PoolFine PoolStatus = "fine"
	// PoolCachedOnly: nodes run the image from their cache; nothing proves a
	// fresh pull works there.
	PoolCachedOnly PoolStatus = "cached-only"
	// PoolUntested: eligible, no evidence either way.
	PoolUntested PoolStatus = "untested"
	// PoolIneligible: the workload cannot be scheduled there.
	PoolIneligible PoolStatus = "ineligible"
)

// Pool is a node pool (or the fallback grouping of unlabelled nodes).
type Pool struct {
	Name string `json:"name"`
	// Label is the node label the pool name came from, or "fallback".
	Label    string   `json:"label"`
	Eligible bool     `json:"eligible"`
	Reasons  []string `json:"reasons,omitempty"` // why not eligible
	Nodes    int      `json:"nodes"`
	Cached   int      `json:"cached"`
	// NotListed counts nodes whose image list is full (the kubelet's cap),
	// so the image may be there without being listed.
	NotListed         int        `json:"not_listed,omitempty"`
	OS                string     `json:"os,omitempty"`
	Arch              string     `json:"arch,omitempty"`
	NodeImageVersions []string   `json:"node_image_versions,omitempty"`
	Oldest            time.Time  `json:"oldest,omitzero"`
	Newest            time.Time  `json:"newest,omitzero"`
	Status            PoolStatus `json:"status"`
	// Platform warns when the pool's OS/arch differs from every node that
	// holds or runs the image (the image may have no manifest for it).
	Platform string `json:"platform,omitempty"`
	// Identity is the identity a pull on this pool would present: a pull
	// secret, the kubelet's credential provider (as its probe found it) or
	// anonymous (poolidentity.go).
	Identity string `json:"identity,omitempty"`
}

// Node is one node and what it says about the image.
type Node struct {
	Name    string    `json:"name"`
	Pool    string    `json:"pool"`
	Created time.Time `json:"created"`
	Age     string    `json:"age"`
	// Cached is true when status.images lists the image (by name or digest).
	Cached bool `json:"cached"`
	// CacheMatch says how: "name", "digest", or "" when not listed.
	CacheMatch string `json:"cache_match,omitempty"`
	// ImagesListed is len(status.images); ListFull means it reached the
	// kubelet's cap, so "not listed" proves nothing.
	ImagesListed     int      `json:"images_listed"`
	ListFull         bool     `json:"list_full,omitempty"`
	Eligible         bool     `json:"eligible"`
	Reasons          []string `json:"reasons,omitempty"`
	OS               string   `json:"os,omitempty"`
	Arch             string   `json:"arch,omitempty"`
	NodeImageVersion string   `json:"node_image_version,omitempty"`
	KubeletVersion   string   `json:"kubelet_version,omitempty"`
	Unschedulable    bool     `json:"unschedulable,omitempty"`
	// Landed is true for the node the diagnosed failing pod runs on.
	Landed bool `json:"landed,omitempty"`
	// Failing counts pods of the workload failing to pull the image here;
	// Running counts replicas running it here.
	Failing int `json:"failing,omitempty"`
	Running int `json:"running,omitempty"`
	// Verdict is the best evidence for this node: its probe, else the
	// classified failure of a pod on it; nil when there is none.
	Verdict *verdict.Verdict `json:"verdict,omitempty"`
	Probe   *ProbeResult     `json:"probe,omitempty"`
}

// Replica is a running pod of the workload using the image.
type Replica struct {
	Pod  string `json:"pod"`
	Node string `json:"node"`
	Pool string `json:"pool"`
	// CacheOnly is true when the replica runs only because its node holds
	// the image: a fresh pull fails (Basis says how that is known).
	CacheOnly bool   `json:"cache_only"`
	Basis     string `json:"basis,omitempty"`
}

// CacheMap summarises which nodes hold the image.
type CacheMap struct {
	Digests []string `json:"digests,omitempty"` // digests the image is known by
	Cached  []string `json:"cached"`            // nodes that list it
	Missing []string `json:"missing"`           // nodes with a complete list without it
	// NotListed are nodes whose full image list does not show it: unknown.
	NotListed []string `json:"not_listed"`
	// Since is the creation time of the oldest eligible node without the
	// image when every node holding it is older: "every node created since
	// Since lacks the image".
	Since time.Time `json:"since,omitzero"`
}

// ProbeStatus is how a probe Job ended.
type ProbeStatus string

// Probe statuses.
const (
	ProbeDone ProbeStatus = "done" // the probe ran and printed its report
	// ProbeImagePull: the probe's own image could not be pulled on the node;
	// that failure is evidence about the node's pull path.
	ProbeImagePull ProbeStatus = "probe-image-pull-failed"
	ProbeTimeout   ProbeStatus = "timeout"
	ProbeError     ProbeStatus = "error"
)

// ProbeResult is the outcome of a probe Job on one node.
type ProbeResult struct {
	Job     string          `json:"job"`
	Pod     string          `json:"pod,omitempty"`
	Status  ProbeStatus     `json:"status"`
	Image   string          `json:"image,omitempty"` // the probe image
	Verdict verdict.Verdict `json:"verdict"`
	Report  *probe.Report   `json:"report,omitempty"`
	Error   string          `json:"error,omitempty"`
	// SameRegistry is true when the probe image comes from the registry of
	// the diagnosed image: a failure to pull it is then direct evidence.
	SameRegistry bool `json:"same_registry,omitempty"`
	// PodView is the pod-view probe on the same node and its path beside
	// this one (diagnose --probe --pod-view); nil when it did not run.
	PodView *PodView `json:"pod_view,omitempty"`
}

// Identity is what the pull identity looks like, without secrets.
type Identity struct {
	PullSecrets []PullSecret `json:"pull_secrets"`
	// ServiceAccount is the pod's service account name.
	ServiceAccount      string `json:"service_account,omitempty"`
	ServiceAccountFound bool   `json:"service_account_found"`
	// Provider names the kubelet credential provider expected for the
	// registry host, if any (e.g. acr-credential-provider).
	Provider string `json:"provider,omitempty"`
	// Relevant is false when the failure happens before credentials are
	// used (dns, route, tls): credentials are irrelevant (an imagePullSecret installs no route, resolver or trust).
	Relevant bool     `json:"relevant"`
	Notes    []string `json:"notes,omitempty"`
}

// PullSecret is one imagePullSecret reference and what was found, never its
// contents.
type PullSecret struct {
	Name   string `json:"name"`
	Source string `json:"source"` // pod or serviceaccount
	// Found is false when the secret does not exist; Readable is false when
	// it could not be read (e.g. no permission), then Found is unknown.
	Found    bool   `json:"found"`
	Readable bool   `json:"readable"`
	Type     string `json:"type,omitempty"`
	// Matches is true when it holds an entry for the image's registry the
	// way the kubelet matches hosts; Entry is that entry's key (a host or
	// URL, not a credential).
	Matches bool   `json:"matches"`
	Entry   string `json:"entry,omitempty"`
	Problem string `json:"problem,omitempty"`
}
