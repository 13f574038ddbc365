package registry

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"

	"github.com/pullpath/pullpath/internal/verdict"
)

// trickle writes body one byte per interval, flushing each, until the
// client goes away.
func trickle(w http.ResponseWriter, r *http.Request, body string, interval time.Duration) {
	drip(w, r, body, 1, interval)
}

// drip writes body chunk bytes per interval.
func drip(w http.ResponseWriter, r *http.Request, body string, chunk int, interval time.Duration) {
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusOK)
	for i := 0; i < len(body); i += chunk {
		if _, err := w.Write([]byte(body[i:min(i+chunk, len(body))])); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			return
		case <-time.After(interval):
		}
	}
}

// TestTrickleStops checks the minimum-progress rule (a download must keep
// moving, not merely stay open) against a real TLS server on loopback that
// trickles one byte every 200 ms (five times faster than any idle timer of
// the session, so only the rule can stop it): the manifest, the token and
// the blob each end as transfer.stall for the host that trickled, within a
// generous bound, far from the whole-run deadline.
func TestTrickleStops(t *testing.T) {
	manifest := `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","layers":[]}` + strings.Repeat(" ", 4096)
	blob := strings.Repeat("b", 64<<10)
	var srv *httptest.Server
	mux := http.NewServeMux()
	mux.HandleFunc("/v2/team/manifest/manifests/", func(w http.ResponseWriter, r *http.Request) {
		trickle(w, r, manifest, 200*time.Millisecond)
	})
	// 2 KiB per second passes the minimum progress (1 KiB per 2 s
	// window), but 64 KiB would take 32 s: over the 6 s cap of a manifest.
	slow := strings.Repeat(" ", 64<<10)
	mux.HandleFunc("/v2/team/slow/manifests/", func(w http.ResponseWriter, r *http.Request) {
		drip(w, r, slow, 512, 250*time.Millisecond)
	})
	mux.HandleFunc("/v2/team/token/manifests/", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="%s/token",service="lab"`, srv.URL))
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Docker-Content-Digest", digest.FromString(manifest).String())
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		trickle(w, r, `{"token":"`+strings.Repeat("t", 4096)+`"}`, 200*time.Millisecond)
	})
	mux.HandleFunc("/v2/team/blob/blobs/", func(w http.ResponseWriter, r *http.Request) {
		trickle(w, r, blob, 200*time.Millisecond)
	})
	srv = httptest.NewTLSServer(mux)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)

	tests := []struct {
		name string
		repo string
		run  func(ctx context.Context, s *Session) error
	}{
		{"manifest", "team/manifest", func(ctx context.Context, s *Session) error {
			_, _, err := s.Manifest(ctx, Descriptor{Digest: digest.FromString(manifest)})
			return err
		}},
		{"manifest over its cap", "team/slow", func(ctx context.Context, s *Session) error {
			_, _, err := s.Manifest(ctx, Descriptor{Digest: digest.FromString(slow)})
			return err
		}},
		{"token", "team/token", func(ctx context.Context, s *Session) error {
			_, err := s.Resolve(ctx, "1")
			return err
		}},
		{"blob", "team/blob", func(ctx context.Context, s *Session) error {
			_, err := s.Blob(ctx, Descriptor{Digest: digest.FromString(blob), Size: int64(len(blob))}, false, nil)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			s := &Session{Client: srv.Client(), Host: Host{Host: u.Host, Scheme: "https", Path: "/v2", Role: verdict.RoleRegistry}, Repo: tt.repo, Timeout: time.Second}
			start := time.Now()
			err := tt.run(ctx, s)
			took := time.Since(start)
			ve, ok := verdict.AsError(err)
			if !ok {
				t.Fatalf("%s = %v, want a transfer.stall *verdict.Error", tt.name, err)
			}
			t.Logf("%s after %v: %v", tt.name, took.Round(time.Millisecond), ve)
			if ve.Cause != "transfer.stall" || ve.Role != verdict.RoleRegistry || ve.Endpoint != u.Host {
				t.Errorf("%s = %s %s %s, want transfer.stall registry %s", tt.name, ve.Cause, ve.Role, ve.Endpoint, u.Host)
			}
			// The window is 2 s (twice the 1 s step timeout); 20 s is
			// generous and still a thirtieth of the 10-minute deadline.
			if took > 20*time.Second {
				t.Errorf("%s took %v to stop, want well under 20s", tt.name, took)
			}
		})
	}
}

// TestProgressRuleLetsSlowBodiesThrough checks the rule does not stop a
// body that is slow but above the minimum: 4 KiB/s for 3 windows.
func TestProgressRuleLetsSlowBodiesThrough(t *testing.T) {
	blob := strings.Repeat("s", 24<<10)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(len(blob)))
		for i := 0; i < len(blob); i += 1024 {
			w.Write([]byte(blob[i : i+1024]))
			w.(http.Flusher).Flush()
			time.Sleep(250 * time.Millisecond)
		}
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	s := &Session{Client: srv.Client(), Host: Host{Host: u.Host, Scheme: "https", Path: "/v2", Role: verdict.RoleRegistry}, Repo: "team/app", Timeout: time.Second}
	d := Descriptor{Digest: digest.NewDigestFromBytes(digest.SHA256, sha256Of(blob)), Size: int64(len(blob))}
	res, err := s.Blob(context.Background(), d, false, nil)
	if err != nil || !res.Verified {
		t.Fatalf("Blob at 4 KiB/s = %+v, %v; want verified", res, err)
	}
}

func sha256Of(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}
