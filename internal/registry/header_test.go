package registry

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"

	"github.com/pullpath/pullpath/internal/verdict"
)

// TestHeaderRejected: a hosts.toml Authorization header the host refuses
// is answered as containerd's authorizer answers it (remotes/docker
// authorizer.go AddResponses): the session's credentials on the retry,
// auth.hosts-header-rejected when there are none.
func TestHeaderRejected(t *testing.T) {
	basic := func(u, p string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(u+":"+p)) }
	users := map[string]string{"hdr": "good", "pod": "pw"}
	for _, tc := range []struct {
		name      string
		bearer    bool
		header    string
		creds     *Credentials
		wantSeen  []string
		wantCause string
		rejected  bool
	}{
		{name: "header refused, credentials accepted", header: basic("hdr", "stale"), creds: &Credentials{Username: "pod", Password: "pw"},
			wantSeen: []string{"hdr(rejected)", "pod"}, rejected: true},
		{name: "header refused, no credentials", header: basic("hdr", "stale"), creds: &Credentials{},
			wantSeen: []string{"hdr(rejected)"}, wantCause: verdict.CodeAuthHostsHeaderRejected, rejected: true},
		{name: "header refused, credentials refused", header: basic("hdr", "stale"), creds: &Credentials{Username: "pod", Password: "old"},
			wantSeen: []string{"hdr(rejected)", "pod(rejected)"}, wantCause: verdict.CodeAuthBadCredentials, rejected: true},
		{name: "header accepted", header: basic("hdr", "good"), creds: &Credentials{Username: "pod", Password: "pw"},
			wantSeen: []string{"hdr"}},
		{name: "no header, no credentials", creds: &Credentials{}, wantSeen: nil, wantCause: verdict.CodeAuthNoCredentials},
		{name: "bearer: header refused, anonymous token refused", bearer: true, header: basic("hdr", "stale"), creds: &Credentials{},
			wantSeen: []string{"hdr(rejected)", "bearer"}, wantCause: verdict.CodeAuthHostsHeaderRejected, rejected: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var seen []string
			log := func(s string) {
				mu.Lock()
				if !slices.Contains(seen, s) {
					seen = append(seen, s)
				}
				mu.Unlock()
			}
			var srv *httptest.Server
			srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/token" {
					w.Header().Set("Content-Type", "application/json")
					w.Write([]byte(`{"token":"anon"}`))
					return
				}
				ok := false
				if u, p, isBasic := r.BasicAuth(); isBasic {
					ok = users[u] != "" && users[u] == p
					if ok {
						log(u)
					} else {
						log(u + "(rejected)")
					}
				} else if strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
					log("bearer")
				}
				if !ok {
					if tc.bearer {
						w.Header().Set("WWW-Authenticate", `Bearer realm="`+srv.URL+`/token",service="lab"`)
					} else {
						w.Header().Set("WWW-Authenticate", `Basic realm="lab"`)
					}
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
				w.Header().Set("Docker-Content-Digest", "sha256:"+strings.Repeat("a", 64))
				w.Header().Set("Content-Length", "10")
			}))
			defer srv.Close()
			hdr := http.Header{}
			if tc.header != "" {
				hdr.Set("Authorization", tc.header)
			}
			s := &Session{Client: srv.Client(), Host: Host{Host: srv.Listener.Addr().String(), Scheme: "https", Path: "/v2", Role: verdict.RoleMirror, Header: hdr},
				Repo: "team/app", Creds: tc.creds, Timeout: 2 * time.Second}
			_, err := s.Resolve(context.Background(), "1")
			mu.Lock()
			got := seen
			mu.Unlock()
			if !slices.Equal(got, tc.wantSeen) {
				t.Errorf("the host saw %q, want %q", got, tc.wantSeen)
			}
			if s.HeaderRejected() != tc.rejected {
				t.Errorf("HeaderRejected = %v, want %v", s.HeaderRejected(), tc.rejected)
			}
			cause := ""
			if err != nil {
				ve, ok := verdict.AsError(err)
				if !ok {
					t.Fatalf("not a verdict error: %v", err)
				}
				cause = ve.Cause
				if tc.rejected && !strings.Contains(ve.Error(), "hosts.toml") {
					t.Errorf("the evidence does not name the hosts.toml header: %v", ve)
				}
				for _, secret := range []string{"stale", "good", "pw", "old"} {
					if strings.Contains(ve.Error(), ":"+secret) || strings.Contains(ve.Error(), base64.StdEncoding.EncodeToString([]byte("hdr:"+secret))) {
						t.Errorf("the error shows a secret: %v", ve)
					}
				}
			}
			if cause != tc.wantCause {
				t.Errorf("cause %q (%v), want %q", cause, err, tc.wantCause)
			}
		})
	}
}

