package cluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pullpath/pullpath/internal/cluster/kube"
	"github.com/pullpath/pullpath/internal/probe"
	"github.com/pullpath/pullpath/internal/redact"
)

// Labels and annotations on every object diagnose creates.
const (
	LabelManagedBy  = "app.kubernetes.io/managed-by"
	LabelName       = "app.kubernetes.io/name"
	LabelComponent  = "app.kubernetes.io/component"
	LabelRun        = "pullpath.dev/run"
	AnnotationNode  = "pullpath.dev/node"
	AnnotationImage = "pullpath.dev/target-image"
	managedBy       = "pullpath"
	// HostRoot is where the node's /etc is mounted in the probe container;
	// the probe runs with --root HostRoot.
	HostRoot = "/host"
	// pullSecretDir is where the pod's pull secret is mounted with
	// --use-pull-secret.
	pullSecretDir = "/var/run/pullpath/pull-secret"
)

// ProbeOptions configures the probe Jobs of Diagnose (--probe).
type ProbeOptions struct {
	// Image is the probe's own image (--probe-image); required.
	Image string
	// Namespace is where the Jobs run; "" means the workload's namespace
	// (where its pull secrets are).
	Namespace string
	// UsePullSecret mounts the workload's matching pull secret into the
	// probe (and lets the kubelet use the pull secrets for the probe image).
	UsePullSecret bool
	// StepTimeout is passed to the probe as --timeout when set.
	StepTimeout time.Duration
	// Deadline is the probe's whole-run deadline (--deadline). The default
	// is 2 minutes.
	Deadline time.Duration
	// Wait bounds how long Diagnose waits for all probes. The default is
	// Deadline plus 2 minutes (for scheduling and pulling the probe image).
	Wait time.Duration
	// Poll is the interval between status checks. The default is 2s.
	Poll time.Duration
	// Keep leaves the Jobs in place (they still expire through
	// ttlSecondsAfterFinished). The default deletes them when done.
	Keep bool
	// RunID labels the objects of this run; "" means a random one.
	RunID string
	// ProviderConfig and ProviderBinDir are the node paths of the
	// kubelet's --image-credential-provider-config and -bin-dir for every
	// probed node (--probe-credential-provider-config/-bin-dir), for a
	// distribution whose layout NodeProviderPaths does not know.
	ProviderConfig, ProviderBinDir string
	// TokenAudience, when set (--probe-service-account-audience), gives
	// the probe a token of the workload's service account for this
	// audience (a projected serviceAccountToken volume), for a provider
	// with tokenAttributes (KEP-4412). ServiceAccount and
	// ServiceAccountAnnotations are that account, set by Diagnose.
	TokenAudience             string
	ServiceAccount            string
	ServiceAccountAnnotations map[string]string
	// PodNamespace is the namespace of the workload's pods, set by
	// Diagnose: the Job passes it as --pod-namespace on a CRI-O node,
	// whose pulls read that namespace's auth file and signature policy.
	PodNamespace string
	// CRIONamespacedAuthDir and CRIOSignaturePolicyDir are CRI-O's
	// namespaced_auth_dir and signature_policy_dir on the probed nodes
	// (--probe-crio-namespaced-auth-dir, --probe-crio-signature-policy-dir;
	// default CRI-O's, under /etc): mounted read-only on a CRI-O node when
	// outside the paths the Job mounts anyway (crioNamespaceMounts).
	CRIONamespacedAuthDir, CRIOSignaturePolicyDir string
	// PodView runs a second, unprivileged probe Job from an ordinary pod
	// on every probed node (PodViewJob) and compares the two paths hop by
	// hop (ComparePaths).
	PodView bool
}

func (po *ProbeOptions) defaults() {
	if po.Deadline <= 0 {
		po.Deadline = 2 * time.Minute
	}
	if po.Wait <= 0 {
		po.Wait = po.Deadline + 2*time.Minute
	}
	if po.Poll <= 0 {
		po.Poll = 2 * time.Second
	}
	if po.RunID == "" {
		var b [4]byte
		_, _ = rand.Read(b[:])
		po.RunID = hex.EncodeToString(b[:])
	}
}

