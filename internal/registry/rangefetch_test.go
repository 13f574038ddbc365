package registry

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"

	"github.com/pullpath/pullpath/internal/verdict"
)

// TestBlobRanged: with RangeChunk set, a blob is fetched with the request
// shape of containerd 2.1+'s parallel layer fetch, and what the blob host
// does with Range decides the outcome as it does for containerd.
func TestBlobRanged(t *testing.T) {
	const size = 3000
	data := make([]byte, size)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	d := Descriptor{Digest: digest.NewDigestFromBytes(digest.SHA256, sum[:]), Size: size}
	tests := []struct {
		name       string
		serve      func(w http.ResponseWriter, r *http.Request)
		wantRanges []string
		ignored    bool
		cause      string // "" : verified
	}{
		{"host honours Range", func(w http.ResponseWriter, r *http.Request) {
			http.ServeContent(w, r, "blob", time.Time{}, bytes.NewReader(data))
		}, []string{"bytes=0-", "bytes=1024-", "bytes=2048-"}, false, ""},
		{"host ignores Range: one request, as containerd falls back", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(size))
			_, _ = w.Write(data)
		}, []string{"bytes=0-"}, true, ""},
		{"host refuses Range", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "range not satisfiable", http.StatusRequestedRangeNotSatisfiable)
		}, []string{"bytes=0-"}, false, "registry.protocol"},
		// containerd reads each later chunk for a whole chunk from the
		// start of the full body: the stream is too long and wrong, and its
		// commit fails on the size.
		{"host honours the first range only: wrong bytes, as containerd gets them", func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Range") == "bytes=0-" {
				http.ServeContent(w, r, "blob", time.Time{}, bytes.NewReader(data))
				return
			}
			w.Header().Set("Content-Length", strconv.Itoa(size))
			_, _ = w.Write(data)
		}, []string{"bytes=0-", "bytes=1024-", "bytes=2048-"}, false, verdict.CodeTransferSize},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var ranges []string
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				ranges = append(ranges, r.Header.Get("Range"))
				mu.Unlock()
				tt.serve(w, r)
			}))
			defer srv.Close()
			s := &Session{Client: srv.Client(), Host: Host{Host: srv.Listener.Addr().String(), Scheme: "https", Path: "/v2", Role: verdict.RoleRegistry}, Repo: "team/app", Creds: &Credentials{}, Timeout: time.Second, RangeChunk: 1024}
			res, err := s.Blob(context.Background(), d, false, nil)
			if !slices.Equal(ranges, tt.wantRanges) {
				t.Errorf("Range headers %q, want %q", ranges, tt.wantRanges)
			}
			if tt.cause == "" {
				if err != nil || !res.Verified || res.Bytes != size || res.RangeIgnored != tt.ignored || res.Ranges != len(tt.wantRanges) {
					t.Fatalf("Blob = %+v, %v; want verified, %d bytes, %d range requests, ignored %v", res, err, size, len(tt.wantRanges), tt.ignored)
				}
				return
			}
			ve, ok := verdict.AsError(err)
			if !ok {
				t.Fatalf("Blob error %v, want %s", err, tt.cause)
			}
			if ve.Cause != tt.cause && !(tt.cause == "registry.protocol" && ve.Layer == "registry") {
				t.Errorf("Blob verdict %s/%s, want %s", ve.Layer, ve.Cause, tt.cause)
			}
		})
	}
	// Without RangeChunk: one plain GET, no Range header.
	var got []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Range"))
		http.ServeContent(w, r, "blob", time.Time{}, bytes.NewReader(data))
	}))
	defer srv.Close()
	s := &Session{Client: srv.Client(), Host: Host{Host: srv.Listener.Addr().String(), Scheme: "https", Path: "/v2"}, Repo: "team/app", Creds: &Credentials{}, Timeout: time.Second}
	if res, err := s.Blob(context.Background(), d, false, nil); err != nil || !res.Verified || !slices.Equal(got, []string{""}) {
		t.Errorf("plain Blob = %+v, %v, Range headers %q; want one request without Range", res, err, got)
	}
}
