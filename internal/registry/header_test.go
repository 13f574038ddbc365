package registry

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

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