// ProbeTarget is one node to probe and why.
type ProbeTarget struct {
	Node string
	Pool string
	Why  string // "landed" or "newest of pool"
	// Platform is os/arch of the node, passed as --platform.
	Platform string
	// Provider is where the node's kubelet keeps its credential provider
	// setup; the Job mounts it read-only so the probe can run the
	// provider (nil: not known, the probe sees only host /etc and /run).
	Provider *ProviderPaths
	// Layout is the node's runtime layout (DetectNodeLayout): the Job
	// mounts the paths it reads and passes its runtime version (nil: the
	// node is not known, the Job mounts /etc, /run and /usr/bin).
	Layout *NodeLayout
}

// ProbeTargets picks the nodes to probe from a report: the node the failing
// pod landed on, and the newest node of every eligible pool (a node
// nobody repaired by hand).
func ProbeTargets(r *Report) []ProbeTarget {
	var out []ProbeTarget
	seen := map[string]bool{}
	add := func(n *Node, why string) {
		if seen[n.Name] {
			return
		}
		seen[n.Name] = true
		t := ProbeTarget{Node: n.Name, Pool: n.Pool, Why: why}
		if n.OS != "" && n.Arch != "" {
			t.Platform = n.OS + "/" + n.Arch
		}
		out = append(out, t)
	}
	for i := range r.Nodes {
		if r.Nodes[i].Name == r.Node {
			add(&r.Nodes[i], "landed")
		}
	}
	newest := map[string]*Node{}
	var order []string
	for i := range r.Nodes {
		n := &r.Nodes[i]
		if !n.Eligible || n.Unschedulable {
			continue
		}
		cur, ok := newest[n.Pool]
		if !ok {
			order = append(order, n.Pool)
		}
		if !ok || n.Created.After(cur.Created) || n.Created.Equal(cur.Created) && n.Name > cur.Name {
			newest[n.Pool] = n
		}
	}
	for _, p := range order {
		add(newest[p], "newest of pool")
	}
	return out
}

func jobName(runID, node string) string {
	h := fnv.New32a()
	h.Write([]byte(node))
	return fmt.Sprintf("pullpath-probe-%s-%08x", runID, h.Sum32())
}

// ProbeJob builds the Job that runs `pullpath probe` on one node: pinned
// with nodeName, on the host network with the node's resolver (dnsPolicy
// Default), tolerating every taint, the host's /etc mounted read-only at
// the probe's --root, no capabilities, a read-only root filesystem, bounded
// by activeDeadlineSeconds and cleaned up by ttlSecondsAfterFinished.
// pullSecret, when not empty, names a dockerconfigjson secret to mount and
// hand to the probe.
func ProbeJob(t ProbeTarget, image, namespace string, po ProbeOptions, pullSecret string) *batchv1.Job {
	po.defaults()
	args := []string{"probe", image, "--root", HostRoot, "-o", "json", "--deadline", po.Deadline.String()}
	if po.StepTimeout > 0 {
		args = append(args, "--timeout", po.StepTimeout.String())
	}
	if t.Platform != "" {
		args = append(args, "--platform", t.Platform)
	}
	if t.Layout != nil && t.Layout.RuntimeVersion != "" {
		// The runtime's version as the kubelet last read it from the CRI:
		// the probe weighs it against the files under --root.
		args = append(args, "--runtime-version", t.Layout.RuntimeVersion)
	}
	f, tr := false, true
	root := int64(0)
	// The host's /etc and /run, read-only, and the paths the node's layout
	// reads (layoutVolumes): /etc/resolv.conf is often a symlink into /run
	// (systemd-resolved's stub-resolv.conf, whose upstreams are in
	// /run/systemd/resolve/resolv.conf), and the probe resolves it inside
	// its --root; the runtime's configuration and binary (its Go build
	// information is read, never run) are where the layout keeps them.
	volumes, mounts := layoutVolumes(t.Layout)
	pv, pm := providerMounts(t.Provider, mountedPaths(t.Layout))
	volumes, mounts = append(volumes, pv...), append(mounts, pm...)
	if t.Layout != nil && t.Layout.Name == "cri-o" {
		// CRI-O reads the pod namespace's auth file and policy.
		if po.PodNamespace != "" {
			args = append(args, "--pod-namespace", po.PodNamespace)
		}
		cv, cm := crioNamespaceMounts(t.Layout, po, mountedPaths(t.Layout))
		volumes, mounts = append(volumes, cv...), append(mounts, cm...)
	}
	saName := ""
	if v, m, saArgs := serviceAccountTokenVolume(po, namespace); v != nil {
		volumes, mounts, args = append(volumes, *v), append(mounts, *m), append(args, saArgs...)
		saName = po.ServiceAccount
	}
	var addCaps []corev1.Capability
	if t.Provider != nil {
		// The probe runs the provider chrooted into HostRoot, so that the
		// node paths in its args and env resolve as for the kubelet.
		addCaps = []corev1.Capability{"SYS_CHROOT"}
	}
	return probeJobSkeleton(t, jobName(po.RunID, t.Node), ViewNode, image, namespace, po, pullSecret, 0o400, args, volumes, mounts, func(ps *corev1.PodSpec) {
		ps.HostNetwork = true
		ps.DNSPolicy = corev1.DNSDefault
		ps.ServiceAccountName = saName
		ps.Containers[0].SecurityContext = &corev1.SecurityContext{
			// Root without any capability: it can read the node's
			// root-only files (hosts.toml, CA files) but cannot override
			// permissions or change anything; every host path is
			// read-only anyway.
			RunAsUser:                &root,
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: addCaps},
			ReadOnlyRootFilesystem:   &tr,
			AllowPrivilegeEscalation: &f,
		}
	})
}

