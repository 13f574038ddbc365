package verdict

// The manifest layer's causes and warnings.
var manifestEntries = []Cause{
	Cause{Code: "manifest.unknown", Layer: LayerManifest,
		Summary: "The registry has no manifest for this tag or digest.",
		Next:    []string{"Check the tag/digest in the workload's image field; list tags of the repository to see what exists."}},
	Cause{Code: "manifest.name-unknown", Layer: LayerManifest,
		Summary: "The registry has no repository of this name.",
		Next:    []string{"Check the repository path in the image field (project/namespace prefix, library/ for Docker Hub official images)."}},
	Cause{Code: "manifest.platform", Layer: LayerManifest,
		Summary: "The image index has no manifest for the node's platform.",
		Next:    []string{"Build and push the image for the node's OS/architecture (e.g. linux/arm64 pools), or keep the workload off nodes of that platform with a nodeSelector."}},
	Cause{Code: "manifest.invalid", Layer: LayerManifest, Owner: OwnerRegistry,
		Summary: "The registry returned a manifest the runtime cannot use (unknown media type or malformed).",
		Next:    []string{"Inspect the manifest (`crane manifest <image>`) and re-push the image with a standard OCI or Docker media type."}},

	// Warnings: what works today but will break or mislead.
	warning("manifest.platform-risk", LayerManifest, OwnerApp,
		"A node pool the workload may be scheduled on has a platform (OS/architecture) on which no node holds or runs the image yet: the first replica there fails if the image has no manifest for it.",
		"Check that the image index has a manifest for the pool's platform (`crane manifest IMAGE`), or keep the workload off that pool with a node selector."),
}
