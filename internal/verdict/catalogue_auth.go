package verdict

// The auth layer's causes and warnings.

// providerLogs is the next step shared by the credential provider's
// pull-time causes.
const providerLogs = "The kubelet logs each provider run at -v=5 and its failures at -v=2 (`journalctl -u kubelet | grep -i 'credential provider'`); run `pullpath probe --as-kubelet IMAGE` on the node to run the provider again the same way."

var authEntries = []Cause{
	Cause{Code: "auth.no-credentials", Layer: LayerAuth,
		Summary: "{role} {endpoint} requires credentials and the pull had none (anonymous pull rejected with 401).",
		Next:    []string{"Give the runtime an identity for this registry: an imagePullSecret (on the pod or its service account) with an entry for the registry host, or the node's credential provider (AKS kubelet identity with AcrPull, EKS node role, GKE node service account)."}},
	Cause{Code: "auth.bad-credentials", Layer: LayerAuth,
		Summary: "{role} {endpoint} rejected the credentials the pull used (401).",
		Next:    []string{"Check which identity was sent (pull secret user, kubelet identity) and that its password/token is current and matches this registry host."}},
	Cause{Code: "auth.cleartext", Layer: LayerAuth, Owner: OwnerRegistry,
		Summary: "{role} {endpoint} would receive the pull's credentials over plain http; pullpath refused to send them in cleartext.",
		Next:    []string{"Serve the token realm (and the registry) over https; the realm is the URL in the registry's WWW-Authenticate challenge.", "Only if this plain-http host is intended, declare it in the node's hosts.toml (server or [host.\"http://...\"]), as containerd requires."}},
	Cause{Code: "auth.token", Layer: LayerAuth,
		Summary: "The token service at {endpoint} did not issue a usable token.",
		Next:    []string{"Check the registry's WWW-Authenticate challenge (realm, service) and the token service's answer for this scope."}},

	// The kubelet's keychain (internal/keychain): which credential the
	// kubelet sends and which host receives it.
	Cause{Code: "auth.pull-secret-key-unused", Layer: LayerAuth, Owner: OwnerIdentity,
		Summary: "A key of a pull secret matches no image of the workload by the kubelet's rule (pkg/credentialprovider keyring.go URLsMatch: the key's path a string prefix of the image's path, the same port, each host label glob-matched), so the kubelet never sends that credential.",
		Next: []string{
			"Compare the key with the images: a key with a path (registry/team-a) matches only repositories under that path, a key with a port (registry:443) only images written with that port.",
			"Add a key for the image's registry or repository, or remove the key if it is stale."}},
	Cause{Code: "auth.key-matches-differently", Layer: LayerAuth, Owner: OwnerIdentity,
		Summary: "A pull-secret key matches the image one way for the kubelet and the other way for docker and crane, which look a registry up by its host alone: a pull tested with docker or crane says nothing about what the kubelet sends.",
		Next: []string{
			"Test with pullpath probe --pull-secret (the kubelet's rule), not docker pull or crane.",
			"Write the key as the kubelet needs it: the registry host for every repository, registry/path for one path (a string prefix, no '/' boundary), *.domain for one label."}},
	Cause{Code: "auth.serviceaccount-secret-unused", Layer: LayerAuth, Owner: OwnerIdentity,
		Summary: "The service account lists a pull secret that the kubelet does not use: the pod lists imagePullSecrets of its own, and the ServiceAccount admission plugin copies the service account's into a pod only when the pod is created without any.",
		Next: []string{
			"Put every needed pull secret in the pod's imagePullSecrets, or remove the pod's so that new pods get the service account's."}},
	Cause{Code: "auth.mirror-anonymous", Layer: LayerAuth, Owner: OwnerIdentity,
		Summary: "A mirror of the node's plan is asked anonymously although a credential exists for the image's registry: the runtime gives the kubelet's credential only to the registry itself (containers/image for a mirror on another domain; containerd when the AuthConfig names a server address).",
		Next: []string{
			"If the mirror needs credentials, give them where the runtime reads them for the mirror: CRI-O's global_auth_file or namespaced_auth_dir, containerd's registry.configs.\"<mirror>\".auth (k3s registries.yaml), or a hosts.toml header.",
			"Otherwise allow anonymous pulls on the mirror, or accept that every pull pays a 401 there before falling back to the registry."}},

	// The kubelet credential provider at pull time. When a provider fails,
	// the kubelet pulls anonymously, so these causes stand in for the 401
	// that follows; a provider that works but whose credentials are rejected
	// is auth.bad-credentials or authz.* with the identity
	// "kubelet credential provider NAME".
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

	// KEP-4412: a kubelet credential provider that takes the pod's
	// service-account token (tokenAttributes in its config).
	Cause{Code: "auth.provider-service-account", Layer: LayerAuth,
		Summary: "The kubelet credential provider for this image works with the pod's service-account token (tokenAttributes, KEP-4412), and it could not have one: the pod has no service account while the provider requires it, the service account lacks an annotation the provider requires, or no token for the provider's audience could be had. The kubelet then does not run the provider and pulls anonymously, and {role} {endpoint} refused it.",
		Next: []string{
			"Compare the pod's service account with the provider's tokenAttributes: requiredServiceAccountAnnotationKeys must all be on it (AKS: kubernetes.azure.com/acr-client-id, the identity allowed to pull).",
			"Check that the registry trusts tokens for the configured serviceAccountTokenAudience from this service account (AKS: the federated credential of the identity; a custom provider: its own mapping).",
			"To get a token the way the kubelet does, pullpath needs create on serviceaccounts/token and get on serviceaccounts in the pod's namespace (probe --service-account NS/NAME, diagnose)."}},

	// Warnings: what works today but will break or mislead.
	warning("auth.foreign-realm", LayerAuth, OwnerRegistry,
		"A host reached by redirect (a blob or CDN host) answered 401 with a token realm of its own: pullpath asked it for an anonymous token only and sent it no credentials, where containerd may send the pull secret.",
		"Check that the redirect target is the registry's own storage; a registry should hand out pre-signed blob URLs that need no token."),
	warning("auth.mirror-credentials", LayerAuth, OwnerIdentity,
		"A mirror is asked anonymously: the credentials given are for the registry and go to no other host, while containerd's CRI plugin sends the pod's credentials to mirrors as well.",
		"If the mirror needs credentials, add an entry for the mirror's host to the pull secret or docker config."),
	warning("auth.node-docker-config-skipped", LayerAuth, OwnerNode,
		"A docker config file of the kubelet's node keyring (config.json or .dockercfg under its --root-dir, /, $HOME/.docker or /.docker) exists but cannot be read or decoded: the kubelet passes over it, logging only at level 4, and uses the next file or none.",
		"Fix the file (it must be {\"auths\": {...}} for config.json, the legacy map for .dockercfg, each auth base64 of user:password) or remove it."),
	warning("auth.no-matching-secret", LayerAuth, OwnerIdentity,
		"The pull secret or docker config given has no entry for the registry host, so the pull is anonymous.",
		"Add an auths entry for the exact registry host (and port) of the image, or use the secret that has it."),
	warning("auth.provider-unusable", LayerAuth, OwnerNode,
		"The kubelet's credential provider could not be run by the probe (its config or binary is missing or unreadable where the probe looked), so the probe went on without it.",
		"Run the probe on the node with --root at the host's / and the provider's paths mounted, or with --as-kubelet to make this the verdict (config.credential-provider or config.credential-provider-binary)."),
	warning("auth.provider-several-credentials", LayerAuth, OwnerIdentity,
		"The kubelet holds several credentials for the image and tries them in turn until one pulls: a failing one slows every pull, and when all fail the verdict is the one furthest along the pull path.",
		"Remove or fix the credentials that fail (the message names the provider and key of each, never the secret)."),
	warning("auth.hosts-header-credential", LayerAuth, OwnerNode,
		"A hosts.toml [host.\"...\".header] sets Authorization for a host of the plan. containerd sends it on every request to that host and replaces it with the kubelet's credential only after the host answers 401 (remotes/docker ConfigureHosts and authorizer.go), so while the host accepts the header it never sees the pod's pull secret or the credential provider's answer; measured on containerd 1.6 and 2.2 by the credential lab.",
		"Make sure the header's identity may pull every image that goes through this host: it stands in for every pod's credentials there.",
		"Prefer imagePullSecrets or a credential provider for per-workload access, and keep the header only for a mirror's own login."),
	Cause{Code: "auth.hosts-header-rejected", Layer: LayerAuth, Owner: OwnerNode,
		Summary: "{role} {endpoint} rejected the Authorization header that the node's hosts.toml sets for it (401), and the pull had no credential of its own to answer the challenge with: containerd sends the header on every request to the host and, when the host refuses it, answers the challenge with the pull's credential (the kubelet's AuthConfig, else config.toml's registry.configs auth); with none it gives up on the host (remotes/docker authorizer.go AddResponses).",
		Next: []string{
			"Fix or remove the [header] Authorization of this host in the node's hosts.toml (config_path, e.g. /etc/containerd/certs.d/<registry>/hosts.toml): its credential is stale or not valid for this host.",
			"Or give the pods a credential for the image's registry (imagePullSecrets or the kubelet credential provider): containerd answers the host's 401 with it."}},
	warning("auth.hosts-header-retried", LayerAuth, OwnerNode,
		"A host rejected the Authorization header that the node's hosts.toml sets for it (401), and containerd answered the challenge with the pull's own credential instead (remotes/docker authorizer.go AddResponses): every pull pays a rejected request there first, and the header is stale or wrong for this host.",
		"Fix or remove the [header] Authorization of this host in the node's hosts.toml."),
}