// probeJobSkeleton is what the node probe's and the pod-view probe's Jobs
// share: the labels (view tells them apart) and annotations, the pull
// secret mounted at pullSecretDir with secretMode and handed to the probe,
// a 64 MiB /tmp, pinning with nodeName, tolerating every taint, no service
// account token or service links, the runtime's default seccomp profile,
// the resources, backoffLimit 0, activeDeadlineSeconds (the probe's
// deadline plus a minute) and ttlSecondsAfterFinished. args, volumes and
// mounts are the caller's; customize sets the rest of the pod spec (the
// network, DNS policy and the container's security context).
func probeJobSkeleton(t ProbeTarget, name, view, image, namespace string, po ProbeOptions, pullSecret string, secretMode int32, args []string, volumes []corev1.Volume, mounts []corev1.VolumeMount, customize func(*corev1.PodSpec)) *batchv1.Job {
	labels := map[string]string{
		LabelManagedBy: managedBy, LabelName: "pullpath", LabelComponent: "probe", LabelRun: po.RunID, LabelView: view,
	}
	annotations := map[string]string{AnnotationNode: t.Node, AnnotationImage: image}
	f := false
	tmpLimit := resource.MustParse("64Mi")
	volumes = append(volumes, corev1.Volume{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &tmpLimit}}})
	mounts = append(mounts, corev1.VolumeMount{Name: "tmp", MountPath: "/tmp"})
	var pullSecrets []corev1.LocalObjectReference
	if pullSecret != "" {
		args = append(args, "--docker-config", pullSecretDir+"/config.json")
		mounts = append(mounts, corev1.VolumeMount{Name: "pull-secret", MountPath: pullSecretDir, ReadOnly: true})
		mode := secretMode
		volumes = append(volumes, corev1.Volume{Name: "pull-secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName:  pullSecret,
			Items:       []corev1.KeyToPath{{Key: corev1.DockerConfigJsonKey, Path: "config.json"}},
			DefaultMode: &mode,
		}}})
		pullSecrets = []corev1.LocalObjectReference{{Name: pullSecret}}
	}
	deadline := int64((po.Deadline + time.Minute).Seconds())
	ttl := int32(600)
	backoff := int32(0)
	ps := corev1.PodSpec{
		NodeName:                     t.Node,
		RestartPolicy:                corev1.RestartPolicyNever,
		Tolerations:                  []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
		AutomountServiceAccountToken: &f,
		EnableServiceLinks:           &f,
		ImagePullSecrets:             pullSecrets,
		Volumes:                      volumes,
		SecurityContext: &corev1.PodSecurityContext{
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Containers: []corev1.Container{{
			Name:            "probe",
			Image:           po.Image,
			ImagePullPolicy: corev1.PullIfNotPresent,
			Args:            args,
			VolumeMounts:    mounts,
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
			},
			TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		}},
	}
	customize(&ps)
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels, Annotations: annotations},
		Spec: batchv1.JobSpec{
			BackoffLimit:            &backoff,
			ActiveDeadlineSeconds:   &deadline,
			TTLSecondsAfterFinished: &ttl,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations},
				Spec:       ps,
			},
		},
	}
}

