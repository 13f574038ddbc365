package registry

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/redact"
	"github.com/pullpath/pullpath/internal/verdict"
)

// authorize answers a 401 challenge of the session's own host. Steps, as
// containerd's authorizer (core/remotes/docker/authorizer.go) takes them:
//  1. Parse WWW-Authenticate; prefer Bearer, else Basic.
//  2. Basic: send the credentials as they are (ECR); none → auth.no-credentials.
//  3. Bearer with credentials: POST the realm (OAuth2 password grant); on
//     404/401/400/405 fall back to GET with basic auth. A realm on plain
//     http gets no credentials unless hosts.toml declares it plain-http
//     (auth.cleartext).
//  4. Bearer anonymous: GET realm?service=&scope=.
//  5. Keep the token for the session's later requests to its own host.
func (s *Session) authorize(ctx context.Context, header string) error {
	cs := ParseChallenges(header)
	if b, ok := Bearer(cs); ok {
		tok, ttl, err := s.bearer(ctx, b, s.Creds)
		if err != nil {
			return err
		}
		s.setAuth("Bearer " + tok)
		s.Memo.putToken(tokenKey(s.Host.Host, s.Scope(), s.Creds), "Bearer "+tok, ttl)
		return nil
	}
	if _, ok := Basic(cs); ok {
		if s.Creds.Anonymous() && s.HeaderRejected() {
			// containerd has no handler for the challenge either and
			// tries the next host (authorizer.go AddResponses).
			return verdict.Errorf(verdict.CodeAuthHostsHeaderRejected, s.Host.Role, s.Host.endpoint(), "the registry rejected the Authorization header that hosts.toml sets for %s (401) and asks for Basic credentials, which the pull does not have", s.Host.Host)
		}
		if s.Creds.Anonymous() {
			return verdict.Errorf(verdict.CodeAuthNoCredentials, s.Host.Role, s.Host.endpoint(), "the registry asks for Basic credentials and the pull has none")
		}
		if s.Host.Scheme == "http" && !s.plain(s.Host.Host) {
			return verdict.Errorf(verdict.CodeAuthCleartext, s.Host.Role, s.Host.endpoint(), "the registry asks for Basic credentials over plain http and hosts.toml does not declare %s plain-http; pullpath did not send them", s.Host.Host)
		}
		s.setAuth("Basic " + BasicAuth(s.Creds.Username, s.Creds.Password))
		return nil
	}
	if header == "" {
		return verdict.Errorf(verdict.CodeAuthNoCredentials, s.Host.Role, s.Host.endpoint(), "401 Unauthorized without a WWW-Authenticate challenge")
	}
	return verdict.Errorf(verdict.CodeRegistryProtocol, s.Host.Role, s.Host.endpoint(), "failed to find supported auth scheme in %q", redact.String(header))
}

// authorizeForeign answers the challenge of a host the session was
// redirected to (a blob host), which is not the host the credentials were
// given for: at most an anonymous token request to the realm it names,
// shown as its own warning. The token is kept for that host only.
func (s *Session) authorizeForeign(ctx context.Context, header string, at *url.URL) error {
	ep := Endpoint(at.Scheme, at.Host)
	b, ok := Bearer(ParseChallenges(header))
	if !ok {
		return verdict.Errorf(verdict.CodeTransferStatus, verdict.RoleBlob, ep, "the blob host %s answered 401 and asks for credentials (%s); the registry's credentials are sent to no other host", at.Host, redact.String(header))
	}
	realm := b.Params["realm"]
	s.warn(verdict.Warning{Code: verdict.CodeAuthForeignRealm, Endpoint: ep,
		Message: fmt.Sprintf("the blob host %s, reached by redirect from %s, answered 401 naming its own token realm %s; pullpath asked it for an anonymous token only and sent it no credentials (they are for %s and the realm its own challenge names)", at.Host, s.Host.Host, redact.Query(realm), s.Host.Host)})
	tok, _, err := s.bearer(ctx, b, &Credentials{})
	if err != nil {
		if ve, ok := verdict.AsError(err); ok && ve.Layer == verdict.LayerAuth {
			return verdict.Wrap(verdict.CodeTransferStatus, verdict.RoleBlob, ep, fmt.Errorf("the blob host %s answered 401 with its own realm, which gave no anonymous token: %w", at.Host, err))
		}
		return err
	}
	s.setHostAuth(at.Host, "Bearer "+tok)
	return nil
}

func (s *Session) warn(w verdict.Warning) {
	if s.OnWarning != nil {
		s.OnWarning(w)
	}
}

// plain reports whether credentials may go to host over plain http: only
// when the runtime's configuration declares the host plain-http.
func (s *Session) plain(host string) bool {
	if s.PlainHTTP != nil {
		return s.PlainHTTP(host)
	}
	return s.Host.Scheme == "http" && host == s.Host.Host
}

func (s *Session) setHostAuth(host, v string) {
	s.mu.Lock()
	if s.hostAuth == nil {
		s.hostAuth = map[string]string{}
	}
	s.hostAuth[host] = v
	s.mu.Unlock()
}

func (s *Session) setAuth(v string) {
	s.mu.Lock()
	s.authHeader = v
	s.mu.Unlock()
}

// BasicAuth is the value of a Basic Authorization header, without the scheme.
func BasicAuth(user, pass string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
}

