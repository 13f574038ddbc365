package verdict

// The warning codes: what works today but will break or mislead. A report
// lists them under warnings; none of them is a verdict. A cause code can be
// a warning too (a kubelet credential provider that fails beside one that
// works), and then its cause entry documents it.
func init() {
	w := func(code string, layer Layer, owner Owner, summary string, next ...string) Cause {
		return Cause{Code: code, Kind: KindWarning, Layer: layer, Owner: owner, Summary: summary, Next: next}
	}
	register(
		// config: what the probe read of the node
		w("probe.pod-view", LayerConfig, OwnerNode,
			"The resolv.conf the probe read is a pod's (cluster DNS search domains), not the node's: the runtime pulls with the node's network namespace and resolver, so this evidence may not be the node's.",
			"Run the probe with hostNetwork and --root at the host's / (`kubectl debug node/NAME`, or `pullpath diagnose --probe`, which does both)."),
		w("azure.read", LayerConfig, OwnerNode,
			"Part of Azure's configuration could not be read (a permission, a missing resource or a throttled call): the checks that needed it say so instead of blaming a setting.",
			"Grant the reader role on the node resource group, the VNets, route tables, NSGs, private endpoints and private DNS zones involved, or pass an export that contains them.",
			"Read the message: it names the call that failed."),
		w("azure.no-pools", LayerConfig, OwnerNode,
			"No node pool could be checked: the cluster lists none, or none named by --pool whose subnet was read.",
			"Check the cluster and --pool names, and that the pools' subnets are readable."),

		// dns
		w("dns.hosts-entry", LayerDNS, OwnerNode,
			"The registry host resolves from the node's /etc/hosts, not from DNS: the pull works on this node and fails on a node built without the entry (a replacement, a scale-up).",
			"Publish the name in the DNS zone the nodes resolve (for a private endpoint: the private DNS zone linked to the node network), then remove the hosts entry.",
			"If the entry is deliberate, make it part of the node image or its bootstrap so every new node gets it."),
		w("dns.split-answer", LayerDNS, OwnerDNS,
			"The node's nameservers give different answers for the same name: which one the runtime asks decides the pull, so it may work and fail by turns.",
			"Make every nameserver in the node's /etc/resolv.conf serve the same view of the registry's zone (the private zone on all of them, or forwarding to it)."),
		w("dns.stub-differs", LayerDNS, OwnerDNS,
			"systemd-resolved's stub (127.0.0.53) fails for the name while its upstream servers answer: per-link DNS (a VPN interface, say) or a routing domain sends the query elsewhere.",
			"Check resolved's per-link servers and domains with `resolvectl status` on the node, and the interface that owns the registry's domain."),
		w("dns.no-resolv-conf", LayerDNS, OwnerNode,
			"The node has no /etc/resolv.conf: Go and containerd then ask 127.0.0.1 and ::1, which usually answer nothing.",
			"Restore /etc/resolv.conf on the node (or the symlink to systemd-resolved's file)."),
		w("dns.resolv-conf", LayerDNS, OwnerNode,
			"A line of the node's resolv.conf is ignored or limited by the resolver (an unknown option, more than three nameservers, a bad address).",
			"Fix the line the message names in the node's /etc/resolv.conf."),

		// route
		w("mirror.unreachable", LayerRoute, OwnerNetwork,
			"A mirror from hosts.toml failed and the pull fell back to the next host: it works, but every pull pays the mirror's failure first, and a mirror that comes back half-working can break pulls.",
			"Fix the mirror's path (the cause in the message) or remove it from the node's hosts.toml."),

		// tls
		w("tls.skip-verify", LayerTLS, OwnerPKI,
			"The node's hosts.toml (or containerd's localhost default) skips certificate verification for this host: the pull works with any certificate, an interceptor's too.",
			"Install the registry's CA on the node (hosts.toml `ca`, or the system trust store) and remove skip_verify."),
		w("tls.expiring", LayerTLS, OwnerPKI,
			"The host's certificate expires soon: the pull fails with tls.expired on that date.",
			"Renew the certificate before the date in the message, and check its automation (cert-manager, the platform's managed certificate)."),

		// auth
		w("auth.foreign-realm", LayerAuth, OwnerRegistry,
			"A host reached by redirect (a blob or CDN host) answered 401 with a token realm of its own: pullpath asked it for an anonymous token only and sent it no credentials, where containerd may send the pull secret.",
			"Check that the redirect target is the registry's own storage; a registry should hand out pre-signed blob URLs that need no token."),
		w("auth.mirror-credentials", LayerAuth, OwnerIdentity,
			"A mirror is asked anonymously: the credentials given are for the registry and go to no other host, while containerd's CRI plugin sends the pod's credentials to mirrors as well.",
			"If the mirror needs credentials, add an entry for the mirror's host to the pull secret or docker config."),
		w("auth.no-matching-secret", LayerAuth, OwnerIdentity,
			"The pull secret or docker config given has no entry for the registry host, so the pull is anonymous.",
			"Add an auths entry for the exact registry host (and port) of the image, or use the secret that has it."),
		w("auth.provider-unusable", LayerAuth, OwnerNode,
			"The kubelet's credential provider could not be run by the probe (its config or binary is missing or unreadable where the probe looked), so the probe went on without it.",
			"Run the probe on the node with --root at the host's / and the provider's paths mounted, or with --as-kubelet to make this the verdict (config.credential-provider or config.credential-provider-binary)."),
		w("auth.provider-several-credentials", LayerAuth, OwnerIdentity,
			"The kubelet holds several credentials for the image and tries them in turn until one pulls: a failing one slows every pull, and when all fail the verdict is the one furthest along the pull path.",
			"Remove or fix the credentials that fail (the message names the provider and key of each, never the secret)."),

		// manifest
		w("manifest.platform-risk", LayerManifest, OwnerApp,
			"A node pool the workload may be scheduled on has a platform (OS/architecture) on which no node holds or runs the image yet: the first replica there fails if the image has no manifest for it.",
			"Check that the image index has a manifest for the pool's platform (`crane manifest IMAGE`), or keep the workload off that pool with a node selector."),
	)
}
