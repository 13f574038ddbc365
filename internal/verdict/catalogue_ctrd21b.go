package verdict

// Entries of branch ctrd21b (containerd configuration corners), to be
// folded into catalogue_config.go.
func init() {
	register(
		warning("config.hosts-server-repeated", LayerConfig, OwnerNode,
			"Warning: a hosts.toml lists one endpoint twice (a [host] table that names the same endpoint as server, or two [host] tables that name it), and containerd keeps both: it tries that endpoint twice in a row, so a failure there costs twice the time before the pull moves on or fails.",
			"Remove the [host] table that repeats server (the server is tried last anyway), or give server the registry itself and the [host] table the mirror."),
		warning("config.hosts-dir-os", LayerConfig, OwnerNode,
			"Warning: a certs.d directory is named the way containerd looks it up on another operating system (on Windows containerd drops every colon: registry_5000_ or registry5000; on Linux it looks for registry_5000_ or registry:5000), so this node's containerd never reads it.",
			"Rename the directory to registry_5000_ (read on Linux and Windows alike), or to the bare host for a registry without a port."),
	)
}