// bearer fetches a token at the realm of challenge c with creds and
// returns it with its lifetime (0 when the answer gives none).
func (s *Session) bearer(ctx context.Context, c Challenge, creds *Credentials) (string, time.Duration, error) {
	realm, err := url.Parse(c.Params["realm"])
	if err != nil || realm.Host == "" || (realm.Scheme != "https" && realm.Scheme != "http") {
		return "", 0, verdict.Errorf(verdict.CodeRegistryProtocol, s.Host.Role, s.Host.endpoint(), "challenge has no usable realm: %q", redact.Query(c.Params["realm"]))
	}
	ep := Endpoint(realm.Scheme, realm.Host)
	if realm.Scheme == "http" && !creds.Anonymous() && !s.plain(realm.Host) {
		// Step 3's rule: no password grant in cleartext.
		return "", 0, verdict.Errorf(verdict.CodeAuthCleartext, verdict.RoleAuth, ep, "the challenge of %s names the token realm %s on plain http; pullpath did not send the credentials of %s in cleartext (hosts.toml does not declare %s plain-http)", s.Host.Host, redact.Query(realm.String()), creds.Describe(), realm.Host)
	}
	scope := c.Params["scope"]
	if scope == "" || !strings.Contains(scope, s.Repo) {
		scope = s.Scope()
	}
	s.mu.Lock()
	s.scope = scope
	s.mu.Unlock()
	service := c.Params["service"]
	s.role(realm.Host, verdict.RoleAuth)

	var resp *http.Response
	if !creds.Anonymous() {
		resp, err = s.tokenPOST(ctx, realm, service, scope, creds)
		if err != nil {
			return "", 0, err
		}
		switch resp.StatusCode {
		case http.StatusNotFound, http.StatusUnauthorized, http.StatusBadRequest, http.StatusMethodNotAllowed:
			drain(resp)
			resp = nil
		}
	}
	if resp == nil {
		resp, err = s.tokenGET(ctx, realm, service, scope, creds)
		if err != nil {
			return "", 0, err
		}
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		codes, text := ReadErrorBody(resp.Body)
		se := &StatusError{Method: resp.Request.Method, URL: RedactURL(resp.Request.URL.String()), Status: resp.Status, Code: resp.StatusCode, Codes: codes, Body: text, Header: resp.Header}
		cause := statusCause(se, creds.Anonymous(), false)
		if cause == verdict.CodeTransferStatus || cause == verdict.CodeManifestUnknown {
			cause = verdict.CodeAuthToken
		}
		return "", 0, verdict.Wrap(cause, verdict.RoleAuth, ep, fmt.Errorf("failed to fetch %s token: %w", tokenKind(creds), se))
	}
	var tr struct {
		Token       string `json:"token"`
		AccessToken string `json:"access_token"`
		ExpiresIn   int    `json:"expires_in"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxTokenBody)).Decode(&tr); err != nil {
		if ve, ok := verdict.AsError(err); ok {
			return "", 0, ve
		}
		return "", 0, verdict.Errorf(verdict.CodeAuthToken, verdict.RoleAuth, ep, "unable to decode token response: %v", redact.Error(err))
	}
	tok := tr.Token
	if tok == "" {
		tok = tr.AccessToken
	}
	if tok == "" {
		return "", 0, verdict.Errorf(verdict.CodeAuthToken, verdict.RoleAuth, ep, "authorization server did not include a token in the response")
	}
	return tok, time.Duration(tr.ExpiresIn) * time.Second, nil
}

// maxTokenBody bounds a token response (1 MiB; real ones are a few KiB).
const maxTokenBody = 1 << 20

func tokenKind(c *Credentials) string {
	if c.Anonymous() {
		return "anonymous"
	}
	return "oauth"
}

// addTokenHeader appends Host.TokenHeader to a token request, as
// containerd's auth.FetchToken and FetchTokenWithOAuth append the
// authorizer's headers (values added to the request's own), then sets
// the probe's User-Agent if none was configured.
//
// A realm on plain http that hosts.toml does not declare plain-http gets
// no Authorization or cookie header from it: never a credential in
// cleartext (auth.cleartext's rule), where containerd would send it.
func (s *Session) addTokenHeader(req *http.Request) {
	cleartext := req.URL.Scheme == "http" && !s.plain(req.URL.Host)
	for k, vs := range s.Host.TokenHeader {
		if cleartext && sensitiveOnRedirect(k) {
			continue
		}
		req.Header[k] = append(req.Header[k], vs...)
	}
	setUserAgent(req)
}

func (s *Session) tokenGET(ctx context.Context, realm *url.URL, service, scope string, creds *Credentials) (*http.Response, error) {
	u := *realm
	q := u.Query()
	if service != "" {
		q.Set("service", service)
	}
	q.Set("scope", scope)
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, verdict.Wrap(verdict.CodeRegistryProtocol, verdict.RoleAuth, Endpoint(realm.Scheme, realm.Host), err)
	}
	s.addTokenHeader(req)
	if !creds.Anonymous() {
		// After the configured headers, which it replaces, as
		// containerd's FetchToken calls SetBasicAuth after copying them.
		req.Header.Set("Authorization", "Basic "+BasicAuth(creds.Username, creds.Password))
	}
	return s.roundTrip(req, verdict.RoleAuth, Endpoint(realm.Scheme, realm.Host))
}

func (s *Session) tokenPOST(ctx context.Context, realm *url.URL, service, scope string, creds *Credentials) (*http.Response, error) {
	form := url.Values{"scope": {scope}, "service": {service}, "client_id": {"containerd-client"}}
	if creds.Username == "" {
		form.Set("grant_type", "refresh_token")
		form.Set("refresh_token", creds.Password)
	} else {
		form.Set("grant_type", "password")
		form.Set("username", creds.Username)
		form.Set("password", creds.Password)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, realm.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return nil, verdict.Wrap(verdict.CodeRegistryProtocol, verdict.RoleAuth, Endpoint(realm.Scheme, realm.Host), err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	s.addTokenHeader(req)
	return s.roundTrip(req, verdict.RoleAuth, Endpoint(realm.Scheme, realm.Host))
}
