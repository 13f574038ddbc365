package probe

import (
	"time"

	"github.com/pullpath/pullpath/internal/verdict"
)

// Status is the outcome of one step.
type Status string

// Step outcomes.
const (
	StatusOK      Status = "ok"
	StatusFailed  Status = "failed"
	StatusSkipped Status = "skipped"
	StatusWarning Status = "warning"
)

// Report is the result of a probe; its JSON form is part of the contract.
type Report struct {
	Image     string            `json:"image"`
	Reference string            `json:"reference,omitempty"` // normalised (docker.io → registry-1.docker.io path)
	Platform  string            `json:"platform,omitempty"`
	Root      string            `json:"root,omitempty"`
	Verdict   verdict.Verdict   `json:"verdict"`
	Plan      []PlanHost        `json:"plan"`
	Endpoints []Endpoint        `json:"endpoints"`
	Blobs     []Blob            `json:"blobs"`
	Warnings  []verdict.Warning `json:"warnings"`
	// ServedBy is the host:port that served the manifest (a mirror or the upstream).
	ServedBy string       `json:"served_by,omitempty"`
	Identity string       `json:"identity,omitempty"` // which credential was used: "anonymous" or "user <name> (from <source>)"
	Started  time.Time    `json:"started"`
	Millis   int64        `json:"duration_ms"`
	Runtime  *RuntimePull `json:"runtime,omitempty"`
	// Proxy is the proxy environment of the node's containerd, when set.
	Proxy *ProxyInfo `json:"proxy,omitempty"`
	// Interrupted is true when the probe was cancelled (Ctrl-C) before it
	// finished: the trace is partial and the verdict unknown.interrupted.
	Interrupted bool `json:"interrupted,omitempty"`
	// CredentialProvider is the kubelet's credential provider run for the
	// image (probe --as-kubelet).
	CredentialProvider *CredentialProvider `json:"credential_provider,omitempty"`
	// RuntimeConfig is the node runtime's configuration as read (runtime,
	// files in order, registry model, settings with their sources) and
	// its plan for the image's registry.
	RuntimeConfig *RuntimeConfig `json:"runtime_config,omitempty"`
	// Credentials are the kubelet's credentials for the image
	// (internal/keychain).
	Credentials *CredentialsInfo `json:"credentials,omitempty"`
	// CompareNode holds the hosts resolved by the node's resolver and by
	// the pod's own (probe --compare-node, run in a pod with --root).
	CompareNode []ResolverComparison `json:"compare_node,omitempty"`
}

// PlanHost is one host containerd would try for the image, in order.
type PlanHost struct {
	Host         string       `json:"host"` // host[:port] as in hosts.toml or the reference
	Scheme       string       `json:"scheme"`
	Path         string       `json:"path"`
	Role         verdict.Role `json:"role"`
	Capabilities []string     `json:"capabilities"`
	SkipVerify   bool         `json:"skip_verify,omitempty"`
	CAFiles      []string     `json:"ca,omitempty"`
	// Credential is what the node's runtime presents to this host on the
	// kubelet's first attempt: the source and key (never the secret) and
	// the rule, or "anonymous, because ...".
	Credential string `json:"credential,omitempty"`
}

// CredentialsInfo is the kubelet's keychain answer for the image: the CRI
// AuthConfigs it sends, one pull each, in order (no secret in them).
type CredentialsInfo struct {
	// Image is the repository the kubelet looks up.
	Image string `json:"image"`
	// Tried names each credential (source and key), in the kubelet's order.
	Tried []string `json:"tried"`
	// Anonymous says why the kubelet sends none.
	Anonymous string `json:"anonymous,omitempty"`
}

// Endpoint is one host the pull touched, with its steps in order.
type Endpoint struct {
	Host  string       `json:"host"`
	Port  int          `json:"port"`
	Role  verdict.Role `json:"role"`
	Steps []Step       `json:"steps"`
}

// Step is one recorded step: dns, route, tls, http or mtu.
type Step struct {
	Name   string  `json:"name"`   // dns | route | tls | http | mtu (the path-MTU test, mtu.go)
	Target string  `json:"target"` // e.g. "registry.example -> 10.0.0.5:443", "HEAD /v2/app/manifests/1"
	Status Status  `json:"status"`
	Detail string  `json:"detail,omitempty"`
	Cause  string  `json:"cause,omitempty"`
	Millis float64 `json:"duration_ms"`
	// Facts holds structured evidence (answers per resolver, CNAME chain,
	// egress interface and gateway, certificate chain, HTTP status).
	Facts map[string]any `json:"facts,omitempty"`
}

// Blob is one blob of the image and what happened to it.
type Blob struct {
	Digest    string  `json:"digest"`
	Size      int64   `json:"size"`
	MediaType string  `json:"media_type,omitempty"`
	Host      string  `json:"host,omitempty"` // the host that served the bytes (after redirects)
	Verified  bool    `json:"verified"`
	Bytes     int64   `json:"bytes"`
	Millis    float64 `json:"duration_ms"`
	Error     string  `json:"error,omitempty"`
	// Ranges counts the Range requests the blob took when the runtime
	// fetches layers in parallel chunks (containerd 2.1+ with
	// concurrent_layer_fetch_buffer); RangeIgnored: the host answered the
	// first with the whole body.
	Ranges       int  `json:"range_requests,omitempty"`
	RangeIgnored bool `json:"range_ignored,omitempty"`
}

// RuntimePull is the result of asking the node's runtime to pull (--runtime-pull).
type RuntimePull struct {
	Socket  string           `json:"socket"`
	OK      bool             `json:"ok"`
	Cached  bool             `json:"cached"` // the runtime already held the image: not a fresh pull
	Error   string           `json:"error,omitempty"`
	Verdict *verdict.Verdict `json:"verdict,omitempty"`
	Agrees  bool             `json:"agrees"`
	Note    string           `json:"note,omitempty"`
	Millis  int64            `json:"duration_ms"`
}

// ProxyInfo is the proxy environment the probe applied (credentials in the
// proxy URLs redacted).
type ProxyInfo struct {
	HTTPSProxy string   `json:"https_proxy,omitempty"`
	HTTPProxy  string   `json:"http_proxy,omitempty"`
	NoProxy    string   `json:"no_proxy,omitempty"`
	Sources    []string `json:"sources,omitempty"`
}
