package probe_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"

	"github.com/pullpath/pullpath/internal/probe"
	"github.com/pullpath/pullpath/internal/registry"
)

// hostileCase is one hostile server setup with its expected verdict.
type hostileCase struct {
	name      string
	wantCause string // "" means the pull path works
	wantWarn  string // a warning code the report must carry
	// setup starts the servers and returns the image, the probe options
	// and the leak rules: each server with the secrets it must never see.
	setup func(t *testing.T, n *hnet) (string, probe.Options, []leakRule)
	// check makes case-specific assertions on the report.
	check func(t *testing.T, rep *probe.Report)
	// maxRSS bounds the peak resident memory of the run, in MiB (0: not
	// asserted). The servers run in the same process and count too.
	maxRSS int
	// extra are secrets of the case (signatures, key ids) that no output
	// may show.
	extra []string
}

type leakRule struct {
	srv     *hsrv
	secrets []string
}

var creds = func() *registry.Credentials {
	return &registry.Credentials{Username: hUser, Password: hPassword, Source: "--password-stdin"}
}

func onlyImage(reg *hsrv) string { return reg.Host + "/app:1" }

func redirectTo(base string) func(d digest.Digest, r *http.Request) string {
	return func(d digest.Digest, r *http.Request) string {
		return base + "/data/" + d.String() + "?X-Amz-Signature=sigSECRET0123456789&sig=sasSECRET0123456789"
	}
}

var password = secretForms(hPassword)

// hostileHangGuard is how long a hostile case may take before the test calls
// it a hang.
const hostileHangGuard = 120 * time.Second

// TestHostileSuite runs every hostile case in turn (not in parallel, so
// that each case's peak RSS is its own) and logs one line per case with its
// verdict, time and peak RSS: the table of the closing note.
func TestHostileSuite(t *testing.T) {
	cases := hostileCases()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := newHNet(t)
			image, opts, rules := tc.setup(t, n)
			resetPeakRSS()
			start := time.Now()
			rep, out := n.probeRun(t, image, opts)
			elapsed := time.Since(start)
			peak := peakRSS()
			v := rep.Verdict
			cause := v.Cause
			if v.OK {
				cause = "ok"
			}
			if os.Getenv("PULLPATH_SHOW_HOSTILE") != "" {
				t.Logf("report:\n%s", out[strings.LastIndex(out, "\n}\n")+3:])
			}
			t.Logf("hostile case %q: verdict %s (layer %s, owner %s) in %s, peak RSS %s", tc.name, cause, v.Layer, v.Owner, elapsed.Round(time.Millisecond), peak)
			switch {
			case tc.wantCause == "" && !v.OK:
				t.Errorf("verdict = %s (%s; %s), want ok", v.Cause, v.Summary, v.Evidence)
			case tc.wantCause != "" && v.Cause != tc.wantCause:
				t.Errorf("verdict = %s (%s; %s), want %s", cause, v.Summary, v.Evidence, tc.wantCause)
			}
			if tc.wantCause != "" && (v.Summary == "" || len(v.Next) == 0) {
				t.Errorf("verdict %s has no summary or next steps", v.Cause)
			}
			if tc.wantWarn != "" && !hasWarning(rep, tc.wantWarn) {
				t.Errorf("warnings %+v lack %s", rep.Warnings, tc.wantWarn)
			}
			// A hang guard, not a speed target (speed is the benchmarks'
			// job): the 25,000-layer case takes 12-18 s alone and 41 s on
			// two cores shared with the namespace and node tiers.
			if elapsed > hostileHangGuard {
				t.Errorf("the case took %s, want well under the hang guard (%s)", elapsed, hostileHangGuard)
			}
			if tc.maxRSS > 0 && peak.mib() > tc.maxRSS {
				t.Errorf("peak RSS %s, want at most %d MiB (a hostile body must not be read whole)", peak, tc.maxRSS)
			}
			for _, r := range rules {
				if what, ok := r.srv.saw(r.secrets); ok {
					t.Errorf("credential leak: %s got %s", r.srv.Host, what)
				}
			}
			for _, sec := range append(secretForms(hPassword, hRegToken, hForeign), tc.extra...) {
				if strings.Contains(out, sec) {
					t.Errorf("the report shows the secret %q:\n%s", sec, excerpt(out, sec))
				}
			}
			if tc.check != nil {
				tc.check(t, rep)
			}
		})
	}
}

