package probe_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"

	"github.com/pullpath/pullpath/internal/probe"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/testpki"
)

// The hostile network: TLS servers on loopback addresses 127.0.0.1-9, all
// with one leaf certificate issued by a CA the node root trusts, and names
// for them in the node root's /etc/hosts (no resolver is asked). Each
// server keeps a log of every request it received, so a test can say
// exactly which host saw which credential.

// Names the node root's /etc/hosts maps to loopback addresses.
const (
	hRegistry  = "registry.hostile.test"      // 127.0.0.1
	hBlobOther = "blob.other.test"            // 127.0.0.2: another domain
	hRealm     = "auth.other.test"            // 127.0.0.3: a foreign realm
	hBlobSub   = "blob.registry.hostile.test" // 127.0.0.4: a subdomain of the registry
)

var hostileNames = map[string]string{hRegistry: "127.0.0.1", hBlobOther: "127.0.0.2", hRealm: "127.0.0.3", hBlobSub: "127.0.0.4"}

// The secrets of a hostile run. The password is the canary.
const (
	hUser     = "puller"
	hPassword = "pp-canary-Zq7v3Kx9-password"
	hRegToken = "regtoken-Ab12Cd34Ef56Gh78"
	hForeign  = "foreigntok-Ij90Kl12Mn34"
)

// secretForms are the forms a credential can leak in: as it is, base64
// (Basic), URL-encoded and JSON-escaped.
func secretForms(secrets ...string) []string {
	var out []string
	for _, s := range secrets {
		out = append(out, s, url.QueryEscape(s), strings.Trim(mustJSON(s), `"`))
	}
	out = append(out, base64.StdEncoding.EncodeToString([]byte(hUser+":"+hPassword)), base64.RawStdEncoding.EncodeToString([]byte(hUser+":"+hPassword)))
	return out
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

type hnet struct {
	leaf tls.Certificate
	ca   *x509.Certificate
	root string
}

type logged struct {
	Method, Host, URI, Body string
	Header                  http.Header
}

// hsrv is one server of the hostile network.
type hsrv struct {
	URL  string // https://name:port or http://name:port
	Host string // name:port
	mu   sync.Mutex
	log  []logged
}

func (s *hsrv) requests() []logged {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]logged(nil), s.log...)
}

// saw reports the first request of s that holds any of the secrets, in a
// header, the URI or the body.
func (s *hsrv) saw(secrets []string) (string, bool) {
	for _, r := range s.requests() {
		var hdr strings.Builder
		for k, vs := range r.Header {
			fmt.Fprintf(&hdr, "%s: %s\n", k, strings.Join(vs, ","))
		}
		all := hdr.String() + " " + r.URI + " " + r.Body
		for _, sec := range secrets {
			if strings.Contains(all, sec) {
				return fmt.Sprintf("%s %s carried %q", r.Method, r.URI, sec), true
			}
		}
	}
	return "", false
}

