package verdict

// The runtime layer's causes and warnings.
var runtimeEntries = []Cause{
	Cause{Code: "runtime.unpack", Layer: LayerRuntime,
		Summary: "The image arrived but the node failed to unpack a layer.",
		Next:    []string{"Check containerd's log on the node (journalctl -u containerd) and the snapshotter's state."}},
	Cause{Code: "runtime.disk", Layer: LayerRuntime,
		Summary: "The node ran out of disk space while storing the image.",
		Next:    []string{"Free space on the node's container storage (image garbage collection thresholds, larger OS disk)."}},
	Cause{Code: "runtime.snapshotter", Layer: LayerRuntime,
		Summary: "The node's snapshotter failed while preparing the image.",
		Next:    []string{"Check containerd's log and the snapshotter configuration on the node."}},
	Cause{Code: "runtime.error", Layer: LayerRuntime,
		Summary: "The node's runtime failed after the download.",
		Next:    []string{"Check containerd's log on the node (journalctl -u containerd)."}},
	Cause{Code: "runtime.throttled", Layer: LayerRuntime,
		Summary: "The kubelet's own pull rate limit (registryPullQPS / registryBurst) refused to start the pull: the registry was never asked.",
		Next:    []string{"Raise registryPullQPS and registryBurst in the node's kubelet configuration (0 means no limit), or stagger the pods that start at once on the node; the registry's own rate limit is not involved."}},
	Cause{Code: "runtime.content-store", Layer: LayerRuntime,
		Summary: "The bytes arrived, and the node's content store failed to write, resume or commit them (containerd's ingest directory or a lease-locked ref, CRI-O's or podman's storage): the registry and the network are not at fault.",
		Next:    []string{"Read the path in the evidence: a stale or emptied directory under /var/lib/containerd/io.containerd.content.v1.content/ingest/ makes every retry fail the same way; remove that ingest directory (or `ctr -n k8s.io content rm` the ref) and pull again.", "A `ref ... locked` error means another pull of the same layer is running or was left behind by a crashed client: wait for it, or restart containerd to drop the stale lease.", "Check the node's disk and filesystem health under the runtime's root (dmesg, `df -h`, `df -i`)."}},
}
