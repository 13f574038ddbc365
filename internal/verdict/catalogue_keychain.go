package verdict

// The warnings of the kubelet's keychain (internal/keychain):
// which credential the kubelet sends and which host receives it.
func init() {
	register(
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
	)
}