// RunProbes creates one probe Job per target, waits for each to finish (or
// for its pod to fail pulling the probe image, which is evidence too), reads
// the probe's JSON report from the pod log, and deletes the Jobs it made,
// also when ctx is cancelled (Ctrl-C). ref is the image to probe; secret is
// the pull secret to mount ("" for none).
func RunProbes(ctx context.Context, cs kube.Interface, targets []ProbeTarget, image, namespace, secret string, po ProbeOptions, classify Classifier) (map[string]*ProbeResult, error) {
	po.defaults()
	if po.Image == "" {
		return nil, errors.New("running probes: no probe image")
	}
	if classify == nil {
		classify = unknownClassifier
	}
	results := map[string]*ProbeResult{}
	defer func() {
		if po.Keep {
			return
		}
		// Clean up even when ctx is cancelled. A create cut short by Ctrl-C
		// may still have made its Job, so every target's Job name is
		// deleted, not only those whose create returned, and then whatever
		// carries this run's label.
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), requestTimeout)
		defer cancel()
		bg := metav1.DeletePropagationBackground
		for _, t := range targets {
			_ = cs.BatchV1().Jobs(namespace).Delete(c, jobName(po.RunID, t.Node), metav1.DeleteOptions{PropagationPolicy: &bg})
			if po.PodView {
				_ = cs.BatchV1().Jobs(namespace).Delete(c, podViewJobName(po.RunID, t.Node), metav1.DeleteOptions{PropagationPolicy: &bg})
			}
		}
		_, _ = Cleanup(c, cs, namespace, po.RunID)
	}()
	probeRef := parseImage(po.Image)
	target := parseImage(image)
	for _, t := range targets {
		job := ProbeJob(t, image, namespace, po, secret)
		c, cancel := reqCtx(ctx)
		_, err := cs.BatchV1().Jobs(namespace).Create(c, job, metav1.CreateOptions{})
		cancel()
		if err != nil {
			results[t.Node] = &ProbeResult{Job: job.Name, Image: po.Image, Status: ProbeError, Error: "creating the probe job: " + err.Error(), Verdict: unknownClassifier("")}
			continue
		}
		results[t.Node] = &ProbeResult{Job: job.Name, Image: po.Image, Status: ProbeTimeout}
	}
	// The pod-view Jobs, one per node whose probe Job exists.
	podViews := map[string]*PodView{}
	for _, t := range targets {
		if !po.PodView || results[t.Node].Status != ProbeTimeout {
			continue
		}
		job := PodViewJob(t, image, namespace, po, secret)
		c, cancel := reqCtx(ctx)
		_, err := cs.BatchV1().Jobs(namespace).Create(c, job, metav1.CreateOptions{})
		cancel()
		pv := &PodView{ProbeResult: ProbeResult{Job: job.Name, Image: po.Image, Status: ProbeTimeout}}
		if err != nil {
			pv.Status, pv.Error, pv.Verdict = ProbeError, "creating the pod-view job: "+err.Error(), unknownClassifier("")
		}
		podViews[t.Node] = pv
		results[t.Node].PodView = pv
	}
	defer func() {
		for node, pv := range podViews {
			ComparePaths(results[node], pv)
		}
	}()
	pending := func() int {
		n := 0
		for _, r := range results {
			if r.Status == ProbeTimeout {
				n++
			}
		}
		for _, pv := range podViews {
			if pv.Status == ProbeTimeout {
				n++
			}
		}
		return n
	}
	waitCtx, cancel := context.WithTimeout(ctx, po.Wait)
	defer cancel()
	tick := time.NewTicker(po.Poll)
	defer tick.Stop()
	for pending() > 0 {
		c, cancelReq := reqCtx(waitCtx)
		pods, err := cs.CoreV1().Pods(namespace).List(c, metav1.ListOptions{LabelSelector: LabelRun + "=" + po.RunID})
		cancelReq()
		if err == nil {
			for i := range pods.Items {
				p := &pods.Items[i]
				r := results[p.Spec.NodeName]
				if p.Labels[LabelView] == ViewPod {
					r = nil
					if pv := podViews[p.Spec.NodeName]; pv != nil {
						r = &pv.ProbeResult
					}
				}
				if r == nil || r.Status != ProbeTimeout {
					continue
				}
				r.Pod = p.Name
				settleProbe(waitCtx, cs, p, r, classify, probeRef.host, target.host)
			}
		}
		if pending() == 0 {
			break
		}
		select {
		case <-waitCtx.Done():
			timedOut := func(r *ProbeResult) {
				if r.Status == ProbeTimeout {
					r.Verdict = unknownClassifier("")
					r.Error = "the probe did not finish in " + po.Wait.String()
					if r.Pod == "" {
						r.Error += " (no pod was created for its Job: is a job controller running, may pods run in this namespace?)"
					}
				}
			}
			for _, r := range results {
				timedOut(r)
			}
			for _, pv := range podViews {
				timedOut(&pv.ProbeResult)
			}
			if ctx.Err() != nil {
				return results, fmt.Errorf("running probes: %w", ctx.Err())
			}
			return results, nil
		case <-tick.C:
		}
	}
	return results, nil
}

