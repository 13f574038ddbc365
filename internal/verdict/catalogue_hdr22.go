package verdict

// A hosts.toml Authorization header that its host rejects (branch hdr22;
// to be folded into catalogue_auth.go).
func init() {
	register(
		Cause{Code: "auth.hosts-header-rejected", Layer: LayerAuth, Owner: OwnerNode,
			Summary: "{role} {endpoint} rejected the Authorization header that the node's hosts.toml sets for it (401), and the pull had no credential of its own to answer the challenge with: containerd sends the header on every request to the host and, when the host refuses it, answers the challenge with the pull's credential (the kubelet's AuthConfig, else config.toml's registry.configs auth); with none it gives up on the host (remotes/docker authorizer.go AddResponses).",
			Next: []string{
				"Fix or remove the [header] Authorization of this host in the node's hosts.toml (config_path, e.g. /etc/containerd/certs.d/<registry>/hosts.toml): its credential is stale or not valid for this host.",
				"Or give the pods a credential for the image's registry (imagePullSecrets or the kubelet credential provider): containerd answers the host's 401 with it."}},
		warning("auth.hosts-header-retried", LayerAuth, OwnerNode,
			"A host rejected the Authorization header that the node's hosts.toml sets for it (401), and containerd answered the challenge with the pull's own credential instead (remotes/docker authorizer.go AddResponses): every pull pays a rejected request there first, and the header is stale or wrong for this host.",
			"Fix or remove the [header] Authorization of this host in the node's hosts.toml."),
	)
}