func excerpt(out, sec string) string {
	i := strings.Index(out, sec)
	lo, hi := max(0, i-200), min(len(out), i+len(sec)+200)
	return out[lo:hi]
}

func hasWarning(rep *probe.Report, code string) bool {
	for _, w := range rep.Warnings {
		if w.Code == code {
			return true
		}
	}
	return false
}

func hasStep(rep *probe.Report, host, name string, st probe.Status) bool {
	for _, ep := range rep.Endpoints {
		if ep.Host != host {
			continue
		}
		for _, s := range ep.Steps {
			if s.Name == name && s.Status == st {
				return true
			}
		}
	}
	return false
}

// streamManifest answers HEAD with the real digest and GET with a body of
// size bytes (-1: endless) that starts like a manifest.
func streamManifest(img *image, size int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
		w.Header().Set("Docker-Content-Digest", digest.FromBytes(img.manifest).String())
		if size >= 0 {
			w.Header().Set("Content-Length", fmt.Sprint(size))
		}
		if r.Method == http.MethodHead {
			return
		}
		chunk := bytes.Repeat([]byte(" "), 256<<10)
		w.Write([]byte(`{"schemaVersion":2,"layers":[`))
		for sent := int64(0); size < 0 || sent < size-int64(len(chunk)); sent += int64(len(chunk)) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}
}

var bombOnce struct {
	sync.Once
	b []byte
}

// gzipBomb is 1 GiB of zeros, gzip-compressed (about 1 MiB).
func gzipBomb(t *testing.T) []byte {
	bombOnce.Do(func() {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
		zero := make([]byte, 1<<20)
		for i := 0; i < 1024; i++ {
			zw.Write(zero)
		}
		zw.Close()
		bombOnce.b = buf.Bytes()
	})
	return bombOnce.b
}

// longChain issues a leaf through n-1 intermediates under a new root and
// returns the leaf with its whole chain, and the root's PEM.
func longChain(t *testing.T, n int) (tls.Certificate, []byte) {
	t.Helper()
	now := time.Now()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(100), Subject: pkix.Name{CommonName: "chain root"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	rootPEM := pemCert(der)
	parent, parentKey := mustParse(t, der), key
	var inter [][]byte
	for i := 1; i < n; i++ {
		k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		ct := &x509.Certificate{SerialNumber: big.NewInt(int64(100 + i)), Subject: pkix.Name{CommonName: fmt.Sprintf("intermediate %d", i)}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
		d, err := x509.CreateCertificate(rand.Reader, ct, parent, &k.PublicKey, parentKey)
		if err != nil {
			t.Fatal(err)
		}
		inter = append([][]byte{d}, inter...)
		parent, parentKey = mustParse(t, d), k
	}
	lk, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	lt := &x509.Certificate{SerialNumber: big.NewInt(99), Subject: pkix.Name{CommonName: hRegistry}, DNSNames: []string{hRegistry}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	ld, err := x509.CreateCertificate(rand.Reader, lt, parent, &lk.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: append([][]byte{ld}, inter...), PrivateKey: lk}, rootPEM
}

func mustParse(t *testing.T, der []byte) *x509.Certificate {
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type rss int64 // KiB

func (r rss) mib() int { return int(r / 1024) }
func (r rss) String() string {
	if r < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%d MiB", r.mib())
}

// resetPeakRSS resets the kernel's high-water mark of this process's
// resident memory (clear_refs 5), so peakRSS measures one case.
func resetPeakRSS() {
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

func peakRSS() rss {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return rss(n)
		}
	}
	return -1
}

const mirrorPassword = "mirror-pw-Qr56St78Uv90"

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// basicOnly is a mirror that wants Basic credentials of its own.
type basicOnly struct {
	fakeRegistry
	user, pass string
}

func (b *basicOnly) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if u, p, ok := r.BasicAuth(); !ok || u != b.user || p != b.pass {
		w.Header().Set("WWW-Authenticate", `Basic realm="mirror"`)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	b.fakeRegistry.ServeHTTP(w, r)
}

// writeMirrorTOML puts mirror before reg in the node's hosts.toml for reg.
func writeMirrorTOML(t *testing.T, n *hnet, reg, mirror *hsrv) {
	dir := filepath.Join(n.root, "etc/containerd/certs.d", reg.Host)
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "hosts.toml"), []byte(fmt.Sprintf("server = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n", reg.URL, mirror.URL)), 0o644))
}