// settleProbe updates r from the probe pod p when it has an outcome.
// probeHost and targetHost are the registries of the probe image and of the
// diagnosed image. A pod whose sandbox cannot be created because the node
// cannot pull its sandbox (pause) image never reports a container state:
// the kubelet's FailedCreatePodSandBox event is the outcome then, and it is
// evidence about the node's path like a probe image that cannot be pulled.
func settleProbe(ctx context.Context, cs kube.Interface, p *corev1.Pod, r *ProbeResult, classify Classifier, probeHost, targetHost string) {
	sameRegistry := probeHost == targetHost
	// The pod's events, listed at most once per poll.
	var evs []corev1.Event
	listed := false
	events := func() []corev1.Event {
		if !listed {
			evs, listed = probePodEvents(ctx, cs, p), true
		}
		return evs
	}
	if p.Status.Phase == corev1.PodPending && !containerStarted(p) {
		if msg := mountEvent(events()); msg != "" {
			// A hostPath of type File or Directory that the node lacks: the
			// pod never starts, and waiting out the deadline tells nothing.
			r.Status = ProbeError
			r.Error = "the probe Job cannot mount a node path it expected (a credential provider path from the node's labels? give --probe-credential-provider-config and --probe-credential-provider-bin-dir): " + redact.String(msg)
			return
		}
		if msg, img := sandboxEvent(events()); msg != "" {
			r.Status = ProbeImagePull
			r.Verdict = classify(msg)
			r.SameRegistry = img != "" && parseImage(img).host == targetHost
			r.Error = "the node could not pull its sandbox image " + img + " to start the probe: " + redact.String(msg)
			return
		}
	}
	for i := range p.Status.ContainerStatuses {
		st := p.Status.ContainerStatuses[i].State
		if w := st.Waiting; w != nil && pullReasons[w.Reason] {
			msg := w.Message
			if msg == "" || strings.HasPrefix(msg, "Back-off") {
				// The detail is in the pod's first "Failed to pull image" event.
				msg = pullEvent(events())
				if msg == "" {
					continue
				}
			}
			v := classify(msg)
			r.Status = ProbeImagePull
			r.Verdict = v
			r.SameRegistry = sameRegistry
			r.Error = "the node could not pull the probe image " + r.Image + ": " + redact.String(msg)
			return
		}
		if st.Terminated != nil {
			c, cancel := reqCtx(ctx)
			defer cancel()
			raw, err := cs.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: "probe", LimitBytes: ptr(int64(4 << 20))}).DoRaw(c)
			if err != nil {
				r.Status, r.Error, r.Verdict = ProbeError, "reading the probe log: "+err.Error(), unknownClassifier("")
				return
			}
			rep, err := ParseProbeLog(raw)
			if err != nil {
				r.Status, r.Error, r.Verdict = ProbeError, err.Error(), unknownClassifier("")
				return
			}
			r.Status, r.Report, r.Verdict = ProbeDone, rep, rep.Verdict
			return
		}
	}
}

func ptr[T any](v T) *T { return &v }

// containerStarted reports whether a container of p has run or runs.
func containerStarted(p *corev1.Pod) bool {
	for _, st := range p.Status.ContainerStatuses {
		if st.State.Running != nil || st.State.Terminated != nil {
			return true
		}
	}
	return false
}

