package probe

import (
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
)

// TestManifestSizeOutOfRange: a layer size of MaxInt64 (which overflowed
// the read limit into "got 0 bytes") and a negative size are
// manifest.invalid, owned by the registry, with a message naming the size.
func TestManifestSizeOutOfRange(t *testing.T) {
	cfg := []byte(`{"architecture":"amd64","os":"linux"}`)
	layer := []byte("layer")
	for _, tt := range []struct {
		name string
		size int64
	}{
		{"max int64", math.MaxInt64},
		{"negative", -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := json.Marshal(map[string]any{
				"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
				"config": map[string]any{"mediaType": "application/vnd.oci.image.config.v1+json", "digest": digest.FromBytes(cfg), "size": len(cfg)},
				"layers": []any{map[string]any{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": digest.FromBytes(layer), "size": tt.size}},
			})
			h := newHostile(t, func(w http.ResponseWriter, r *http.Request) {
				switch {
				case strings.Contains(r.URL.Path, "/manifests/"):
					w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
					w.Header().Set("Docker-Content-Digest", digest.FromBytes(m).String())
					_, _ = w.Write(m)
				case strings.HasSuffix(r.URL.Path, digest.FromBytes(cfg).String()):
					_, _ = w.Write(cfg)
				case strings.HasSuffix(r.URL.Path, digest.FromBytes(layer).String()):
					_, _ = w.Write(layer)
				default:
					w.WriteHeader(http.StatusOK)
				}
			})
			rep := h.probe(t, h.image("team/app:1"), Options{})
			v := rep.Verdict
			if v.Cause != "manifest.invalid" || v.Owner != "registry" && v.Owner != "app" || !strings.Contains(v.Summary+v.Evidence, "size") {
				t.Errorf("probe(layer size %d) = %s owner %s, %q / %q; want manifest.invalid naming the size", tt.size, v.Cause, v.Owner, v.Summary, v.Evidence)
			}
		})
	}
}
