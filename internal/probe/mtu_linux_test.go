//go:build linux

package probe

import (
	"context"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"

	"github.com/pullpath/pullpath/internal/netpath"
)

// blackHoleListener stands in for a path-MTU black hole on loopback, where
// none can be built without network namespaces (the netlab tier builds the
// real one): a server connection whose peer advertised a large MSS loses
// every write larger than size (the write blocks until the connection is
// closed, as lost segments would), and one whose peer advertised
// netpath.SmallMSS or less passes everything. With always set, every large
// write is lost whatever the MSS: a plain black hole for large answers that
// is not MTU.
type blackHoleListener struct {
	net.Listener
	size   int
	always bool
}

func (l *blackHoleListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	mss := 0
	if rc, err := c.(*net.TCPConn).SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) { mss, _ = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG) })
	}
	lossy := l.always || mss > netpath.SmallMSS
	return &blackHoleConn{Conn: c, size: l.size, lossy: lossy, closed: make(chan struct{})}, nil
}

type blackHoleConn struct {
	net.Conn
	size   int
	lossy  bool
	closed chan struct{}
}

func (c *blackHoleConn) Write(p []byte) (int, error) {
	if c.lossy && len(p) > c.size {
		// Lost: nothing arrives. The handler gives up after a while so
		// that the server can close (httptest waits for active handlers).
		select {
		case <-c.closed:
		case <-time.After(3 * time.Second):
			c.Conn.Close()
		}
		return 0, net.ErrClosed
	}
	return c.Conn.Write(p)
}

func (c *blackHoleConn) Close() error {
	select {
	case <-c.closed:
	default:
		close(c.closed)
	}
	return c.Conn.Close()
}

// blackHoleServer starts a TLS server for h behind a blackHoleListener.
func blackHoleServer(t *testing.T, h http.Handler, size int, always bool) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = &blackHoleListener{Listener: srv.Listener, size: size, always: always}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// trustRoot writes a node root that trusts srv's certificate (httptest
// uses one certificate for every server) and needs no DNS.
func trustRoot(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	root := t.TempDir()
	files := map[string][]byte{
		"etc/ssl/certs/ca-certificates.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}),
		"etc/resolv.conf":                   []byte("nameserver 127.0.0.1\n"),
	}
	for rel, b := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestPathMTU checks the probe's path-MTU test end to end on loopback: a
// handshake or a blob that only a small MSS gets through is route.mtu with
// the role where it happened and an "mtu" step in the trace; a black hole
// that a small MSS does not help keeps tls.timeout and says so.
func TestPathMTU(t *testing.T) {
	layer := []byte(strings.Repeat("layer-bytes ", 8000)) // 96 KB: TLS records of 16 KiB
	manifest, cfgDigest, layerDigest := manifestFor(layer)
	// Padded past one 16 KiB TLS record, so a black hole for large writes
	// catches the manifest too (trailing spaces keep it valid JSON).
	manifest = append(manifest, strings.Repeat(" ", 40<<10)...)
	manifestDigest := digest.FromBytes(manifest)
	serve := func(blobHost string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			switch {
			case strings.Contains(r.URL.Path, "/manifests/"):
				w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
				w.Header().Set("Docker-Content-Digest", manifestDigest.String())
				w.Header().Set("Content-Length", strconv.Itoa(len(manifest)))
				if r.Method == http.MethodGet {
					w.Write(manifest)
				}
			case strings.HasSuffix(r.URL.Path, cfgDigest.String()):
				w.Write([]byte(`{"architecture":"amd64","os":"linux"}`))
			case strings.HasSuffix(r.URL.Path, layerDigest.String()) && blobHost != "" && r.Host != blobHost:
				http.Redirect(w, r, "https://"+blobHost+r.URL.Path, http.StatusTemporaryRedirect)
			case strings.HasSuffix(r.URL.Path, layerDigest.String()):
				w.Write(layer)
			default:
				http.NotFound(w, r)
			}
		}
	}
	tests := []struct {
		name      string
		size      int  // writes above this are lost
		always    bool // lost whatever the MSS
		blob      bool // only the blob host is behind the black hole
		wantCause string
		wantRole  string
		wantNote  string // in the summary
	}{
		{"handshake", 1200, false, false, "route.mtu", "registry", "completed when redialled with TCP_MAXSEG 536"},
		{"blob", 8192, false, true, "route.mtu", "blob", "a blob download stalled"},
		{"manifest", 8192, false, false, "route.mtu", "registry", "a manifest download stalled"},
		{"not mtu", 1200, true, false, "tls.timeout", "registry", "a small MSS did not help"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var reg, blob *httptest.Server
			if tt.blob {
				blob = blackHoleServer(t, serve(""), tt.size, tt.always)
				reg = httptest.NewTLSServer(serve(strings.TrimPrefix(blob.URL, "https://")))
				t.Cleanup(reg.Close)
			} else {
				reg = blackHoleServer(t, serve(""), tt.size, tt.always)
			}
			img := strings.TrimPrefix(reg.URL, "https://") + "/app:1"
			start := time.Now()
			rep, err := Run(context.Background(), img, Options{Root: trustRoot(t, reg), Platform: "linux/amd64", Timeout: 500 * time.Millisecond, Deadline: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			v := rep.Verdict
			t.Logf("after %v: %s %s %s: %s", time.Since(start).Round(time.Millisecond), v.Cause, v.Role, v.Owner, v.Summary)
			if v.Cause != tt.wantCause || string(v.Role) != tt.wantRole {
				t.Errorf("probe(%s) = %s (%s), want %s (%s); evidence %s", img, v.Cause, v.Role, tt.wantCause, tt.wantRole, v.Evidence)
			}
			if !strings.Contains(v.Summary, tt.wantNote) {
				t.Errorf("probe(%s) summary = %q, want it to say %q", img, v.Summary, tt.wantNote)
			}
			if tt.wantCause == "route.mtu" && (v.Owner != "network" || v.Layer != "route") {
				t.Errorf("probe(%s) layer/owner = %s/%s, want route/network", img, v.Layer, v.Owner)
			}
			// The extra dial is in the trace, after the failure it tests.
			// (The blob's fresh GET starts at the registry, so both
			// endpoints may show one; the role's endpoint must.)
			var mtuSteps int
			for _, ep := range rep.Endpoints {
				for _, st := range ep.Steps {
					if st.Name == "mtu" && string(ep.Role) == tt.wantRole {
						mtuSteps++
					}
				}
			}
			if mtuSteps == 0 {
				t.Errorf("probe(%s) trace has no mtu step on the %s endpoint: the extra dial must show", img, tt.wantRole)
			}
		})
	}
}
