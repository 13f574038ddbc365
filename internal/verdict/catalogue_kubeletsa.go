package verdict

// The KEP-4412 cause: a kubelet credential provider that takes
// the pod's service-account token (tokenAttributes in its config).
func init() {
	register(
		Cause{Code: "auth.provider-service-account", Layer: LayerAuth,
			Summary: "The kubelet credential provider for this image works with the pod's service-account token (tokenAttributes, KEP-4412), and it could not have one: the pod has no service account while the provider requires it, the service account lacks an annotation the provider requires, or no token for the provider's audience could be had. The kubelet then does not run the provider and pulls anonymously, and {role} {endpoint} refused it.",
			Next: []string{
				"Compare the pod's service account with the provider's tokenAttributes: requiredServiceAccountAnnotationKeys must all be on it (AKS: kubernetes.azure.com/acr-client-id, the identity allowed to pull).",
				"Check that the registry trusts tokens for the configured serviceAccountTokenAudience from this service account (AKS: the federated credential of the identity; a custom provider: its own mapping).",
				"To get a token the way the kubelet does, pullpath needs create on serviceaccounts/token and get on serviceaccounts in the pod's namespace (probe --service-account NS/NAME, diagnose)."}},
	)
}