// TestHeaderStaysOnItsHost: a hosts.toml header set for the registry
// (Authorization among them) is not re-sent to the blob host the registry
// redirects to, even when that host challenges and the session answers it:
// Go's client drops Authorization on a redirect to another domain, so
// containerd's never reaches it either; other headers go along.
func TestHeaderStaysOnItsHost(t *testing.T) {
	for _, basicChallenge := range []bool{false, true} {
		t.Run(fmt.Sprintf("basic challenge %v", basicChallenge), func(t *testing.T) { headerStaysOnItsHost(t, basicChallenge) })
	}
}

// headerStaysOnItsHost: the blob host challenges with Bearer (the session
// answers with that host's own token) or with Basic (the session has no
// credential for it: the pull fails there, as containerd's would).
func headerStaysOnItsHost(t *testing.T, basicChallenge bool) {
	blob := strings.Repeat("b", 10)
	dg := digest.FromString(blob)
	var mu sync.Mutex
	var blobSaw []string
	// Another host than the registry's 127.0.0.1, as Go compares them
	// (a port alone does not make another domain): ::1, which the
	// httptest certificate also names.
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("tier loopback: TestHeaderStaysOnItsHost skipped: no IPv6 loopback for the blob host: %v", err)
	}
	var blobHost *httptest.Server
	blobHost = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		blobSaw = append(blobSaw, r.Header.Get("Authorization")+"|"+r.Header.Get("X-Mirror-Tenant"))
		mu.Unlock()
		if r.URL.Path == "/token" {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"token":"blob-token"}`))
			return
		}
		if r.Header.Get("Authorization") != "Bearer blob-token" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="`+blobHost.URL+`/token",service="blobs"`)
			if basicChallenge {
				w.Header().Set("WWW-Authenticate", `Basic realm="blobs"`)
			}
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Length", "10")
		w.Write([]byte(blob))
	}))
	blobHost.Listener.Close()
	blobHost.Listener = l
	blobHost.StartTLS()
	defer blobHost.Close()
	reg := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Basic aGRyOmdvb2Q=" { // hdr:good
			w.Header().Set("WWW-Authenticate", `Basic realm="lab"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		http.Redirect(w, r, blobHost.URL+"/blobs/"+dg.Encoded(), http.StatusTemporaryRedirect)
	}))
	defer reg.Close()
	pool := reg.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	pool.AddCert(blobHost.Certificate())
	hdr := http.Header{}
	hdr.Set("Authorization", "Basic aGRyOmdvb2Q=")
	hdr.Set("X-Mirror-Tenant", "t1")
	s := &Session{Client: reg.Client(), Host: Host{Host: reg.Listener.Addr().String(), Scheme: "https", Path: "/v2", Role: verdict.RoleMirror, Header: hdr},
		Repo: "team/app", Creds: &Credentials{}, Timeout: 2 * time.Second}
	_, err = s.Blob(context.Background(), Descriptor{Digest: dg, Size: 10}, false, nil)
	if (err != nil) != basicChallenge {
		t.Fatalf("blob: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(blobSaw) < 1 || !basicChallenge && len(blobSaw) < 2 {
		t.Fatalf("the blob host saw %q: the redirect, its challenge and the answer did not happen", blobSaw)
	}
	for _, h := range blobSaw {
		if strings.Contains(h, "Basic") {
			t.Errorf("the blob host received the registry's hosts.toml Authorization: %q", blobSaw)
		}
	}
	if last := blobSaw[len(blobSaw)-1]; !basicChallenge && last != "Bearer blob-token|t1" {
		t.Errorf("the answered request carried %q, want the blob host's own token and the other hosts.toml header", last)
	}
}

// TestTokenHeader: Host.TokenHeader goes on the token requests as
// containerd 2.1+'s auth.FetchToken and FetchTokenWithOAuth send the
// authorizer's headers: appended to the request's own; on the anonymous
// GET a configured Authorization stays, with credentials the GET's Basic
// replaces it; the OAuth POST keeps it beside the form's credentials. Without
// TokenHeader (containerd before 2.1) the token request carries none.
func TestTokenHeader(t *testing.T) {
	var mu sync.Mutex
	var saw []string
	var srv *httptest.Server
	srv = httptest.NewTLSServer(tokenGated(func() string { return srv.URL }, func(r *http.Request) {
		mu.Lock()
		saw = append(saw, r.Method+" "+strings.Join(r.Header.Values("X-Mark"), ",")+" "+r.Header.Get("Authorization"))
		mu.Unlock()
	}))
	defer srv.Close()
	cfg := http.Header{"X-Mark": {"global", "host"}, "Authorization": {"Bearer from-hosts-toml"}}
	for _, tc := range []struct {
		name  string
		token http.Header
		creds *Credentials
		want  string
	}{
		{"anonymous, 2.1+", cfg, &Credentials{}, "GET global,host Bearer from-hosts-toml"},
		{"credentials, 2.1+", cfg, &Credentials{Username: "u", Password: "p"}, "POST global,host Bearer from-hosts-toml"},
		{"anonymous, before 2.1", nil, &Credentials{}, "GET  "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			saw = nil
			mu.Unlock()
			s := &Session{Client: srv.Client(), Host: Host{Host: srv.Listener.Addr().String(), Scheme: "https", Path: "/v2", Role: verdict.RoleRegistry, TokenHeader: tc.token},
				Repo: "team/app", Creds: tc.creds, Timeout: 2 * time.Second}
			if _, err := s.Resolve(context.Background(), "1"); err != nil {
				t.Fatalf("resolve: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(saw) != 1 || saw[0] != tc.want {
				t.Errorf("the token requests carried %q, want [%q]", saw, tc.want)
			}
		})
	}
}

// TestTokenHeaderNotInCleartext: a token realm on plain http, not declared
// plain-http, gets the configured headers but never their Authorization.
func TestTokenHeaderNotInCleartext(t *testing.T) {
	var mu sync.Mutex
	var saw []string
	realm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		saw = append(saw, strings.Join(r.Header.Values("X-Mark"), ",")+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"token":"t0k"}`))
	}))
	defer realm.Close()
	reg := httptest.NewTLSServer(tokenGated(func() string { return realm.URL }, nil))
	defer reg.Close()
	s := &Session{Client: reg.Client(), Host: Host{Host: reg.Listener.Addr().String(), Scheme: "https", Path: "/v2", Role: verdict.RoleRegistry,
		TokenHeader: http.Header{"X-Mark": {"host"}, "Authorization": {"Bearer from-hosts-toml"}}},
		Repo: "team/app", Creds: &Credentials{}, Timeout: 2 * time.Second}
	if _, err := s.Resolve(context.Background(), "1"); err != nil {
		t.Fatalf("resolve: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(saw) != 1 || saw[0] != "host " {
		t.Errorf("the plain-http realm saw %q, want the marker and no Authorization", saw)
	}
}

