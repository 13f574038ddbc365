package verdict

// CRI-O's per-namespace files (internal/runtimecfg crio_namespace.go):
// namespaced_auth_dir and signature_policy_dir, read as CRI-O's
// server/image_pull.go pullImage reads them for the pod's namespace.
func init() {
	register(
		Cause{Code: "config.crio-auth-file", Layer: LayerConfig, Owner: OwnerNode,
			Summary: "The auth file containers/image reads for this CRI-O pull (the pod namespace's file in namespaced_auth_dir, else global_auth_file, else root's default auth files) exists but cannot be read or is not JSON: containers/image fails every source before any network step.",
			Next: []string{
				"Fix or remove the file named in the evidence; `skopeo inspect --authfile FILE docker://<image>` on the node reads it the same way.",
				"A file in namespaced_auth_dir is written by CRI-O's credential provider (crio-credential-provider) before each pull: check the provider's log and the kubelet's --image-credential-provider-config."}},
		warning("config.crio-namespace-unknown", LayerConfig, OwnerNode,
			"Warning: the probe was not told the pod's namespace, but this CRI-O node has per-namespace files that a pod's pull reads (namespaced_auth_dir/<namespace>-<sha256 of the image name>.json, signature_policy_dir/<namespace>.json): the pod may present other credentials or meet another signature policy than the probe did.",
			"Run the probe with --pod-namespace NS (pullpath diagnose --probe passes the pod's namespace to its probe Jobs).",
			"`ls /etc/crio/auth /etc/crio/policies` on the node (or the directories crio.conf names) shows which namespaces have files."),
	)
}
