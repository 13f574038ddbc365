package registry

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"

	"github.com/pullpath/pullpath/internal/verdict"
)

// CheckRedirect is the redirect policy of a pull's http.Client. Go's client
// already drops Authorization and Cookie when a redirect leaves the first
// request's host for one that is neither that host nor a subdomain of it
// (net/http shouldCopyHeaderOnRedirect), and keeps them otherwise, whatever
// the scheme. On top of that this policy:
//  1. stops after MaxRedirects, as containerd does;
//  2. refuses a redirect to plain http that would carry the pull's
//     Authorization or Cookie header, or a request body (a token POST with
//     the password), unless plainHTTP declares the target host plain-http
//     (transfer.downgrade);
//  3. refuses a redirect that would carry a request body (the password
//     grant of a token POST, on 307/308) to another host (auth.token).
//
// plainHTTP may be nil (no host is declared plain-http); roleOf names the
// role of the redirecting host and may be nil (registry, or blob for a host
// reached by an earlier redirect).
func CheckRedirect(plainHTTP func(host string) bool, roleOf func(host string) verdict.Role) func(req *http.Request, via []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= MaxRedirects {
			return fmt.Errorf("stopped after %d redirects", MaxRedirects)
		}
		if len(via) == 0 {
			return nil
		}
		prev, first := via[len(via)-1], via[0]
		from := Endpoint(prev.URL.Scheme, prev.URL.Host)
		role := verdict.RoleRegistry
		if roleOf != nil {
			role = roleOf(prev.URL.Host)
		} else if first.URL.Host != prev.URL.Host {
			role = verdict.RoleBlob
		}
		body := req.GetBody != nil && req.ContentLength != 0
		secret := req.Header.Get("Authorization") != "" || req.Header.Get("Cookie") != "" || body
		if req.URL.Scheme == "http" && secret && (plainHTTP == nil || !plainHTTP(req.URL.Host)) {
			return verdict.Errorf(verdict.CodeTransferDowngrade, role, from,
				"%s %s redirected to plain http (%s) with the pull's credentials; pullpath refused to send them in cleartext (hosts.toml does not declare %s plain-http)",
				first.Method, RedactURL(prev.URL.String()), RedactURL(req.URL.String()), req.URL.Host)
		}
		if body && req.URL.Hostname() != first.URL.Hostname() {
			return verdict.Errorf(verdict.CodeAuthToken, verdict.RoleAuth, Endpoint(first.URL.Scheme, first.URL.Host),
				"the token service redirected the credential request to another host (%s); pullpath did not send the credentials there", RedactURL(req.URL.String()))
		}
		return nil
	}
}

// Secrets returns the tokens the session was issued (its own and those of
// other hosts' challenges) and the credentials of its configured headers
// (a Basic one's password too), so that output can be scrubbed of them.
func (s *Session) Secrets() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	add := func(h string) {
		if _, v, ok := strings.Cut(h, " "); ok && v != "" {
			out = append(out, v)
		}
	}
	add(s.authHeader)
	for _, h := range s.hostAuth {
		add(h)
	}
	// The configured headers' credentials (hosts.toml, registry.headers),
	// sent to the host and, from containerd 2.1, to its token realm.
	for _, hdr := range []http.Header{s.Host.Header, s.Host.TokenHeader} {
		for k, vs := range hdr {
			if !sensitiveOnRedirect(k) {
				continue
			}
			for _, v := range vs {
				add(v)
				if !strings.Contains(v, " ") && v != "" {
					out = append(out, v)
				}
				scheme, cred, _ := strings.Cut(v, " ")
				if dec, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred)); err == nil && strings.EqualFold(scheme, "basic") {
					if _, pw, ok := strings.Cut(string(dec), ":"); ok && pw != "" {
						out = append(out, pw)
					}
				}
			}
		}
	}
	return out
}
