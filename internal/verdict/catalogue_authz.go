package verdict

// The authz layer's causes and warnings.
var authzEntries = []Cause{
	Cause{Code: "authz.denied", Layer: LayerAuthz,
		Summary: "The identity is known but may not pull this repository from {endpoint} (403/denied or insufficient scope).",
		Next:    []string{"Grant the pull identity read on this repository (ACR: AcrPull or Container Registry Repository Reader for ABAC registries; ECR: repository policy/IAM; token scope repository:<repo>:pull)."}},
	Cause{Code: "authz.ip-denied", Layer: LayerAuthz,
		Summary: "The registry's firewall refuses the node's client IP at {endpoint}.",
		Next:    []string{"Allow the node's egress IP in the registry's network rules, or reach the registry through its private endpoint (and check the node resolves the private address)."}},
	Cause{Code: "authz.denied-or-missing", Layer: LayerAuthz,
		Summary: "The registry answered 'access denied or repository does not exist': either the repository/tag is missing or the identity may not read it; the registry does not say which.",
		Next:    []string{"Check that the repository and tag exist (e.g. `crane ls <registry>/<repo>` or the registry portal) with an identity that can read it.", "If it exists, check the pull identity's scope on that repository."}},
}
