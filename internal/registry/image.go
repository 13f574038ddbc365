package registry

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/containerd/platforms"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// IsIndex reports whether a media type is an image index or manifest list.
func IsIndex(mediaType string) bool {
	return mediaType == ocispec.MediaTypeImageIndex || mediaType == "application/vnd.docker.distribution.manifest.list.v2+json"
}

// IsManifest reports whether a media type is an image manifest.
func IsManifest(mediaType string) bool {
	return mediaType == ocispec.MediaTypeImageManifest || mediaType == "application/vnd.docker.distribution.manifest.v2+json"
}

// SelectPlatform picks from an index the manifest containerd would pull on a
// node of platform p ("os/arch[/variant]"), using containerd's own platform
// matcher (platforms.Only, as the CRI plugin does). It returns the platforms
// the index offers when none matches.
func SelectPlatform(index []byte, p string) (Descriptor, []string, error) {
	spec, err := platforms.Parse(p)
	if err != nil {
		return Descriptor{}, nil, fmt.Errorf("parsing platform %q: %w", p, err)
	}
	var idx ocispec.Index
	if err := json.Unmarshal(index, &idx); err != nil {
		return Descriptor{}, nil, fmt.Errorf("parsing index: %w", err)
	}
	m := platforms.Only(spec)
	var offered []string
	var best *ocispec.Descriptor
	for i := range idx.Manifests {
		d := &idx.Manifests[i]
		if d.Platform == nil {
			continue
		}
		offered = append(offered, platforms.Format(*d.Platform))
		if m.Match(*d.Platform) && (best == nil || m.Less(*d.Platform, *best.Platform)) {
			best = d
		}
	}
	if best != nil {
		if err := checkSize("index entry "+best.Digest.String(), best.Size); err != nil {
			return Descriptor{}, nil, fmt.Errorf("index: %w", err)
		}
	}
	if best == nil {
		return Descriptor{}, offered, fmt.Errorf("no match for platform %s in manifest: offered %s", platforms.Format(spec), strings.Join(offered, ", "))
	}
	return Descriptor{MediaType: best.MediaType, Digest: best.Digest, Size: best.Size}, offered, nil
}

// Layers returns the config and layer descriptors of an image manifest, in
// the order containerd fetches them (config first).
func Layers(manifest []byte) ([]Descriptor, error) {
	var m ocispec.Manifest
	if err := json.Unmarshal(manifest, &m); err != nil {
		return nil, fmt.Errorf("parsing manifest: %w", err)
	}
	if m.Config.Digest == "" {
		return nil, fmt.Errorf("manifest has no config descriptor")
	}
	if err := checkSize("config "+m.Config.Digest.String(), m.Config.Size); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	out := make([]Descriptor, 0, len(m.Layers)+1)
	out = append(out, Descriptor{MediaType: m.Config.MediaType, Digest: m.Config.Digest, Size: m.Config.Size})
	for _, l := range m.Layers {
		if l.Digest.Validate() != nil {
			return nil, fmt.Errorf("manifest names an invalid layer digest %q", l.Digest)
		}
		if err := checkSize("layer "+l.Digest.String(), l.Size); err != nil {
			return nil, fmt.Errorf("manifest: %w", err)
		}
		out = append(out, Descriptor{MediaType: l.MediaType, Digest: l.Digest, Size: l.Size})
	}
	return out, nil
}
