package verdict

// CRI-O's configuration (internal/runtimecfg crio*.go, registries.go):
// crio.conf, containers-registries.conf(5), containers-certs.d(5) and
// containers-policy.json(5), as CRI-O and containers/image read them.
func init() {
	register(
		Cause{Code: "config.crio", Layer: LayerConfig, Owner: OwnerNode,
			Summary: "CRI-O cannot decode its configuration (crio.conf or a crio.conf.d drop-in), so it does not start and no pull can happen.",
			Next: []string{
				"Fix the file and line named in the evidence; `crio config` on the node prints the configuration CRI-O would use, and `journalctl -u crio` its start-up error.",
				"Drop-ins in /etc/crio/crio.conf.d are read in lexical order after crio.conf: a later file overrides the keys it sets."}},
		Cause{Code: "config.registries-conf", Layer: LayerConfig, Owner: OwnerNode,
			Summary: "containers/image cannot load registries.conf or a registries.conf.d drop-in (not TOML, the v1 format, a bad prefix, location or alias), so every CRI-O pull fails before any network step.",
			Next: []string{
				"Fix the file and line named in the evidence (containers-registries.conf(5)); `skopeo inspect docker://<image>` on the node loads the same files and prints the same error.",
				"After fixing, send CRI-O SIGHUP (or restart it) so it reloads the registries configuration."}},
		Cause{Code: "config.registry-blocked", Layer: LayerConfig, Owner: OwnerNode,
			Summary: "The [[registry]] of registries.conf that matches the image has blocked = true: containers/image refuses the pull before any network step.",
			Next: []string{
				"Pull the image from an allowed registry, or remove blocked = true from the [[registry]] named in the evidence if the block is not intended (on OpenShift: the image.config.openshift.io cluster resource's registrySources)."}},
		Cause{Code: "config.short-name", Layer: LayerConfig, Owner: OwnerApp,
			Summary: "The image is a short name (no registry host) that CRI-O cannot resolve: short-name-mode is enforcing with several unqualified-search-registries (\"returns ambiguous list\"), or there is neither an alias nor a search registry.",
			Next: []string{
				"Use the fully qualified name in the pod spec (docker.io/library/nginx:1.27, not nginx:1.27).",
				"Or, on the node, add an alias for the name in registries.conf's [aliases], or list a single unqualified-search-registries entry."}},
		Cause{Code: "config.mirror-tag-only", Layer: LayerConfig, Owner: OwnerNode,
			Summary: "Warning: a registries.conf mirror has pull-from-mirror = \"tag-only\", so containers/image skips it for a reference by digest and goes to the next source.",
			Next:    []string{"Set pull-from-mirror = \"all\" if the mirror may serve digests too, or reference the image by tag to use it."}},
		Cause{Code: "config.registries-insecure-tls", Layer: LayerConfig, Owner: OwnerNode,
			Summary: "Warning: registries.conf marks an endpoint insecure (or crio.image.insecure_registries names it), but it offers TLS: its certificates are not verified, and a failed https attempt is retried over plain http.",
			Next:    []string{"Remove insecure = true and give the registry's CA in /etc/containers/certs.d/<host[:port]>/ca.crt instead."}},
		Cause{Code: "config.signature-policy", Layer: LayerConfig, Owner: OwnerNode,
			Summary: "Warning: the containers-policy.json requirement that applies to the image refuses it (reject, an empty list, an unreadable file) or needs a signature (signedBy, sigstoreSigned) that the probe does not verify.",
			Next: []string{
				"Check the policy file and scope named in the evidence (containers-policy.json(5)); CRI-O uses signature_policy_dir/<namespace>.json when it exists, then signature_policy, then /etc/containers/policy.json.",
				"For a signed image, `skopeo copy docker://<image> dir:/tmp/x` on the node applies the same policy."}},
	)
}
