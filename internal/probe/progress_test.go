package probe

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
)

// TestProbeStopsTrickles runs a trickling server through the whole probe
// (its dialer's idle timeout included, which a byte every 200 ms resets):
// a manifest, a token and a layer sent at one byte per 200 ms end as
// transfer.stall within seconds, not at the run's deadline.
func TestProbeStopsTrickles(t *testing.T) {
	layer := []byte(strings.Repeat("layer-bytes ", 1000))
	manifest, cfgDigest, layerDigest := manifestFor(layer)
	cfg := []byte(`{"architecture":"amd64","os":"linux"}`)
	drip := func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		for _, b := range body {
			if _, err := w.Write([]byte{b}); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	serve := func(trickle string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.URL.Path == "/token":
				body := []byte(`{"token":"` + strings.Repeat("t", 2048) + `"}`)
				if trickle == "token" {
					drip(w, r, body)
					return
				}
				w.Write(body)
			case trickle == "token" && r.Header.Get("Authorization") == "":
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="https://%s/token",service="x"`, r.Host))
				w.WriteHeader(http.StatusUnauthorized)
			case strings.Contains(r.URL.Path, "/manifests/"):
				w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
				w.Header().Set("Docker-Content-Digest", digest.FromBytes(manifest).String())
				if r.Method == http.MethodGet && trickle == "manifest" {
					drip(w, r, manifest)
					return
				}
				w.Write(manifest)
			case strings.HasSuffix(r.URL.Path, cfgDigest.String()):
				w.Write(cfg)
			case strings.HasSuffix(r.URL.Path, layerDigest.String()):
				if trickle == "blob" {
					drip(w, r, layer)
					return
				}
				w.Write(layer)
			default:
				http.NotFound(w, r)
			}
		}
	}
	for _, name := range []string{"manifest", "token", "blob"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHostile(t, serve(name))
			start := time.Now()
			rep := h.probe(t, h.image("app:1"), Options{})
			took := time.Since(start)
			v := rep.Verdict
			t.Logf("%s trickle: %s %s after %v: %s", name, v.Cause, v.Role, took.Round(time.Millisecond), v.Summary)
			if v.Cause != "transfer.stall" || v.Role != "registry" {
				t.Errorf("probe with a trickled %s = %s (%s), want transfer.stall (registry)", name, v.Cause, v.Role)
			}
			// Timeout 500 ms: a 1 s window. 15 s is generous and below the
			// 20 s deadline the helper sets, so the rule, not the deadline,
			// must have stopped it.
			if took > 15*time.Second {
				t.Errorf("probe with a trickled %s took %v, want well under 15s", name, took)
			}
		})
	}
}