// sandboxImage matches the CRI runtime's "failed to get sandbox image
// \"IMG\"" (containerd's sandbox_image pull) inside the kubelet's
// FailedCreatePodSandBox event.
var sandboxImage = regexp.MustCompile(`failed to get sandbox image \\?"([^"\\]+)\\?"`)

// probePodEvents lists the events of a probe pod once (nil when the list
// fails: the pod is only looked at again on the next poll).
func probePodEvents(ctx context.Context, cs kube.Interface, p *corev1.Pod) []corev1.Event {
	c, cancel := reqCtx(ctx)
	defer cancel()
	l, err := cs.CoreV1().Events(p.Namespace).List(c, metav1.ListOptions{FieldSelector: "involvedObject.kind=Pod,involvedObject.name=" + p.Name})
	if err != nil {
		return nil
	}
	return l.Items
}

// sandboxEvent returns the kubelet's FailedCreatePodSandBox message of a
// probe pod when it says the sandbox image could not be pulled, and that
// image; "" when there is none.
func sandboxEvent(events []corev1.Event) (msg, image string) {
	for i := range events {
		e := &events[i]
		if e.Reason != "FailedCreatePodSandBox" {
			continue
		}
		if m := sandboxImage.FindStringSubmatch(e.Message); m != nil {
			return e.Message, m[1]
		}
	}
	return "", ""
}

// mountEvent returns the kubelet's FailedMount message of a probe pod
// whose hostPath volume failed its type check ("hostPath type check
// failed: PATH is not a file"), or "".
func mountEvent(events []corev1.Event) string {
	for i := range events {
		if e := &events[i]; e.Reason == "FailedMount" && strings.Contains(e.Message, "hostPath type check failed") {
			return e.Message
		}
	}
	return ""
}

// pullEvent returns the message of the first detailed "Failed to pull
// image" event of a probe pod, or "".
func pullEvent(events []corev1.Event) string {
	var first *corev1.Event
	for i := range events {
		e := &events[i]
		if isDetailedPullFailure(e) && (first == nil || eventTime(e).Before(eventTime(first))) {
			first = e
		}
	}
	if first == nil {
		return ""
	}
	return first.Message
}

// ParseProbeLog reads the probe's JSON report from its log: the last line
// that parses as a report (the probe prints one JSON object; anything
// before it is ignored).
func ParseProbeLog(log []byte) (*probe.Report, error) {
	dec := json.NewDecoder(bytes.NewReader(trimToJSON(log)))
	var last *probe.Report
	for {
		var r probe.Report
		err := dec.Decode(&r)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			break
		}
		if r.Image != "" || r.Verdict.Layer != "" {
			last = &r
		}
	}
	if last == nil {
		return nil, fmt.Errorf("parsing the probe log: no JSON report in %d bytes", len(log))
	}
	if !last.Verdict.Layer.Valid() {
		return nil, fmt.Errorf("parsing the probe log: unknown layer %q", last.Verdict.Layer)
	}
	return last, nil
}

// trimToJSON drops anything before the first '{'.
func trimToJSON(b []byte) []byte {
	if i := bytes.IndexByte(b, '{'); i >= 0 {
		return b[i:]
	}
	return nil
}

// Cleanup deletes the probe Jobs diagnose made in namespace: those of one
// run, or of every run when runID is empty. It returns their names.
func Cleanup(ctx context.Context, cs kube.Interface, namespace, runID string) ([]string, error) {
	sel := LabelManagedBy + "=" + managedBy + "," + LabelComponent + "=probe"
	if runID != "" {
		sel += "," + LabelRun + "=" + runID
	}
	c, cancel := reqCtx(ctx)
	defer cancel()
	jobs, err := cs.BatchV1().Jobs(namespace).List(c, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("listing probe jobs: %w", err)
	}
	var deleted []string
	bg := metav1.DeletePropagationBackground
	var errs []error
	for i := range jobs.Items {
		name := jobs.Items[i].Name
		if err := cs.BatchV1().Jobs(namespace).Delete(c, name, metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
			errs = append(errs, fmt.Errorf("deleting job %s: %w", name, err))
			continue
		}
		deleted = append(deleted, name)
	}
	slices.Sort(deleted)
	return deleted, errors.Join(errs...)
}