func newHNet(t *testing.T) *hnet {
	t.Helper()
	ca := testpki.MustCA(t, "hostile CA")
	leaf := testpki.Leaf{Names: []string{hRegistry}}
	for name := range hostileNames {
		leaf.Names = append(leaf.Names, name)
	}
	for i := 1; i <= 9; i++ {
		leaf.IPs = append(leaf.IPs, net.IPv4(127, 0, 0, byte(i)))
	}
	n := &hnet{leaf: ca.MustIssue(t, leaf), ca: ca.Cert, root: t.TempDir()}
	bundle := filepath.Join(n.root, "etc/ssl/certs/ca-certificates.crt")
	must(t, os.MkdirAll(filepath.Dir(bundle), 0o755))
	must(t, os.WriteFile(bundle, ca.PEM, 0o644))
	// A resolv.conf naming a closed loopback port: every name is in
	// /etc/hosts, and a lookup that escaped would fail fast on loopback.
	must(t, os.WriteFile(filepath.Join(n.root, "etc/resolv.conf"), []byte("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n"), 0o644))
	var hosts strings.Builder
	for name, ip := range hostileNames {
		fmt.Fprintf(&hosts, "%s %s\n", ip, name)
	}
	must(t, os.WriteFile(filepath.Join(n.root, "etc/hosts"), []byte(hosts.String()), 0o644))
	return n
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// serve starts a TLS server for name (one of hostileNames) on its loopback
// address and a free port.
func (n *hnet) serve(t *testing.T, name string, h http.Handler) *hsrv {
	return n.start(t, name, h, true)
}

// servePlain starts a plain-http server for name.
func (n *hnet) servePlain(t *testing.T, name string, h http.Handler) *hsrv {
	return n.start(t, name, h, false)
}

func (n *hnet) start(t *testing.T, name string, h http.Handler, tlsOn bool) *hsrv {
	t.Helper()
	ln, err := net.Listen("tcp", hostileNames[name]+":0")
	if err != nil {
		t.Skipf("skipped: cannot listen on %s (loopback 127.0.0.0/8 must be routed to lo): %v; hack/test.sh runs this in the unit tier", hostileNames[name], err)
	}
	s := &hsrv{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		r.Body = io.NopCloser(bytes.NewReader(body))
		s.mu.Lock()
		s.log = append(s.log, logged{Method: r.Method, Host: r.Host, URI: r.RequestURI, Body: string(body), Header: r.Header.Clone()})
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Config.ErrorLog = quietLog()
	scheme := "http"
	if tlsOn {
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{n.leaf}}
		srv.StartTLS()
		scheme = "https"
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	s.Host = net.JoinHostPort(name, port)
	s.URL = scheme + "://" + s.Host
	return s
}

// probeRun probes image from the hostile node root and returns the report
// and its text and JSON renderings.
func (n *hnet) probeRun(t *testing.T, image string, o probe.Options) (*probe.Report, string) {
	t.Helper()
	if o.Root == "" {
		o.Root = n.root
	}
	o.Platform = "linux/amd64"
	if o.Timeout == 0 {
		o.Timeout = time.Second
	}
	if o.Deadline == 0 {
		o.Deadline = 60 * time.Second
	}
	rep, err := probe.Run(context.Background(), image, o)
	if err != nil {
		t.Fatalf("probe.Run(%s): %v", image, err)
	}
	var out bytes.Buffer
	must(t, report.JSON(&out, rep))
	must(t, report.ProbeText(&out, rep, report.Style{}))
	return rep, out.String()
}

// image is a small OCI image: a config and some layers.
type image struct {
	manifest []byte
	blobs    map[digest.Digest][]byte
}

func newImage(layers ...[]byte) *image {
	cfg := []byte(`{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}`)
	img := &image{blobs: map[digest.Digest][]byte{digest.FromBytes(cfg): cfg}}
	ls := make([]any, 0, len(layers))
	for _, l := range layers {
		d := digest.FromBytes(l)
		img.blobs[d] = l
		ls = append(ls, map[string]any{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": d, "size": len(l)})
	}
	img.manifest, _ = json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": map[string]any{"mediaType": "application/vnd.oci.image.config.v1+json", "digest": digest.FromBytes(cfg), "size": len(cfg)},
		"layers": ls,
	})
	return img
}

// fakeRegistry is the registry API host of a hostile case.
type fakeRegistry struct {
	img *image
	// auth: "" (anonymous), "token" (Bearer at realm) or "basic".
	auth  string
	realm string // token realm; default this host's /token
	// blob decides what a blob request gets: "" serves it, a URL
	// redirects there.
	blob func(d digest.Digest, r *http.Request) string
	// manifest, when set, answers manifest requests instead.
	manifest http.HandlerFunc
}

func (f *fakeRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/token" {
		serveToken(w, r, true, hRegToken)
		return
	}
	if !f.authorized(w, r) {
		return
	}
	switch {
	case strings.Contains(r.URL.Path, "/manifests/"):
		if f.manifest != nil {
			f.manifest(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
		w.Header().Set("Docker-Content-Digest", digest.FromBytes(f.img.manifest).String())
		w.Header().Set("Content-Length", fmt.Sprint(len(f.img.manifest)))
		if r.Method != http.MethodHead {
			w.Write(f.img.manifest)
		}
	case strings.Contains(r.URL.Path, "/blobs/"):
		d := digest.Digest(r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:])
		if f.blob != nil {
			if to := f.blob(d, r); to != "" {
				http.Redirect(w, r, to, http.StatusTemporaryRedirect)
				return
			}
		}
		serveBlob(w, r, f.img, d)
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeRegistry) authorized(w http.ResponseWriter, r *http.Request) bool {
	got := r.Header.Get("Authorization")
	switch f.auth {
	case "token":
		if got == "Bearer "+hRegToken {
			return true
		}
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm=%q,service="hostile-registry",scope="repository:app:pull"`, f.realm))
	case "basic":
		if got == "Basic "+base64.StdEncoding.EncodeToString([]byte(hUser+":"+hPassword)) {
			return true
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="hostile"`)
	default:
		return true
	}
	w.WriteHeader(http.StatusUnauthorized)
	return false
}

// serveToken is a token service: with needCreds it issues tok only for the
// right password (POST form or GET with Basic); otherwise to anyone.
func serveToken(w http.ResponseWriter, r *http.Request, needCreds bool, tok string) {
	if needCreds {
		ok := false
		if r.Method == http.MethodPost {
			_ = r.ParseForm()
			ok = r.PostForm.Get("password") == hPassword
		} else if u, p, has := r.BasicAuth(); has {
			ok = u == hUser && p == hPassword
		}
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"token":%q,"expires_in":300}`, tok)
}

func serveBlob(w http.ResponseWriter, r *http.Request, img *image, d digest.Digest) {
	b, ok := img.blobs[d]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	if r.Method != http.MethodHead {
		w.Write(b)
	}
}

// blobHost serves blobs by digest (the last path element), optionally only
// to a Bearer token of its own realm.
type blobHost struct {
	img   *image
	token string // required Bearer token; "" serves anyone
	realm string
}

func (b *blobHost) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if b.token != "" && r.Header.Get("Authorization") != "Bearer "+b.token {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm=%q,service="blob-store"`, b.realm))
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	serveBlob(w, r, b.img, digest.Digest(r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]))
}

func quietLog() *log.Logger { return log.New(io.Discard, "", 0) }

// rawTLS starts a listener for name that hands every accepted connection
// (after a TLS handshake with the hostile certificate when tlsOn) to h.
func (n *hnet) raw(t *testing.T, name string, tlsOn bool, h func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", hostileNames[name]+":0")
	if err != nil {
		t.Skipf("skipped: cannot listen on %s: %v", hostileNames[name], err)
	}
	if tlsOn {
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{n.leaf}})
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() { close(done); ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				go func() { <-done; c.Close() }()
				h(c)
			}()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return net.JoinHostPort(name, port)
}

func pemCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