// hostileCases are the cases of TestHostileSuite (and of TestHostileServe).
func hostileCases() []hostileCase {
	layer := bytes.Repeat([]byte("hostile-layer "), 4096)
	return []hostileCase{
		{name: "foreign realm, anonymous registry", wantWarn: "auth.foreign-realm",
			setup: func(t *testing.T, n *hnet) (string, probe.Options, []leakRule) {
				img := newImage(layer)
				realm := n.serve(t, hRealm, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serveToken(w, r, false, hForeign) }))
				blob := n.serve(t, hBlobOther, &blobHost{img: img, token: hForeign, realm: realm.URL + "/token"})
				reg := n.serve(t, hRegistry, &fakeRegistry{img: img, blob: redirectTo(blob.URL)})
				return onlyImage(reg), probe.Options{Creds: creds()}, []leakRule{{realm, password}, {blob, password}, {reg, []string{hForeign}}}
			},
			check: func(t *testing.T, rep *probe.Report) {
				if !hasStep(rep, hBlobOther, "auth", probe.StatusWarning) {
					t.Errorf("no auth warning step on %s in the trace: %+v", hBlobOther, rep.Endpoints)
				}
			}},
		{name: "foreign realm after the registry's token", wantWarn: "auth.foreign-realm",
			setup: func(t *testing.T, n *hnet) (string, probe.Options, []leakRule) {
				img := newImage(layer)
				realm := n.serve(t, hRealm, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serveToken(w, r, false, hForeign) }))
				blob := n.serve(t, hBlobOther, &blobHost{img: img, token: hForeign, realm: realm.URL + "/token"})
				fr := &fakeRegistry{img: img, auth: "token", blob: redirectTo(blob.URL)}
				reg := n.serve(t, hRegistry, fr)
				fr.realm = reg.URL + "/token"
				return onlyImage(reg), probe.Options{Creds: creds()}, []leakRule{{realm, append(secretForms(hRegToken), password...)}, {blob, append(secretForms(hRegToken), password...)}, {reg, []string{hForeign}}}
			}},
		{name: "foreign realm refuses anonymous", wantCause: "transfer.status",
			setup: func(t *testing.T, n *hnet) (string, probe.Options, []leakRule) {
				img := newImage(layer)
				realm := n.serve(t, hRealm, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serveToken(w, r, true, hForeign) }))
				blob := n.serve(t, hBlobOther, &blobHost{img: img, token: hForeign, realm: realm.URL + "/token"})
				reg := n.serve(t, hRegistry, &fakeRegistry{img: img, blob: redirectTo(blob.URL)})
				return onlyImage(reg), probe.Options{Creds: creds()}, []leakRule{{realm, password}, {blob, password}}
			}},
		{name: "https to http redirect on the same host", wantCause: "transfer.downgrade",
			setup: func(t *testing.T, n *hnet) (string, probe.Options, []leakRule) {
				img := newImage(layer)
				plain := n.servePlain(t, hRegistry, &blobHost{img: img})
				fr := &fakeRegistry{img: img, auth: "token", blob: redirectTo(plain.URL)}
				reg := n.serve(t, hRegistry, fr)
				fr.realm = reg.URL + "/token"
				return onlyImage(reg), probe.Options{Creds: creds()}, []leakRule{{plain, append(secretForms(hRegToken), password...)}}
			}},
		{name: "token realm on plain http", wantCause: "auth.cleartext",
			setup: func(t *testing.T, n *hnet) (string, probe.Options, []leakRule) {
				img := newImage(layer)
				realm := n.servePlain(t, hRealm, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serveToken(w, r, true, hRegToken) }))
				reg := n.serve(t, hRegistry, &fakeRegistry{img: img, auth: "token", realm: realm.URL + "/token"})
				return onlyImage(reg), probe.Options{Creds: creds()}, []leakRule{{realm, password}}
			}},
		{name: "token realm on plain http, anonymous pull",
			setup: func(t *testing.T, n *hnet) (string, probe.Options, []leakRule) {
				img := newImage(layer)
				realm := n.servePlain(t, hRealm, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serveToken(w, r, false, hRegToken) }))
				reg := n.serve(t, hRegistry, &fakeRegistry{img: img, auth: "token", realm: realm.URL + "/token"})
				return onlyImage(reg), probe.Options{}, nil
			}},
		{name: "plain-http registry declared in hosts.toml",
			setup: func(t *testing.T, n *hnet) (string, probe.Options, []leakRule) {
				img := newImage(layer)
				reg := n.servePlain(t, hRegistry, &fakeRegistry{img: img, auth: "basic"})
				dir := filepath.Join(n.root, "etc/containerd/certs.d", reg.Host)
				must(t, os.MkdirAll(dir, 0o755))
				must(t, os.WriteFile(filepath.Join(dir, "hosts.toml"), []byte(fmt.Sprintf("server = %q\n", reg.URL)), 0o644))
				return onlyImage(reg), probe.Options{Creds: creds()}, nil
			}},
		{name: "mirror gets the kubelet's credential, as containerd 1.6 gives it",
			setup: func(t *testing.T, n *hnet) (string, probe.Options, []leakRule) {
				img := newImage(layer)
				mirror := n.serve(t, hBlobSub, &basicOnly{fakeRegistry{img: img}, "mirroruser", mirrorPassword})
				fr := &fakeRegistry{img: img, auth: "token"}
				reg := n.serve(t, hRegistry, fr)
				fr.realm = reg.URL + "/token"
				writeMirrorTOML(t, n, reg, mirror)
				cfg := fmt.Sprintf(`{"auths":{%q:{"auth":%q},%q:{"auth":%q}}}`, reg.Host, b64(hUser+":"+hPassword), mirror.Host, b64("mirroruser:"+mirrorPassword))
				f := filepath.Join(t.TempDir(), "config.json")
				must(t, os.WriteFile(f, []byte(cfg), 0o600))
				// The kubelet's keyring matches only the registry's key for
				// the image and sends it with no server_address; containerd
				// 1.6 then presents it to the mirror too (test/netlab
				// TestCredentialRouting measured it), and so does the probe.
				// The mirror's own entry matches no image: nobody sends it.
				mirrorPw := []string{mirrorPassword, b64("mirroruser:" + mirrorPassword)}
				// The registry's token goes to the registry alone.
				return onlyImage(reg), probe.Options{DockerConfig: f}, []leakRule{{mirror, append([]string{hRegToken}, mirrorPw...)}, {reg, mirrorPw}}
			},
			extra: []string{mirrorPassword, b64("mirroruser:" + mirrorPassword)},
			check: func(t *testing.T, rep *probe.Report) {
				if !strings.HasPrefix(rep.ServedBy, hRegistry) || !hasWarning(rep, "mirror.unreachable") {
					t.Errorf("served by %s with warnings %+v, want the registry after the mirror refused the registry's credential", rep.ServedBy, rep.Warnings)
				}
			}},
		{name: "mirror gets no registry credentials", wantWarn: "auth.mirror-credentials",
			setup: func(t *testing.T, n *hnet) (string, probe.Options, []leakRule) {
				img := newImage(layer)
				mirror := n.serve(t, hBlobSub, &basicOnly{fakeRegistry{img: img}, hUser, hPassword})
				fr := &fakeRegistry{img: img, auth: "token"}
				reg := n.serve(t, hRegistry, fr)
				fr.realm = reg.URL + "/token"
				writeMirrorTOML(t, n, reg, mirror)
				return onlyImage(reg), probe.Options{Creds: creds()}, []leakRule{{mirror, append(secretForms(hRegToken), password...)}}
			},
			check: func(t *testing.T, rep *probe.Report) {
				if !strings.HasPrefix(rep.ServedBy, hRegistry) || !hasWarning(rep, "mirror.unreachable") {
					t.Errorf("served by %s with warnings %+v, want the registry after the mirror's 401", rep.ServedBy, rep.Warnings)
				}
			}},
		{name: "error body echoing request headers", wantCause: "authz.denied",
			setup: func(t *testing.T, n *hnet) (string, probe.Options, []leakRule) {
				img := newImage(layer)
				reg := n.serve(t, hRegistry, &fakeRegistry{img: img, auth: "basic", manifest: func(w http.ResponseWriter, r *http.Request) {
					w.WriteHeader(http.StatusForbidden)
					// The header first: a body is cut at 300 characters.
					fmt.Fprintf(w, "forbidden; you sent map[Authorization:[%s]]\nAuthorization: %s\n%v\n", r.Header.Get("Authorization"), r.Header.Get("Authorization"), r.Header)
				}})
				return onlyImage(reg), probe.Options{Creds: creds()}, nil
			}},
		{name: "JSON error body echoing the header", wantCause: "authz.denied",
			setup: func(t *testing.T, n *hnet) (string, probe.Options, []leakRule) {
				img := newImage(layer)
				fr := &fakeRegistry{img: img, auth: "token"}
				fr.manifest = func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusForbidden)
					fmt.Fprintf(w, `{"errors":[{"code":"DENIED","message":"token %s for map[Authorization:[%s]] is not allowed","detail":null}]}`, hRegToken, r.Header.Get("Authorization"))
				}
				reg := n.serve(t, hRegistry, fr)
				fr.realm = reg.URL + "/token"
				return onlyImage(reg), probe.Options{Creds: creds()}, nil
			}},
		{name: "S3 SignatureDoesNotMatch body", wantCause: "transfer.status",
			extra: []string{"AKIAHOSTILE0KEY00001", "sigprovSECRET0123456789abcdef", "sigSECRET0123456789"},
			setup: func(t *testing.T, n *hnet) (string, probe.Options, []leakRule) {
				img := newImage(layer)
				s3 := n.serve(t, hBlobOther, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/xml")
					w.WriteHeader(http.StatusForbidden)
					fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match the signature you provided.</Message><AWSAccessKeyId>AKIAHOSTILE0KEY00001</AWSAccessKeyId><StringToSign>AWS4-HMAC-SHA256 20260101T000000Z</StringToSign><SignatureProvided>sigprovSECRET0123456789abcdef</SignatureProvided><CanonicalRequest>GET /data X-Amz-Credential=AKIAHOSTILE0KEY00001&amp;X-Amz-Signature=sigSECRET0123456789</CanonicalRequest></Error>`)
				}))
				fr := &fakeRegistry{img: img, auth: "token", blob: func(d digest.Digest, r *http.Request) string {
					return s3.URL + "/data/" + d.String() + "?X-Amz-Credential=AKIAHOSTILE0KEY00001%2F20260101&X-Amz-Signature=sigSECRET0123456789"
				}}
				reg := n.serve(t, hRegistry, fr)
				fr.realm = reg.URL + "/token"
				return onlyImage(reg), probe.Options{Creds: creds()}, []leakRule{{s3, append(secretForms(hRegToken), password...)}}
			}},
		{name: "slowloris headers", wantCause: "registry.unavailable",
			setup: func(t *testing.T, n *hnet) (string, probe.Options, []leakRule) {
				host := n.raw(t, hRegistry, true, func(c net.Conn) {
					br := bufio.NewReader(c)
					if _, err := http.ReadRequest(br); err != nil {
						return
					}
					c.Write([]byte("HTTP/1.1 200 OK\r\nX-Slow: "))
					for i := 0; i < 600; i++ {
						if _, err := c.Write([]byte("a")); err != nil {
							return
						}
						time.Sleep(100 * time.Millisecond)
					}
				})
				return host + "/app:1", probe.Options{}, nil
			}},
		{name: "endless manifest", wantCause: "manifest.invalid", maxRSS: 256,
			setup: func(t *testing.T, n *hnet) (string, probe.Options, []leakRule) {
				img := newImage(layer)
				reg := n.serve(t, hRegistry, &fakeRegistry{img: img, manifest: streamManifest(img, -1)})
				return onlyImage(reg), probe.Options{}, nil
			}},
		{name: "1 GB manifest", wantCause: "manifest.invalid", maxRSS: 256,
			setup: func(t *testing.T, n *hnet) (string, probe.Options, []leakRule) {
				img := newImage(layer)
				reg := n.serve(t, hRegistry, &fakeRegistry{img: img, manifest: streamManifest(img, 1<<30)})
				return onlyImage(reg), probe.Options{}, nil
			}},
		{name: "redirect loop", wantCause: "transfer.redirect",
			setup: func(t *testing.T, n *hnet) (string, probe.Options, []leakRule) {
				img := newImage(layer)
				fr := &fakeRegistry{img: img, auth: "token", blob: func(d digest.Digest, r *http.Request) string { return r.URL.Path }}
				reg := n.serve(t, hRegistry, fr)
				fr.realm = reg.URL + "/token"
				return onlyImage(reg), probe.Options{Creds: creds()}, nil
			}},
		{name: "50 redirects", wantCause: "transfer.redirect",
			setup: func(t *testing.T, n *hnet) (string, probe.Options, []leakRule) {
				img := newImage(layer)
				var hops *hsrv
				hops = n.serve(t, hBlobOther, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					i, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/"))
					if i < 50 {
						http.Redirect(w, r, fmt.Sprintf("%s/hop/%d", hops.URL, i+1), http.StatusFound)
						return
					}
					w.Write(layer)
				}))
				reg := n.serve(t, hRegistry, &fakeRegistry{img: img, blob: func(d digest.Digest, r *http.Request) string { return hops.URL + "/hop/1" }})
				return onlyImage(reg), probe.Options{Creds: creds()}, []leakRule{{hops, password}}
			}},
		{name: "huge token JSON", wantCause: "auth.token", maxRSS: 256,
			setup: func(t *testing.T, n *hnet) (string, probe.Options, []leakRule) {
				img := newImage(layer)
				fr := &fakeRegistry{img: img, auth: "token"}
				reg := n.serve(t, hRegistry, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/bigtoken" {
						w.Write([]byte(`{"token":"`))
						chunk := bytes.Repeat([]byte("a"), 64<<10)
						for i := 0; i < 16<<10; i++ { // up to 1 GiB
							if _, err := w.Write(chunk); err != nil {
								return
							}
						}
						return
					}
					fr.ServeHTTP(w, r)
				}))
				fr.realm = reg.URL + "/bigtoken"
				return onlyImage(reg), probe.Options{}, nil
			}},
		{name: "malformed token JSON", wantCause: "auth.token",
			setup: func(t *testing.T, n *hnet) (string, probe.Options, []leakRule) {
				img := newImage(layer)
				fr := &fakeRegistry{img: img, auth: "token"}
				reg := n.serve(t, hRegistry, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/badtoken" {
						w.Write([]byte(`{"token": ["` + hRegToken + `"`))
						return
					}
					fr.ServeHTTP(w, r)
				}))
				fr.realm = reg.URL + "/badtoken"
				return onlyImage(reg), probe.Options{Creds: creds()}, nil
			}},
		{name: "gzip bomb manifest", wantCause: "transfer.digest", maxRSS: 256,
			setup: func(t *testing.T, n *hnet) (string, probe.Options, []leakRule) {
				img := newImage(layer)
				bomb := gzipBomb(t)
				reg := n.serve(t, hRegistry, &fakeRegistry{img: img, manifest: func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
					w.Header().Set("Docker-Content-Digest", digest.FromBytes(img.manifest).String())
					w.Header().Set("Content-Encoding", "gzip")
					w.Header().Set("Content-Length", fmt.Sprint(len(bomb)))
					if r.Method != http.MethodHead {
						w.Write(bomb)
					}
				}})
				return onlyImage(reg), probe.Options{}, nil
			}},
		{name: "TCP server that never speaks TLS", wantCause: "tls.timeout",
			setup: func(t *testing.T, n *hnet) (string, probe.Options, []leakRule) {
				host := n.raw(t, hRegistry, false, func(c net.Conn) {
					buf := make([]byte, 1024)
					for {
						c.SetReadDeadline(time.Now().Add(30 * time.Second))
						if _, err := c.Read(buf); err != nil {
							return
						}
					}
				})
				return host + "/app:1", probe.Options{Creds: creds()}, nil
			}},
		{name: "50-certificate chain",
			setup: func(t *testing.T, n *hnet) (string, probe.Options, []leakRule) {
				img := newImage(layer)
				chain, root := longChain(t, 50)
				// The node trusts the chain's root instead of the hostile CA.
				must(t, os.WriteFile(filepath.Join(n.root, "etc/ssl/certs/ca-certificates.crt"), root, 0o644))
				n.leaf = chain
				reg := n.serve(t, hRegistry, &fakeRegistry{img: img})
				return onlyImage(reg), probe.Options{}, nil
			}},
		{name: "25,000-layer manifest", maxRSS: 512,
			setup: func(t *testing.T, n *hnet) (string, probe.Options, []leakRule) {
				layers := make([][]byte, 25000)
				for i := range layers {
					layers[i] = []byte("layer " + strconv.Itoa(i))
				}
				img := newImage(layers...)
				fr := &fakeRegistry{img: img, auth: "token"}
				reg := n.serve(t, hRegistry, fr)
				fr.realm = reg.URL + "/token"
				return onlyImage(reg), probe.Options{Creds: creds(), Blobs: probe.BlobsHead, Jobs: 8}, nil
			},
			check: func(t *testing.T, rep *probe.Report) {
				if len(rep.Blobs) != 25001 {
					t.Errorf("report lists %d blobs, want 25001", len(rep.Blobs))
				}
			}},
		{name: "blob redirect to another host carries no Authorization",
			setup: func(t *testing.T, n *hnet) (string, probe.Options, []leakRule) {
				img := newImage(layer)
				blob := n.serve(t, hBlobOther, &blobHost{img: img})
				fr := &fakeRegistry{img: img, auth: "token", blob: redirectTo(blob.URL)}
				reg := n.serve(t, hRegistry, fr)
				fr.realm = reg.URL + "/token"
				return onlyImage(reg), probe.Options{Creds: creds()}, []leakRule{{blob, append(secretForms(hRegToken), append(password, "Authorization")...)}}
			}},
		{name: "blob redirect to a subdomain follows Go's rule",
			setup: func(t *testing.T, n *hnet) (string, probe.Options, []leakRule) {
				img := newImage(layer)
				blob := n.serve(t, hBlobSub, &blobHost{img: img, token: hRegToken})
				fr := &fakeRegistry{img: img, auth: "token", blob: redirectTo(blob.URL)}
				reg := n.serve(t, hRegistry, fr)
				fr.realm = reg.URL + "/token"
				t.Cleanup(func() {
					// Go forwards Authorization to a subdomain of the first
					// request's host: the blob host got the registry's
					// token (and served the blob with it), never the password.
					if _, ok := blob.saw([]string{"Bearer " + hRegToken}); !ok {
						t.Errorf("%s did not get the registry's token: Go's subdomain rule changed?", hBlobSub)
					}
				})
				return onlyImage(reg), probe.Options{Creds: creds()}, []leakRule{{blob, password}}
			}},
	}
}

