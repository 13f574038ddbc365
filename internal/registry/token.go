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

	"github.com/pullpath/pullpath/internal/verdict"
)

// authorize answers a 401 challenge. Steps, as containerd's authorizer
// (core/remotes/docker/authorizer.go) takes them:
//  1. Parse WWW-Authenticate; prefer Bearer, else Basic.
//  2. Basic: send the credentials as they are (ECR); none → auth.no-credentials.
//  3. Bearer with credentials: POST the realm (OAuth2 password grant); on
//     404/401/400/405 fall back to GET with basic auth.
//  4. Bearer anonymous: GET realm?service=&scope=.
//  5. Keep the token for the session's later requests.
func (s *Session) authorize(ctx context.Context, header string) error {
	cs := ParseChallenges(header)
	if b, ok := Bearer(cs); ok {
		return s.bearer(ctx, b)
	}
	if _, ok := Basic(cs); ok {
		if s.Creds.Anonymous() {
			return verdict.Errorf("auth.no-credentials", s.Host.Role, s.Host.endpoint(), "the registry asks for Basic credentials and the pull has none")
		}
		s.setAuth("Basic " + BasicAuth(s.Creds.Username, s.Creds.Password))
		return nil
	}
	if header == "" {
		return verdict.Errorf("auth.no-credentials", s.Host.Role, s.Host.endpoint(), "401 Unauthorized without a WWW-Authenticate challenge")
	}
	return verdict.Errorf("registry.protocol", s.Host.Role, s.Host.endpoint(), "failed to find supported auth scheme in %q", header)
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

func (s *Session) bearer(ctx context.Context, c Challenge) error {
	realm, err := url.Parse(c.Params["realm"])
	if err != nil || realm.Host == "" || (realm.Scheme != "https" && realm.Scheme != "http") {
		return verdict.Errorf("registry.protocol", s.Host.Role, s.Host.endpoint(), "challenge has no usable realm: %q", c.Params["realm"])
	}
	scope := c.Params["scope"]
	if scope == "" || !strings.Contains(scope, s.Repo) {
		scope = s.Scope()
	}
	s.mu.Lock()
	s.scope = scope
	s.mu.Unlock()
	service := c.Params["service"]
	ep := Endpoint(realm.Scheme, realm.Host)
	s.role(realm.Host, verdict.RoleAuth)

	var resp *http.Response
	if !s.Creds.Anonymous() {
		resp, err = s.tokenPOST(ctx, realm, service, scope)
		if err != nil {
			return err
		}
		switch resp.StatusCode {
		case http.StatusNotFound, http.StatusUnauthorized, http.StatusBadRequest, http.StatusMethodNotAllowed:
			drain(resp)
			resp = nil
		}
	}
	if resp == nil {
		resp, err = s.tokenGET(ctx, realm, service, scope)
		if err != nil {
			return err
		}
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		codes, text := ReadErrorBody(resp.Body)
		se := &StatusError{Method: resp.Request.Method, URL: RedactURL(resp.Request.URL.String()), Status: resp.Status, Code: resp.StatusCode, Codes: codes, Body: text, Header: resp.Header}
		cause := statusCause(se, s.Creds.Anonymous(), false)
		if cause == "transfer.status" || cause == "manifest.unknown" {
			cause = "auth.token"
		}
		return verdict.Wrap(cause, verdict.RoleAuth, ep, fmt.Errorf("failed to fetch %s token: %w", tokenKind(s.Creds), se))
	}
	var tr struct {
		Token       string `json:"token"`
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&tr); err != nil {
		if ve, ok := verdict.AsError(err); ok {
			return ve
		}
		return verdict.Errorf("auth.token", verdict.RoleAuth, ep, "unable to decode token response: %v", err)
	}
	tok := tr.Token
	if tok == "" {
		tok = tr.AccessToken
	}
	if tok == "" {
		return verdict.Errorf("auth.token", verdict.RoleAuth, ep, "authorization server did not include a token in the response")
	}
	s.setAuth("Bearer " + tok)
	return nil
}

func tokenKind(c *Credentials) string {
	if c.Anonymous() {
		return "anonymous"
	}
	return "oauth"
}

func (s *Session) tokenGET(ctx context.Context, realm *url.URL, service, scope string) (*http.Response, error) {
	u := *realm
	q := u.Query()
	if service != "" {
		q.Set("service", service)
	}
	q.Set("scope", scope)
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, verdict.Wrap("registry.protocol", verdict.RoleAuth, Endpoint(realm.Scheme, realm.Host), err)
	}
	if !s.Creds.Anonymous() {
		req.Header.Set("Authorization", "Basic "+BasicAuth(s.Creds.Username, s.Creds.Password))
	}
	return s.roundTrip(req, verdict.RoleAuth, Endpoint(realm.Scheme, realm.Host))
}

func (s *Session) tokenPOST(ctx context.Context, realm *url.URL, service, scope string) (*http.Response, error) {
	form := url.Values{"scope": {scope}, "service": {service}, "client_id": {"containerd-client"}}
	if s.Creds.Username == "" {
		form.Set("grant_type", "refresh_token")
		form.Set("refresh_token", s.Creds.Password)
	} else {
		form.Set("grant_type", "password")
		form.Set("username", s.Creds.Username)
		form.Set("password", s.Creds.Password)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, realm.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return nil, verdict.Wrap("registry.protocol", verdict.RoleAuth, Endpoint(realm.Scheme, realm.Host), err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	return s.roundTrip(req, verdict.RoleAuth, Endpoint(realm.Scheme, realm.Host))
}
