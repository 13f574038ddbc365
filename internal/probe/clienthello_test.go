package probe

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestClientHelloAsNodeRuntime checks, on a real handshake, that the probe
// offers the key-exchange groups of the node's containerd build, not its
// own Go's: the server records the groups of every ClientHello it gets.
func TestClientHelloAsNodeRuntime(t *testing.T) {
	classic := []tls.CurveID{tls.X25519, tls.CurveP256, tls.CurveP384, tls.CurveP521}
	cases := []struct {
		name    string
		unit    string // containerd.service; "" = no containerd on the node
		want    func([]tls.CurveID) bool
		hasNote string
	}{
		{"no containerd: this binary's defaults", "", func(c []tls.CurveID) bool { return slices.Contains(c, tls.X25519MLKEM768) }, ""},
		{"containerd whose service turns ML-KEM off", "[Service]\nEnvironment=GODEBUG=tlsmlkem=0\nExecStart=/opt/bin/containerd --config /etc/containerd/config.toml\n",
			func(c []tls.CurveID) bool { return slices.Equal(c, classic) }, "no post-quantum key share"},
		{"containerd of this Go release", "[Service]\nExecStart=/opt/bin/containerd\n",
			func(c []tls.CurveID) bool { return slices.Contains(c, tls.X25519MLKEM768) }, "the Go TLS defaults of this probe"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var offered [][]tls.CurveID
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "no such image", http.StatusNotFound)
			}))
			srv.TLS = &tls.Config{GetConfigForClient: func(hi *tls.ClientHelloInfo) (*tls.Config, error) {
				mu.Lock()
				offered = append(offered, slices.Clone(hi.SupportedCurves))
				mu.Unlock()
				return nil, nil
			}}
			srv.StartTLS()
			h := hostileAt(t, srv)
			if tc.unit != "" {
				writeFile(t, filepath.Join(h.root, "etc/systemd/system/containerd.service"), []byte(tc.unit))
				copyExecutable(t, filepath.Join(h.root, "opt/bin/containerd"))
			}
			rep := h.probe(t, h.image("team/app:1"), Options{})
			mu.Lock()
			defer mu.Unlock()
			if len(offered) == 0 {
				t.Fatalf("the server saw no ClientHello; verdict %s", rep.Verdict.Cause)
			}
			for _, c := range offered {
				if !tc.want(c) {
					t.Errorf("ClientHello offered %v", c)
				}
			}
			note := ""
			for _, ep := range rep.Endpoints {
				for _, st := range ep.Steps {
					if st.Name == "tls" && st.Facts != nil {
						if s, ok := st.Facts["client_hello"].(string); ok {
							note = s
						}
					}
				}
			}
			if (tc.hasNote == "") != (note == "") || !strings.Contains(note, tc.hasNote) {
				t.Errorf("tls step client_hello = %q, want one containing %q", note, tc.hasNote)
			}
		})
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyExecutable puts a copy of the running test binary (a Go binary of
// this release, with build information) at path.
func copyExecutable(t *testing.T, path string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
