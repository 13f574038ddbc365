package verdict

// The unknown layer's causes and warnings.
var unknownEntries = []Cause{
	Cause{Code: "unknown.deadline", Layer: LayerUnknown,
		Summary: "The pull hit a deadline without saying which step was waiting.",
		Next:    []string{"Find the earlier `Failed to pull image` event or containerd's log (journalctl -u containerd, look for 'trying next host' / 'fetch failed') to see the step.", nodeView}},
	Cause{Code: "unknown.kubelet-deadline", Layer: LayerUnknown, Owner: OwnerNode,
		Summary: "The CRI call ended with the gRPC code DeadlineExceeded and no runtime text, which is what the kubelet's own deadline for the call gives: the kubelet stopped waiting (--runtime-request-timeout, 2 minutes by default, which older kubelets applied to pulls and which bounds the sandbox creation that pulls the sandbox image), so the runtime's account of the step never reached it.",
		Next:    []string{"Read the runtime's log on the node for the same image at that time (journalctl -u containerd or -u crio): it names the step that was still running when the kubelet gave up.", "Pull the image by hand on the node (`crictl pull <image>`) to see how long it takes; a slow but working pull is fixed by pre-pulling, a mirror nearer the node or a longer --runtime-request-timeout.", nodeView}},
	Cause{Code: "unknown.canceled", Layer: LayerUnknown, Owner: OwnerNode,
		Summary: "The pull was cancelled, and the text does not say who cancelled it: the kubelet when the pod was deleted or its worker stopped, the kubelet's or the runtime's no-progress watchdog, or a client that gave up. No step of the pull path is named.",
		Next:    []string{"Check whether the pod was deleted or replaced at that time (`kubectl get events`); if so, nothing is broken.", "Otherwise look in the runtime's log for `cancel pulling image ... because of no progress` (containerd) or the pull's last progress line: that is a stalled download, and the host it was reading from is the one to test.", nodeView}},
	Cause{Code: "unknown.backoff", Layer: LayerUnknown,
		Summary: "A back-off message carries no detail: the cause is in the earlier `Failed to pull image` event or the container's waiting message.",
		Next:    []string{"Run `kubectl describe pod <pod>` and read the first `Failed to pull image` event, or `kubectl get pod <pod> -o jsonpath='{.status.containerStatuses[*].state.waiting.message}'`, and pass that text to `pullpath explain`."}},
	Cause{Code: "unknown.interrupted", Layer: LayerUnknown,
		Summary: "The probe was interrupted before it finished: the trace shows the steps done so far, and no step is blamed.",
		Next:    []string{"Run the probe again and let it finish; --timeout bounds each step and --deadline the whole probe."}},
	Cause{Code: "unknown", Layer: LayerUnknown,
		Summary: "The failure does not name a step of the pull path.",
		Next:    []string{nodeView}},
}
