package registry

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/opencontainers/go-digest"
)

// BenchmarkBlob is Session.Blob's hot path alone: one 32 MiB blob over TLS
// from an httptest server, streamed through SHA-256 and the size check. No
// auth, no redirect: what is left is TLS decryption, hashing and the copy.
func BenchmarkBlob(b *testing.B) {
	const size = 32 << 20
	data := make([]byte, size)
	if _, err := rand.Read(data); err != nil {
		b.Fatal(err)
	}
	sum := sha256.Sum256(data)
	d := Descriptor{Digest: digest.NewDigestFromBytes(digest.SHA256, sum[:]), Size: size}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		_, _ = w.Write(data)
	}))
	defer srv.Close()
	host := srv.Listener.Addr().String()
	s := &Session{Client: srv.Client(), Host: Host{Host: host, Scheme: "https", Path: "/v2"}, Repo: "team/app", Creds: &Credentials{}}
	b.SetBytes(size)
	for b.Loop() {
		res, err := s.Blob(context.Background(), d, false, nil)
		if err != nil {
			b.Fatal(err)
		}
		if !res.Verified {
			b.Fatal(fmt.Errorf("blob not verified"))
		}
	}
}
