package lab

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// tokenTTL is how long an issued registry token is valid by default.
const tokenTTL = 5 * time.Minute

func (ts *tokenService) lifetime() time.Duration {
	if ts.ttl > 0 {
		return ts.ttl
	}
	return tokenTTL
}

// tokenService is the lab's Docker token service (the registry's realm). It
// speaks both forms containerd uses: GET with optional basic auth
// (distribution's token spec) and POST with an OAuth2 password form.
//
// Policy (what each identity may do on a repository, by first path segment):
//   - pusher: pull and push everywhere (setup only);
//   - puller: pull everywhere except forbidden/*, where the token is issued
//     with an empty access list, so the registry answers insufficient_scope;
//   - anonymous: pull on the public prefixes team/*, multi/* and foreign/*; a request
//     for any other repository is refused with 401, the way ACR refuses an
//     anonymous token for a private repository;
//   - a wrong password or an unknown user: 401.
type tokenService struct {
	issuer  string
	service string
	key     *ecdsa.PrivateKey
	kid     string
	users   map[string]string // user → password
	public  map[string]bool   // repository prefixes anonymous may pull
	now     func() time.Time
	ttl     time.Duration // lifetime of an issued token (Options.TokenTTL)
}

// signerCertPEM is a self-signed certificate for the token signing key.
// distribution's token access controller needs it as its rootcertbundle: it
// trusts the key under the JWK thumbprint of the certificate's public key,
// and a token whose header carries that thumbprint as "kid" (and no x5c
// chain) is verified with it.
func signerCertPEM(key *ecdsa.PrivateKey, now time.Time) ([]byte, error) {
	serial, err := newSerial()
	if err != nil {
		return nil, fmt.Errorf("generating serial: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "pullpath lab token signer"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(30 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("signing token signer certificate: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// access is one entry of a token's "access" claim.
type access struct {
	Type    string   `json:"type"`
	Name    string   `json:"name"`
	Actions []string `json:"actions"`
}

type claims struct {
	Issuer    string   `json:"iss"`
	Subject   string   `json:"sub"`
	Audience  string   `json:"aud"`
	Expires   int64    `json:"exp"`
	NotBefore int64    `json:"nbf"`
	IssuedAt  int64    `json:"iat"`
	ID        string   `json:"jti"`
	Access    []access `json:"access"`
}

// sign makes an ES256 JWT.
func (ts *tokenService) sign(c claims) (string, error) {
	header, err := json.Marshal(map[string]string{"typ": "JWT", "alg": "ES256", "kid": ts.kid})
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	input := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(payload)
	digest := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, ts.key, digest[:])
	if err != nil {
		return "", fmt.Errorf("signing token: %w", err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return input + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// allowed returns the actions user may take on repo ("" is anonymous) and
// whether the request may get a token at all.
func (ts *tokenService) allowed(user, repo string) (actions []string, ok bool) {
	prefix, _, _ := strings.Cut(repo, "/")
	switch user {
	case "pusher":
		return []string{"pull", "push"}, true
	case "":
		if ts.public[prefix] {
			return []string{"pull"}, true
		}
		return nil, false
	}
	if prefix == "forbidden" {
		return nil, true
	}
	return []string{"pull"}, true
}

// parseScope parses "repository:name:pull,push" (the name may hold colons
// only in a port, which repository names never carry).
func parseScope(s string) (access, bool) {
	typ, rest, ok := strings.Cut(s, ":")
	if !ok {
		return access{}, false
	}
	i := strings.LastIndex(rest, ":")
	if i < 0 {
		return access{}, false
	}
	return access{Type: typ, Name: rest[:i], Actions: strings.Split(rest[i+1:], ",")}, true
}

func writeRegistryError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]string{{"code": code, "message": message}}})
}

// ServeHTTP implements the token endpoint /token.
//
//  1. Read the identity: basic auth on GET, username/password form fields on
//     POST (grant_type=password); none is anonymous.
//  2. Check the password; a wrong one is 401 whatever the scope.
//  3. For each requested scope, grant the intersection of the requested and
//     the allowed actions; an anonymous request for a private repository is
//     401.
//  4. Answer {"token","access_token","expires_in","issued_at"}.
func (ts *tokenService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/token" {
		http.NotFound(w, r)
		return
	}
	var user, pass string
	var hasCreds bool
	var scopes []string
	var service string
	switch r.Method {
	case http.MethodGet:
		user, pass, hasCreds = r.BasicAuth()
		q := r.URL.Query()
		service = q.Get("service")
		scopes = q["scope"]
	case http.MethodPost:
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		if err := r.ParseForm(); err != nil {
			writeRegistryError(w, http.StatusBadRequest, "UNSUPPORTED", "malformed form")
			return
		}
		if gt := r.PostForm.Get("grant_type"); gt != "password" {
			// No refresh tokens are issued; containerd falls back to GET on 400.
			writeRegistryError(w, http.StatusBadRequest, "UNSUPPORTED", "unsupported grant_type")
			return
		}
		user, pass = r.PostForm.Get("username"), r.PostForm.Get("password")
		hasCreds = user != ""
		service = r.PostForm.Get("service")
		scopes = r.PostForm["scope"]
	default:
		w.Header().Set("Allow", "GET, POST")
		writeRegistryError(w, http.StatusMethodNotAllowed, "UNSUPPORTED", "method not allowed")
		return
	}
	if service != "" && service != ts.service {
		writeRegistryError(w, http.StatusBadRequest, "UNSUPPORTED", "unknown service")
		return
	}
	if hasCreds {
		want, known := ts.users[user]
		if !known || subtle.ConstantTimeCompare([]byte(want), []byte(pass)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="lab token service"`)
			writeRegistryError(w, http.StatusUnauthorized, "UNAUTHORIZED", "incorrect username or password")
			return
		}
	} else {
		user = ""
	}
	var granted []access
	for _, field := range scopes {
		for _, s := range strings.Fields(field) {
			a, ok := parseScope(s)
			if !ok || a.Type != "repository" {
				continue
			}
			allowed, ok := ts.allowed(user, a.Name)
			if !ok {
				w.Header().Set("WWW-Authenticate", `Basic realm="lab token service"`)
				writeRegistryError(w, http.StatusUnauthorized, "UNAUTHORIZED", "authentication required")
				return
			}
			var actions []string
			for _, act := range a.Actions {
				for _, al := range allowed {
					if act == al {
						actions = append(actions, act)
					}
				}
			}
			if len(actions) > 0 {
				granted = append(granted, access{Type: "repository", Name: a.Name, Actions: actions})
			}
		}
	}
	now := ts.now()
	jti := make([]byte, 8)
	_, _ = rand.Read(jti)
	subject := user
	if subject == "" {
		subject = "anonymous"
	}
	tok, err := ts.sign(claims{
		Issuer: ts.issuer, Subject: subject, Audience: ts.service,
		Expires: now.Add(ts.lifetime()).Unix(), NotBefore: now.Add(-time.Minute).Unix(), IssuedAt: now.Unix(),
		ID: hex.EncodeToString(jti), Access: granted,
	})
	if err != nil {
		writeRegistryError(w, http.StatusInternalServerError, "UNKNOWN", "cannot sign token")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"token": tok, "access_token": tok, "expires_in": int(ts.lifetime().Seconds()),
		"issued_at": now.UTC().Format(time.RFC3339),
	})
}

var _ http.Handler = (*tokenService)(nil)