// TestHostileServe keeps the servers of one hostile case running for a
// measurement of the real binary (hack/hostile-rss.sh): with
// PULLPATH_HOSTILE_SERVE=<case name> and PULLPATH_HOSTILE_OUT=<file> it
// writes the probe's arguments to the file and serves until the file is
// removed (at most five minutes).
func TestHostileServe(t *testing.T) {
	name, outFile := os.Getenv("PULLPATH_HOSTILE_SERVE"), os.Getenv("PULLPATH_HOSTILE_OUT")
	if name == "" || outFile == "" {
		t.Skip("skipped: only for hack/hostile-rss.sh (PULLPATH_HOSTILE_SERVE, PULLPATH_HOSTILE_OUT)")
	}
	for _, tc := range hostileCases() {
		if tc.name != name {
			continue
		}
		n := newHNet(t)
		image, opts, _ := tc.setup(t, n)
		args := []string{image, "--root", n.root, "--platform", "linux/amd64", "--timeout", "1s"}
		if opts.Blobs != "" {
			args = append(args, "--blobs", opts.Blobs)
		}
		if opts.Jobs != 0 {
			args = append(args, "--jobs", strconv.Itoa(opts.Jobs))
		}
		if opts.DockerConfig != "" {
			args = append(args, "--docker-config", opts.DockerConfig)
		}
		if opts.Creds != nil {
			args = append(args, "--username", opts.Creds.Username, "--password-stdin")
		}
		must(t, os.WriteFile(outFile+".tmp", []byte(strings.Join(args, "\n")+"\n"), 0o644))
		must(t, os.Rename(outFile+".tmp", outFile))
		for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if _, err := os.Stat(outFile); err != nil {
				return
			}
		}
		return
	}
	t.Fatalf("no hostile case named %q", name)
}