// tokenGated serves a one-byte manifest to requests carrying the token
// "t0k", challenges the rest with Bearer realm <realm()>/token, and
// answers that path itself (calling onToken) when the realm is its own.
func tokenGated(realm func() string, onToken func(*http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" && onToken != nil {
			onToken(r)
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"token":"t0k","access_token":"t0k"}`))
			return
		}
		if r.Header.Get("Authorization") != "Bearer t0k" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="`+realm()+`/token",service="lab"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
		w.Header().Set("Docker-Content-Digest", digest.FromString("m").String())
		w.Header().Set("Content-Length", "1")
	})
}

// TestSecretsHoldConfiguredHeaders: the configured headers' credentials
// (a hosts.toml Authorization, the token realm's copy) are among the
// secrets the report is scrubbed of, a Basic one's password included.
func TestSecretsHoldConfiguredHeaders(t *testing.T) {
	basic := base64.StdEncoding.EncodeToString([]byte("hdr-user:hdr-Pw0rd"))
	s := &Session{Host: Host{
		Header:      http.Header{"Authorization": {"Basic " + basic}, "X-Mark": {"not-secret"}},
		TokenHeader: http.Header{"Authorization": {"Bearer realm-T0ken"}, "Cookie": {"sid=C00kie"}},
	}}
	got := strings.Join(s.Secrets(), " ")
	for _, want := range []string{basic, "hdr-Pw0rd", "realm-T0ken", "sid=C00kie"} {
		if !strings.Contains(got, want) {
			t.Errorf("Secrets() = %q, want %q among them", got, want)
		}
	}
	if strings.Contains(got, "not-secret") {
		t.Errorf("Secrets() holds a header that is not a credential: %q", got)
	}
}
