package verdict

// The warnings of the runtime's own credentials (internal/keychain
// Route with the node's hosts.toml headers and config.toml auths).
func init() {
	register(
		Cause{Code: "auth.hosts-header-credential", Layer: LayerAuth, Owner: OwnerNode,
			Summary: "Warning: a hosts.toml [host.\"...\".header] sets Authorization for a host of the plan. containerd sends it on every request to that host and replaces it with the kubelet's credential only after the host answers 401 (remotes/docker ConfigureHosts and authorizer.go), so while the host accepts the header it never sees the pod's pull secret or the credential provider's answer; measured on containerd 1.6 and 2.2 by the credential lab.",
			Next: []string{
				"Make sure the header's identity may pull every image that goes through this host: it stands in for every pod's credentials there.",
				"Prefer imagePullSecrets or a credential provider for per-workload access, and keep the header only for a mirror's own login."}},
		Cause{Code: "config.auth-unreadable", Layer: LayerConfig, Owner: OwnerNode,
			Summary: "Warning: a registry.configs.\"<host>\".auth of containerd's config.toml (written by k3s/RKE2 from registries.yaml, or by Bottlerocket from settings.container-registry.credentials) has an auth field that is not base64 of user:password: containerd's ParseAuth fails, and pulls that rely on it fail.",
			Next: []string{
				"Rewrite the auth as base64 of user:password, or give username and password instead (registries.yaml configs.<host>.auth, Bottlerocket settings.container-registry.credentials), then restart the runtime."}},
	)
}
