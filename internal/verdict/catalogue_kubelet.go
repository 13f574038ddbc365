package verdict

// The kubelet credential provider causes: the node's own
// identity, obtained by running the provider named in the kubelet's
// --image-credential-provider-config the way the kubelet does. They live in
// their own file so the main catalogue stays as it is. When a provider
// fails at pull time the kubelet pulls anonymously, so these causes stand in
// for the 401 that follows; a provider that works but whose credentials are
// rejected is the existing auth.bad-credentials or authz.* with the identity
// "kubelet credential provider NAME".
func init() {
	const providerLogs = "The kubelet logs each provider run at -v=5 and its failures at -v=2 (`journalctl -u kubelet | grep -i 'credential provider'`); run `pullpath probe --as-kubelet IMAGE` on the node to run the provider again the same way."
	register(
		Cause{Code: "config.credential-provider", Layer: LayerConfig, Owner: OwnerNode,
			Summary: "The kubelet's credential provider configuration (--image-credential-provider-config) is missing, unreadable or invalid: the kubelet does not start with it, so the node runs no provider.",
			Next: []string{
				"Fix or restore the file the kubelet's flag names (AKS: /var/lib/kubelet/credential-provider-config.yaml; EKS: /etc/eks/image-credential-provider/config.json; GKE: the node image's cri_auth_config.yaml), or remove the flag; the config is a CredentialProviderConfig, kubelet.config.k8s.io/v1.",
				"Both flags are needed: --image-credential-provider-config and --image-credential-provider-bin-dir.",
				"On a managed pool this file is the platform's: reimage or upgrade the node rather than editing it by hand."}},
		Cause{Code: "config.credential-provider-binary", Layer: LayerConfig, Owner: OwnerNode,
			Summary: "The kubelet credential provider binary named in its config is missing from --image-credential-provider-bin-dir or is not executable.",
			Next: []string{
				"The binary must be <bin-dir>/<provider name>, executable by root (AKS: acr-credential-provider, EKS: ecr-credential-provider, GKE: auth-provider-gcp).",
				"A missing binary stops the kubelet at start-up; one that cannot be executed makes every pull from the registries it matches anonymous."}},
		// The monitor agent's own setup: it must present what the
		// kubelet presents, so a provider it cannot run is its failure, not
		// the registry's refusal of the anonymous pull that would follow.
		Cause{Code: "config.monitor-credential-provider", Layer: LayerConfig, Owner: OwnerNode,
			Summary: "The pullpath monitor agent could not run the kubelet's credential provider for this image the way the kubelet does, so it cannot tell whether the node's pull works: this is the agent's setup, not the registry refusing the node.",
			Next: []string{
				"The agent runs the provider chrooted into the node's root (/host), as the kubelet runs it on the node: its container needs the SYS_CHROOT capability (deploy/monitor/daemonset.yaml and the chart add only that one). Check that a policy (Pod Security admission, Gatekeeper, Kyverno) did not strip it: `kubectl -n pullpath get ds pullpath-monitor -o yaml`.",
				"The provider binary and every directory above it must be owned by root and writable by nobody else, or the agent does not run it.",
				"Run `pullpath probe --as-kubelet IMAGE` on the node to run the provider as the kubelet does."}},
		Cause{Code: "auth.provider-no-match", Layer: LayerAuth,
			Summary: "{role} {endpoint} requires credentials, and no kubelet credential provider's matchImages matches the image, so the kubelet never asked one and pulled anonymously.",
			Next: []string{
				"Compare the image's registry host (and port) with the providers' matchImages: a '*' matches one DNS label only (*.azurecr.io does not match a.b.azurecr.io), ports must be equal and a path is a prefix.",
				"Use the registry name the provider serves (e.g. the ACR login server myreg.azurecr.io, not a custom domain), or give the pod an imagePullSecret for this registry."}},
		Cause{Code: "auth.provider-failed", Layer: LayerAuth,
			Summary: "The kubelet credential provider for this image exited with an error or answered something the kubelet cannot use, so the kubelet pulled anonymously and {role} {endpoint} refused it.",
			Next: []string{
				"Read the provider's stderr in the evidence (redacted): it usually names the identity endpoint it could not use (AKS: IMDS 169.254.169.254 and the kubelet identity's client id in azure.json; EKS: the node role and STS/ECR endpoints; GKE: the metadata server).",
				providerLogs}},
		Cause{Code: "auth.provider-timeout", Layer: LayerAuth,
			Summary: "The kubelet credential provider for this image did not answer within the kubelet's one-minute deadline (context deadline exceeded), so the kubelet pulled anonymously and {role} {endpoint} refused it.",
			Next: []string{
				"The provider is waiting on its identity endpoint: check the node's route and proxy to it (AKS: IMDS 169.254.169.254; EKS: STS and ECR endpoints, or their VPC endpoints; GKE: metadata.google.internal).",
				providerLogs}},
		Cause{Code: "auth.provider-no-credentials", Layer: LayerAuth,
			Summary: "The kubelet credential provider ran but returned no credentials whose key matches this image, so the kubelet pulled anonymously and {role} {endpoint} refused it.",
			Next: []string{
				"Compare the auth keys the provider returned (in the evidence) with the image's registry host: the kubelet matches them with the same rules as matchImages.",
				"A provider answers only for the registries its identity may use: check that the registry is the one the provider is for (AKS: the ACR attached to the cluster)."}},
	)
}
