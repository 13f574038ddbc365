package verdict

// The runtime configuration's cause and lints (internal/runtimecfg).
// The lints are warnings: the pull may work today, but a setting is ignored
// or misleads. They are registered here so that their codes, owners and
// next steps are documented with the causes.
func init() {
	register(
		Cause{Code: "config.containerd", Layer: LayerConfig, Owner: OwnerNode,
			Summary: "The node's containerd refuses its configuration (config.toml or an import cannot be decoded, or the CRI registry table is rejected), so containerd does not start or its CRI plugin does not load and no pull can happen.",
			Next: []string{
				"Fix the file and line named in the evidence; `containerd config dump` on the node prints the merged configuration containerd reads, and `journalctl -u containerd` its \"failed to load\" line.",
				"Do not set registry.mirrors or (on containerd 1.x) registry.configs.*.tls together with config_path: move mirrors and TLS settings to hosts.toml files under config_path."}},
		Cause{Code: "config.version-ignored", Layer: LayerConfig, Owner: OwnerNode,
			Summary: "Warning: a version 3 containerd configuration is read by containerd 1.x, which ignores its [plugins.\"io.containerd.cri.v1.images\".registry] without a word.",
			Next:    []string{"Write the registry settings for containerd 1.x under [plugins.\"io.containerd.grpc.v1.cri\".registry] in a version 2 file, or upgrade containerd to 2.x."}},
		Cause{Code: "config.legacy-ignored", Layer: LayerConfig, Owner: OwnerNode,
			Summary: "Warning: a legacy registry key is set that this containerd version no longer reads (registry.configs.*.tls on 2.x, a registry table under the cri plugin of a version 3 file).",
			Next:    []string{"Move the setting to hosts.toml under config_path (ca, client, skip_verify, [host.\"...\"] mirrors)."}},
		Cause{Code: "config.legacy-with-config-path", Layer: LayerConfig, Owner: OwnerNode,
			Summary: "Warning: the legacy registry.configs/auths are set together with config_path: only their auth is read, only when the pull carries no credentials, and never for hosts.toml mirrors.",
			Next:    []string{"Give credentials through imagePullSecrets or a kubelet credential provider; remove registry.configs/auths."}},
		Cause{Code: "config.unknown-key", Layer: LayerConfig, Owner: OwnerNode,
			Summary: "Warning: the runtime configuration holds a key the runtime does not know; it ignores it (containerd logs \"Ignoring unknown key\").",
			Next:    []string{"Check the key's spelling and the table it is in against the runtime version's documentation."}},
		Cause{Code: "config.mirror-digest-only", Layer: LayerConfig, Owner: OwnerNode,
			Summary: "Warning: a mirror may pull but not resolve (capabilities without \"resolve\"), so the runtime skips it for references by tag and uses it for references by digest only.",
			Next:    []string{"Add \"resolve\" to the mirror's capabilities if it may serve tags, or reference images by digest to use it."}},
		Cause{Code: "config.hosts-dir-port", Layer: LayerConfig, Owner: OwnerNode,
			Summary: "Warning: a certs.d directory looks meant for the registry but is not named the way containerd looks it up (a registry with a port needs host:port or host_port_, one without a port needs the bare host), so it is never read.",
			Next:    []string{"Rename the directory to the registry exactly as the image reference names it, port included."}},
		Cause{Code: "config.hosts-toml-auth", Layer: LayerConfig, Owner: OwnerNode,
			Summary: "Warning: hosts.toml holds an [auth] table, which containerd does not read (containerd#11274): no credential is sent from it.",
			Next:    []string{"Give credentials through imagePullSecrets or a kubelet credential provider (k3s: registries.yaml's auth, which k3s writes into its own config)."}},
		Cause{Code: "config.hosts-toml-root-tls", Layer: LayerConfig, Owner: OwnerNode,
			Summary: "Warning: hosts.toml sets ca or client at the top level with no [host.\"...\"] table, which some containerd releases fail to decode and then ignore (containerd#10027, containerd#13212).",
			Next:    []string{"Put ca and client inside [host.\"https://<server>\"] (capabilities [\"pull\", \"resolve\"])."}},
		Cause{Code: "config.certs-d-unread", Layer: LayerConfig, Owner: OwnerNode,
			Summary: "Warning: a certs.d directory exists for the registry, but containerd runs without config_path (containerd 1.x's default is empty) and never reads it.",
			Next:    []string{"Set config_path = \"/etc/containerd/certs.d\" under [plugins.\"io.containerd.grpc.v1.cri\".registry] and restart containerd, or remove the unread directory."}},
		Cause{Code: "config.registries-yaml", Layer: LayerConfig, Owner: OwnerNode,
			Summary: "Warning: k3s/RKE2's registries.yaml cannot be parsed; k3s/RKE2 will refuse to start with it, and the containerd files in use were generated from an earlier version.",
			Next:    []string{"Fix /etc/rancher/k3s/registries.yaml (or rke2's) before the next restart of the service."}},
		Cause{Code: "config.registries-stale", Layer: LayerConfig, Owner: OwnerNode,
			Summary: "Warning: k3s/RKE2's registries.yaml names mirror endpoints the generated hosts.toml files do not have: the service has not been restarted since the change, so containerd does not use them.",
			Next:    []string{"Restart k3s (or rke2-server/rke2-agent) so it regenerates agent/etc/containerd, or undo the change."}},
		Cause{Code: "config.k3s-template-auth", Layer: LayerConfig, Owner: OwnerNode,
			Summary: "Warning: registries.yaml gives credentials for a registry or mirror, but the generated containerd configuration has no auth for it (a custom config.toml.tmpl without the auth stanza, or no restart since the change).",
			Next:    []string{"Keep the registry configs/auth block in config.toml.tmpl (k3s's own template has it), or restart the service; the pulls otherwise go without these credentials."}},
		Cause{Code: "config.transfer-path-list", Layer: LayerConfig, Owner: OwnerNode,
			Summary: "Warning: containerd 2.1+ pulls through its transfer service, which takes a colon-separated config_path (the 2.x default /etc/containerd/certs.d:/etc/docker/certs.d among them) as one directory, so no hosts.toml is read (containerd#12415).",
			Next:    []string{"Set config_path to a single directory, or set use_local_image_pull = true in [plugins.\"io.containerd.cri.v1.images\"], until the containerd release in use fixes it."}},
		Cause{Code: "config.runtime-unmodelled", Layer: LayerConfig, Owner: OwnerNode,
			Summary: "Warning: the node's runtime is one whose registry configuration pullpath does not read yet (CRI-O), so the plan shown is containerd's default, not the runtime's.",
			Next:    []string{"Read the node's /etc/containers/registries.conf and registries.conf.d for mirrors, rewrites and blocked registries before trusting the plan; `skopeo inspect` on the node uses the same library as CRI-O."}},
	)
}
