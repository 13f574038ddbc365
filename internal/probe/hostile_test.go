package probe

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
)

// hostile is a registry on loopback that misbehaves on purpose. The probe
// reaches it by IP literal, trusting its certificate through the node root's
// CA bundle, so no resolver is involved.
type hostile struct {
	srv  *httptest.Server
	root string
}

func newHostile(t *testing.T, h http.HandlerFunc) *hostile {
	t.Helper()
	return hostileAt(t, httptest.NewTLSServer(h))
}

// hostileAt gives a started TLS server a node root that trusts it.
func hostileAt(t *testing.T, srv *httptest.Server) *hostile {
	t.Helper()
	t.Cleanup(srv.Close)
	root := t.TempDir()
	bundle := filepath.Join(root, "etc/ssl/certs/ca-certificates.crt")
	if err := os.MkdirAll(filepath.Dir(bundle), 0o755); err != nil {
		t.Fatal(err)
	}
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(bundle, pemBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	// A resolv.conf that names a closed loopback port: nothing here may
	// need DNS, and if it did it would fail fast on loopback.
	if err := os.WriteFile(filepath.Join(root, "etc/resolv.conf"), []byte("nameserver 127.0.0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return &hostile{srv: srv, root: root}
}

func (h *hostile) image(repoTag string) string {
	return strings.TrimPrefix(h.srv.URL, "https://") + "/" + repoTag
}

func (h *hostile) probe(t *testing.T, image string, o Options) *Report {
	t.Helper()
	o.Root = h.root
	o.Platform = "linux/amd64"
	if o.Timeout == 0 {
		o.Timeout = 500 * time.Millisecond
	}
	o.Deadline = 20 * time.Second
	rep, err := Run(context.Background(), image, o)
	if err != nil {
		t.Fatalf("Run(%s) error: %v", image, err)
	}
	return rep
}

// imageBlobs serves a one-layer image; mutate can change any answer.
func manifestFor(layer []byte) ([]byte, digest.Digest, digest.Digest) {
	cfg := []byte(`{"architecture":"amd64","os":"linux"}`)
	m, _ := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": map[string]any{"mediaType": "application/vnd.oci.image.config.v1+json", "digest": digest.FromBytes(cfg), "size": len(cfg)},
		"layers": []any{map[string]any{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": digest.FromBytes(layer), "size": len(layer)}},
	})
	return m, digest.FromBytes(cfg), digest.FromBytes(layer)
}

func TestHostileRegistry(t *testing.T) {
	layer := []byte(strings.Repeat("layer-bytes ", 1000))
	manifest, cfgDigest, layerDigest := manifestFor(layer)
	cfg := []byte(`{"architecture":"amd64","os":"linux"}`)
	serveImage := func(w http.ResponseWriter, r *http.Request) bool {
		switch {
		case strings.Contains(r.URL.Path, "/manifests/"):
			w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
			w.Header().Set("Docker-Content-Digest", digest.FromBytes(manifest).String())
			w.Write(manifest)
		case strings.HasSuffix(r.URL.Path, cfgDigest.String()):
			w.Write(cfg)
		case strings.HasSuffix(r.URL.Path, layerDigest.String()):
			w.Write(layer)
		default:
			return false
		}
		return true
	}

	tests := []struct {
		name      string
		handler   http.HandlerFunc
		image     string
		wantCause string
	}{
		{"healthy control", func(w http.ResponseWriter, r *http.Request) {
			if !serveImage(w, r) {
				http.NotFound(w, r)
			}
		}, "app:1", ""},
		{"malformed reference", nil, "UPPER/Case:tag", "config.reference"},
		{"redirect loop", func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "/blobs/") {
				http.Redirect(w, r, r.URL.Path+"x", http.StatusTemporaryRedirect)
				return
			}
			serveImage(w, r)
		}, "app:1", "transfer.redirect"},
		{"huge manifest", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
			if r.Method == http.MethodHead {
				return
			}
			chunk := []byte(strings.Repeat(" ", 1<<20))
			for i := 0; i < 8; i++ {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}, "app:1", "manifest.invalid"},
		{"garbage manifest", func(w http.ResponseWriter, r *http.Request) {
			body := []byte("\x00\x01 this is not json")
			w.Header().Set("Docker-Content-Digest", digest.FromBytes(body).String())
			w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
			w.Write(body)
		}, "app:1", "manifest.invalid"},
		{"manifest digest mismatch", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Docker-Content-Digest", digest.FromString("other").String())
			w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
			w.Write(manifest)
		}, "app:1", "transfer.digest"},
		{"short blob", func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, layerDigest.String()) {
				w.Write(layer[:10])
				return
			}
			serveImage(w, r)
		}, "app:1", "transfer.size"},
		{"stalled blob", func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, layerDigest.String()) {
				w.Header().Set("Content-Length", fmt.Sprint(len(layer)))
				w.Write(layer[:100])
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
				return
			}
			serveImage(w, r)
		}, "app:1", "transfer.timeout"},
		{"token without token", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/token" {
				w.Write([]byte(`{"expires_in":60}`))
				return
			}
			if r.Header.Get("Authorization") == "" {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="https://%s/token",service="x"`, r.Host))
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			serveImage(w, r)
		}, "app:1", "auth.token"},
		{"challenge without realm", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `Bearer service="x"`)
			w.WriteHeader(http.StatusUnauthorized)
		}, "app:1", "registry.protocol"},
		{"unknown auth scheme", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `Negotiate`)
			w.WriteHeader(http.StatusUnauthorized)
		}, "app:1", "registry.protocol"},
		{"headers never come", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}, "app:1", "registry.unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := tt.handler
			if h == nil {
				h = func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }
			}
			srv := newHostile(t, h)
			img := tt.image
			if tt.name != "malformed reference" {
				img = srv.image(tt.image)
			}
			rep := srv.probe(t, img, Options{})
			v := rep.Verdict
			if tt.wantCause == "" {
				if !v.OK {
					t.Fatalf("probe(%s) = %+v, want ok", img, v)
				}
				return
			}
			if v.OK || v.Cause != tt.wantCause {
				t.Errorf("probe(%s) cause = %q (%s), want %q", img, v.Cause, v.Evidence, tt.wantCause)
			}
			if v.Summary == "" || len(v.Next) == 0 {
				t.Errorf("probe(%s) verdict has no summary or next steps", img)
			}
		})
	}
}
