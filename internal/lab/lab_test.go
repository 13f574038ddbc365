package lab

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/miekg/dns"

	"github.com/pullpath/pullpath/internal/verdict"
)

// shared is the lab every test of the package uses (the default addresses
// and ports can hold one lab at a time); TestClose starts its own on other
// addresses.
var shared *Lab

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	l, err := Start(ctx, Options{})
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting lab: %v\n", err)
		os.Exit(1)
	}
	shared = l
	code := m.Run()
	if err := l.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "closing lab: %v\n", err)
		code = 1
	}
	os.Exit(code)
}

// exchange is one request a recorder saw.
type exchange struct {
	method, host, path string
	status             int
	location           string
	challenge          string
}

// recorder is a RoundTripper that keeps every exchange.
type recorder struct {
	inner http.RoundTripper
	mu    sync.Mutex
	seen  []exchange
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.inner.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.seen = append(r.seen, exchange{method: req.Method, host: req.URL.Host, path: req.URL.Path, status: resp.StatusCode,
		location: resp.Header.Get("Location"), challenge: resp.Header.Get("WWW-Authenticate")})
	r.mu.Unlock()
	return resp, nil
}

func (r *recorder) exchanges() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]exchange(nil), r.seen...)
}

func mustScenario(t *testing.T, name string) Scenario {
	t.Helper()
	s, ok := shared.Scenario(name)
	if !ok {
		t.Fatalf("Scenario(%q) not found", name)
	}
	return s
}

func pullOptions(t *testing.T, rt http.RoundTripper, s Scenario) []remote.Option {
	t.Helper()
	opts := []remote.Option{remote.WithTransport(rt), remote.WithContext(t.Context()),
		remote.WithRetryBackoff(remote.Backoff{Steps: 1})}
	if s.Username != "" {
		opts = append(opts, remote.WithAuth(&authn.Basic{Username: s.Username, Password: s.Password}))
	}
	if s.Platform != "" {
		p, err := v1.ParsePlatform(s.Platform)
		if err != nil {
			t.Fatalf("ParsePlatform(%q): %v", s.Platform, err)
		}
		opts = append(opts, remote.WithPlatform(*p))
	}
	return opts
}

// pull pulls the scenario's image with go-containerregistry through the
// lab transport and reads every layer (remote layers verify their digest).
func pull(t *testing.T, rt http.RoundTripper, s Scenario) (v1.Image, error) {
	t.Helper()
	ref, err := name.ParseReference(s.Image)
	if err != nil {
		t.Fatalf("ParseReference(%q): %v", s.Image, err)
	}
	img, err := remote.Image(ref, pullOptions(t, rt, s)...)
	if err != nil {
		return nil, err
	}
	if _, err := img.RawConfigFile(); err != nil {
		return nil, err
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	for _, l := range layers {
		rc, err := l.Compressed()
		if err != nil {
			return nil, err
		}
		_, err = io.Copy(io.Discard, rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
	}
	return img, nil
}

func TestHealthyPull(t *testing.T) {
	for _, tt := range []struct {
		scenario, repo string
	}{
		{"healthy", "team/app"},
		{"healthy-auth", "private/app"},
	} {
		t.Run(tt.scenario, func(t *testing.T) {
			s := mustScenario(t, tt.scenario)
			rec := &recorder{inner: shared.Transport()}
			img, err := pull(t, rec, s)
			if err != nil {
				t.Fatalf("pulling %s: %v", s.Image, err)
			}
			var want Image
			for _, im := range shared.Images() {
				if im.Repository == tt.repo {
					want = im
				}
			}
			m, err := img.Manifest()
			if err != nil {
				t.Fatal(err)
			}
			var got []Blob
			for _, l := range m.Layers {
				got = append(got, Blob{Digest: l.Digest.String(), Size: l.Size, MediaType: string(l.MediaType)})
			}
			if diff := cmp.Diff(want.Layers, got); diff != "" {
				t.Errorf("layers of %s (-pushed +pulled):\n%s", s.Image, diff)
			}

			// The pull touched the three hosts: a challenge from the
			// registry, a token from the auth host, and blob GETs redirected
			// (307) to the blob host, which served them.
			var challenged, tokens, redirects, blobs int
			for _, x := range rec.exchanges() {
				switch {
				case x.host == shared.Registry && x.status == http.StatusUnauthorized && strings.Contains(x.challenge, `realm="https://`+shared.host(hAuth)+`/token"`):
					challenged++
				case x.host == shared.host(hAuth) && x.path == "/token" && x.status == http.StatusOK:
					tokens++
				case x.host == shared.Registry && x.status == http.StatusTemporaryRedirect:
					u, err := url.Parse(x.location)
					if err != nil || u.Host != shared.host(hBlob) {
						t.Errorf("blob redirect Location = %q, want host %s", x.location, shared.host(hBlob))
					}
					redirects++
				case x.host == shared.host(hBlob) && x.status == http.StatusOK:
					blobs++
				}
			}
			if challenged == 0 || tokens == 0 {
				t.Errorf("pull saw %d challenges and %d tokens, want at least one each; exchanges: %+v", challenged, tokens, rec.exchanges())
			}
			// Every layer and the config blob went through the redirect.
			if want := len(m.Layers) + 1; redirects < want || blobs < want {
				t.Errorf("pull saw %d redirects and %d blob host GETs, want at least %d each", redirects, blobs, want)
			}
		})
	}
}

// fetchToken asks the lab token service directly.
func fetchToken(t *testing.T, method, user, pass, scope string) (int, map[string]any) {
	t.Helper()
	u := "https://" + shared.host(hAuth) + "/token"
	q := url.Values{"service": {shared.Registry}, "scope": {scope}}
	var req *http.Request
	var err error
	if method == http.MethodPost {
		form := url.Values{"grant_type": {"password"}, "service": {shared.Registry}, "scope": {scope}, "client_id": {"pullpath-test"},
			"username": {user}, "password": {pass}}
		req, err = http.NewRequestWithContext(t.Context(), method, u, strings.NewReader(form.Encode()))
		if err == nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	} else {
		req, err = http.NewRequestWithContext(t.Context(), method, u+"?"+q.Encode(), nil)
		if err == nil && user != "" {
			req.SetBasicAuth(user, pass)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: shared.Transport()}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&body)
	return resp.StatusCode, body
}

// accessOf decodes the access claim of a JWT (no verification: the
// registry verifies, see TestHealthyPull and TestInsufficientScope).
func accessOf(t *testing.T, tok string) []access {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d parts, want 3", len(parts))
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c claims
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return c.Access
}

func TestTokenService(t *testing.T) {
	pw := shared.Password
	pull := func(repo string) []access {
		return []access{{Type: "repository", Name: repo, Actions: []string{"pull"}}}
	}
	for _, tt := range []struct {
		name, method, user, pass, scope string
		wantStatus                      int
		wantAccess                      []access
	}{
		{"anonymous public", http.MethodGet, "", "", "repository:team/app:pull", 200, pull("team/app")},
		{"anonymous private refused", http.MethodGet, "", "", "repository:private/app:pull", 401, nil},
		{"anonymous push not granted", http.MethodGet, "", "", "repository:team/app:pull,push", 200, pull("team/app")},
		{"puller private", http.MethodGet, "puller", pw, "repository:private/app:pull", 200, pull("private/app")},
		{"puller wrong password", http.MethodGet, "puller", "wrong", "repository:private/app:pull", 401, nil},
		{"unknown user", http.MethodGet, "nobody", pw, "repository:team/app:pull", 401, nil},
		{"puller forbidden gets empty access", http.MethodGet, "puller", pw, "repository:forbidden/app:pull", 200, nil},
		{"oauth POST", http.MethodPost, "puller", pw, "repository:private/app:pull", 200, pull("private/app")},
		{"oauth POST wrong password", http.MethodPost, "puller", "wrong", "repository:private/app:pull", 401, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, body := fetchToken(t, tt.method, tt.user, tt.pass, tt.scope)
			if status != tt.wantStatus {
				t.Fatalf("%s token for %q as %q = %d, want %d (body %v)", tt.method, tt.scope, tt.user, status, tt.wantStatus, body)
			}
			if status != 200 {
				return
			}
			tok, _ := body["token"].(string)
			if at, _ := body["access_token"].(string); tok == "" || at != tok {
				t.Fatalf("token response has token %t and access_token equal %t, want both", tok != "", at == tok)
			}
			if diff := cmp.Diff(tt.wantAccess, accessOf(t, tok)); diff != "" {
				t.Errorf("access claim (-want +got):\n%s", diff)
			}
		})
	}
}

// registryGet sends one GET to the registry with an optional bearer token
// for the valid identity and scope.
func registryGet(t *testing.T, path, scope string, withToken bool) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://"+shared.Registry+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/vnd.oci.image.manifest.v1+json, application/vnd.oci.image.index.v1+json")
	if withToken {
		status, body := fetchToken(t, http.MethodGet, shared.Username, shared.Password, scope)
		if status != 200 {
			t.Fatalf("token for %s: status %d", scope, status)
		}
		req.Header.Set("Authorization", "Bearer "+body["token"].(string))
	}
	// Do not follow redirects: the tests look at them.
	c := &http.Client{Transport: shared.Transport(), CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type registryErrors struct {
	Errors []struct{ Code, Message string } `json:"errors"`
}

func errorCodes(t *testing.T, resp *http.Response) []string {
	t.Helper()
	var e registryErrors
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&e); err != nil {
		t.Fatalf("decoding error body: %v", err)
	}
	var codes []string
	for _, x := range e.Errors {
		codes = append(codes, x.Code)
	}
	return codes
}

// TestRegistryAnswers checks what the registry (with its front) answers,
// request by request, for the faults chosen by repository prefix.
func TestRegistryAnswers(t *testing.T) {
	layer := func(repo string) string {
		for _, im := range shared.Images() {
			if im.Repository == repo {
				return im.Layers[0].Digest
			}
		}
		t.Fatalf("no image %s", repo)
		return ""
	}
	for _, tt := range []struct {
		name, path, scope string
		token             bool
		wantStatus        int
		wantCodes         []string
		wantChallenge     string // substring of WWW-Authenticate
		wantLocationHost  string
	}{
		{name: "manifest with token", path: "/v2/team/app/manifests/1.0", scope: "repository:team/app:pull", token: true, wantStatus: 200},
		{name: "challenge names the realm", path: "/v2/team/app/manifests/1.0", wantStatus: 401, wantCodes: []string{"UNAUTHORIZED"},
			wantChallenge: `Bearer realm="https://` + shared.host(hAuth) + `/token",service="` + shared.Registry + `",scope="repository:team/app:pull"`},
		{name: "insufficient scope", path: "/v2/forbidden/app/manifests/1.0", scope: "repository:forbidden/app:pull", token: true,
			wantStatus: 401, wantCodes: []string{"UNAUTHORIZED"}, wantChallenge: `error="insufficient_scope"`},
		{name: "denied", path: "/v2/denied/app/manifests/1.0", scope: "repository:denied/app:pull", token: true, wantStatus: 403, wantCodes: []string{"DENIED"}},
		{name: "denied challenges first", path: "/v2/denied/app/manifests/1.0", wantStatus: 401, wantCodes: []string{"UNAUTHORIZED"}},
		{name: "rate limited", path: "/v2/ratelimited/app/manifests/1.0", scope: "repository:ratelimited/app:pull", token: true, wantStatus: 429, wantCodes: []string{"TOOMANYREQUESTS"}},
		{name: "broken without token", path: "/v2/broken/app/manifests/1.0", wantStatus: 503, wantCodes: []string{"UNAVAILABLE"}},
		{name: "broken with token", path: "/v2/broken/app/manifests/1.0", scope: "repository:broken/app:pull", token: true, wantStatus: 503, wantCodes: []string{"UNAVAILABLE"}},
		{name: "unknown tag", path: "/v2/team/app/manifests/nope", scope: "repository:team/app:pull", token: true, wantStatus: 404, wantCodes: []string{"MANIFEST_UNKNOWN"}},
		{name: "auth host down realm", path: "/v2/authdown/app/manifests/1.0", wantStatus: 401, wantCodes: []string{"UNAUTHORIZED"},
			wantChallenge: `realm="https://` + shared.host(hAuthDown) + `/token"`},
		{name: "blob redirect", path: "/v2/team/app/blobs/" + layer("team/app"), scope: "repository:team/app:pull", token: true,
			wantStatus: 307, wantLocationHost: shared.host(hBlob)},
		{name: "blob redirect to nxdomain", path: "/v2/blobnx/app/blobs/" + layer("blobnx/app"), scope: "repository:blobnx/app:pull", token: true,
			wantStatus: 307, wantLocationHost: shared.host(hNXBlob)},
		{name: "blob redirect to dead host", path: "/v2/blobdead/app/blobs/" + layer("blobdead/app"), scope: "repository:blobdead/app:pull", token: true,
			wantStatus: 307, wantLocationHost: shared.host(hDeadBlob)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := registryGet(t, tt.path, tt.scope, tt.token)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("GET %s = %d, want %d", tt.path, resp.StatusCode, tt.wantStatus)
			}
			if tt.wantCodes != nil {
				if diff := cmp.Diff(tt.wantCodes, errorCodes(t, resp)); diff != "" {
					t.Errorf("GET %s error codes (-want +got):\n%s", tt.path, diff)
				}
			}
			if c := resp.Header.Get("WWW-Authenticate"); !strings.Contains(c, tt.wantChallenge) {
				t.Errorf("GET %s challenge = %q, want it to contain %q", tt.path, c, tt.wantChallenge)
			}
			if tt.wantLocationHost != "" {
				u, err := url.Parse(resp.Header.Get("Location"))
				if err != nil || u.Host != tt.wantLocationHost || !strings.HasPrefix(u.Path, blobPrefix) {
					t.Errorf("GET %s Location = %q, want https://%s%s...", tt.path, resp.Header.Get("Location"), tt.wantLocationHost, blobPrefix)
				}
			}
		})
	}
}

func TestDeniedBody(t *testing.T) {
	resp := registryGet(t, "/v2/denied/app/manifests/1.0", "repository:denied/app:pull", true)
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	want := `{"errors":[{"code":"DENIED","message":"requested access to the resource is denied"}]}`
	if got := strings.TrimSpace(string(body)); got != want {
		t.Errorf("403 body = %s, want %s", got, want)
	}
}

// TestAuthHostDown follows the auth-host-down fault by hand: the registry's
// challenge for authdown/app names a realm on authdown.lab.test, which
// refuses the connection. (go-containerregistry cannot show it in a pull: it
// takes the realm from its /v2/ ping, which names no repository; containerd
// takes it from the manifest request.)
func TestAuthHostDown(t *testing.T) {
	resp := registryGet(t, "/v2/authdown/app/manifests/1.0", "", false)
	c := resp.Header.Get("WWW-Authenticate")
	_, rest, _ := strings.Cut(c, `realm="`)
	realm, _, _ := strings.Cut(rest, `"`)
	u, err := url.Parse(realm)
	if err != nil || u.Host != shared.host(hAuthDown) {
		t.Fatalf("challenge %q: realm host is not %s", c, shared.host(hAuthDown))
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, realm+"?service="+url.QueryEscape(shared.Registry), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp2, err := (&http.Client{Transport: shared.Transport()}).Do(req)
	if err == nil {
		resp2.Body.Close()
	}
	if !isRefused(err) {
		t.Errorf("GET %s error = %v, want connection refused", realm, err)
	}
}

// TestFaultPulls pulls the failing scenarios with go-containerregistry and
// checks the failure is the one the scenario is built for.
func TestFaultPulls(t *testing.T) {
	for _, tt := range []struct {
		scenario string
		check    func(error) bool
		want     string
	}{
		{"dns-nxdomain", isNotFound, "a DNS not-found error"},
		{"route-refused", isRefused, "connection refused"},
		{"blob-refused", isRefused, "connection refused"},
		{"blob-nxdomain", isNotFound, "a DNS not-found error"},
		{"tls-untrusted", func(err error) bool { var e x509.UnknownAuthorityError; return errors.As(err, &e) }, "x509.UnknownAuthorityError"},
		{"tls-name", func(err error) bool { var e x509.HostnameError; return errors.As(err, &e) }, "x509.HostnameError"},
		{"tls-expired", func(err error) bool {
			var e x509.CertificateInvalidError
			return errors.As(err, &e) && e.Reason == x509.Expired
		}, "x509.CertificateInvalidError (Expired)"},
		{"auth-anonymous", statusIs(401, "UNAUTHORIZED"), "401 UNAUTHORIZED from the token service"},
		{"auth-bad-credentials", statusIs(401, "UNAUTHORIZED"), "401 UNAUTHORIZED from the token service"},
		{"authz-scope", statusIs(401, "UNAUTHORIZED"), "401 (insufficient_scope)"},
		{"authz-denied", statusIs(403, "DENIED"), "403 DENIED"},
		{"manifest-unknown", statusIs(404, "MANIFEST_UNKNOWN"), "404 MANIFEST_UNKNOWN"},
		{"ratelimit", statusIs(429, "TOOMANYREQUESTS"), "429 TOOMANYREQUESTS"},
		{"server-error", statusIs(503, "UNAVAILABLE"), "503 UNAVAILABLE"},
		{"manifest-platform", func(err error) bool { return err != nil && strings.Contains(err.Error(), "no child with platform") }, "no child with platform"},
		{"blob-corrupt", func(err error) bool {
			return err != nil && strings.Contains(err.Error(), "error verifying sha256 checksum")
		}, "a digest mismatch"},
	} {
		t.Run(tt.scenario, func(t *testing.T) {
			s := mustScenario(t, tt.scenario)
			_, err := pull(t, shared.Transport(), s)
			if !tt.check(err) {
				t.Errorf("pull(%s) error = %v, want %s", s.Image, err, tt.want)
			}
		})
	}
}

func isNotFound(err error) bool {
	var e *net.DNSError
	return errors.As(err, &e) && e.IsNotFound
}

func isRefused(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection refused")
}

// statusIs checks for a registry error answered with code and carrying the
// registry error code want ("" for any).
func statusIs(code int, want string) func(error) bool {
	return func(err error) bool {
		var e *transport.Error
		if !errors.As(err, &e) || e.StatusCode != code {
			return false
		}
		if want == "" {
			return true
		}
		for _, d := range e.Errors {
			if string(d.Code) == want {
				return true
			}
		}
		return false
	}
}

func TestDNS(t *testing.T) {
	a := shared.Addrs
	server := func(addr netip.Addr) string { return netip.AddrPortFrom(addr, uint16(shared.DNSPort)).String() }
	for _, tt := range []struct {
		name, server, qname string
		qtype               uint16
		wantRcode           int
		wantAnswer          []string // "owner TYPE value"
	}{
		{"registry", server(a.DNS), "registry.lab.test", dns.TypeA, dns.RcodeSuccess, []string{"registry.lab.test. A " + a.Registry.String()}},
		{"registry AAAA is empty", server(a.DNS), "registry.lab.test", dns.TypeAAAA, dns.RcodeSuccess, nil},
		{"case-insensitive", server(a.DNS), "ReGistry.Lab.Test", dns.TypeA, dns.RcodeSuccess, []string{"registry.lab.test. A " + a.Registry.String()}},
		{"auth", server(a.DNS), "auth.lab.test", dns.TypeA, dns.RcodeSuccess, []string{"auth.lab.test. A " + a.Auth.String()}},
		{"blob", server(a.DNS), "blob.lab.test", dns.TypeA, dns.RcodeSuccess, []string{"blob.lab.test. A " + a.Blob.String()}},
		{"private zone CNAME chain", server(a.DNS), "privreg.lab.test", dns.TypeA, dns.RcodeSuccess, []string{
			"privreg.lab.test. CNAME privreg.privatelink.lab.test.",
			"privreg.privatelink.lab.test. CNAME privreg.cloudapp.lab.test.",
			"privreg.cloudapp.lab.test. A " + shared.PublicAddr.String(),
		}},
		{"nxdomain", server(a.DNS), "nx.lab.test", dns.TypeA, dns.RcodeNameError, nil},
		{"hosts-only name is not in DNS", server(a.DNS), "hostsonly.lab.test", dns.TypeA, dns.RcodeNameError, nil},
		{"refused name to dead address", server(a.DNS), "refused.lab.test", dns.TypeA, dns.RcodeSuccess, []string{"refused.lab.test. A " + a.Dead.String()}},
		{"split on first server", server(a.DNS), "split.lab.test", dns.TypeA, dns.RcodeSuccess, []string{"split.lab.test. A " + a.Registry.String()}},
		{"split on second server", server(a.DNS2), "split.lab.test", dns.TypeA, dns.RcodeSuccess, []string{"split.lab.test. A " + a.Mirror.String()}},
		{"second server agrees elsewhere", server(a.DNS2), "registry.lab.test", dns.TypeA, dns.RcodeSuccess, []string{"registry.lab.test. A " + a.Registry.String()}},
		{"outside the zone", server(a.DNS), "example.com", dns.TypeA, dns.RcodeRefused, nil},
	} {
		for _, network := range []string{"udp", "tcp"} {
			t.Run(tt.name+"/"+network, func(t *testing.T) {
				c := &dns.Client{Net: network, Timeout: 5 * time.Second}
				m := new(dns.Msg)
				m.SetQuestion(dns.Fqdn(tt.qname), tt.qtype)
				resp, _, err := c.ExchangeContext(t.Context(), m, tt.server)
				if err != nil {
					t.Fatalf("query %s %s at %s: %v", tt.qname, dns.TypeToString[tt.qtype], tt.server, err)
				}
				if resp.Rcode != tt.wantRcode {
					t.Errorf("query %s rcode = %s, want %s", tt.qname, dns.RcodeToString[resp.Rcode], dns.RcodeToString[tt.wantRcode])
				}
				var got []string
				for _, rr := range resp.Answer {
					switch rr := rr.(type) {
					case *dns.A:
						got = append(got, rr.Hdr.Name+" A "+rr.A.String())
					case *dns.CNAME:
						got = append(got, rr.Hdr.Name+" CNAME "+rr.Target)
					default:
						got = append(got, rr.String())
					}
				}
				if diff := cmp.Diff(tt.wantAnswer, got); diff != "" {
					t.Errorf("query %s answer (-want +got):\n%s", tt.qname, diff)
				}
			})
		}
	}
}

func TestDeadDNS(t *testing.T) {
	c := &dns.Client{Net: "udp", Timeout: 5 * time.Second}
	m := new(dns.Msg)
	m.SetQuestion("registry.lab.test.", dns.TypeA)
	addr := netip.AddrPortFrom(shared.Addrs.DeadDNS, uint16(shared.DNSPort)).String()
	_, _, err := c.ExchangeContext(t.Context(), m, addr)
	if !isRefused(err) {
		t.Errorf("query at dead DNS %s error = %v, want connection refused (what the dns-resolver-down scenario relies on)", addr, err)
	}
	// Go's own resolver, pointed at the dead server, fails without a
	// not-found answer.
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
	_, err = r.LookupHost(t.Context(), "registry.lab.test")
	t.Logf("Go resolver at the dead DNS: %v", err)
	var de *net.DNSError
	if !errors.As(err, &de) || de.IsNotFound || !isRefused(err) {
		t.Errorf("LookupHost at dead DNS error = %v, want a *net.DNSError (not found: false) that says connection refused", err)
	}
}

// TestCertificates dials each name with SNI and checks the certificate is
// what its scenario needs, verified against the lab CA.
func TestCertificates(t *testing.T) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(shared.CAPEM)
	for _, tt := range []struct {
		short string
		addr  netip.Addr
		check func(error) bool
		want  string
	}{
		{hRegistry, shared.Addrs.Registry, isNil, "valid"},
		{hAuth, shared.Addrs.Auth, isNil, "valid"},
		{hBlob, shared.Addrs.Blob, isNil, "valid"},
		{hMirror, shared.Addrs.Mirror, isNil, "valid"},
		{hHostsOnly, shared.Addrs.Registry, isNil, "valid"},
		{hSplit, shared.Addrs.Registry, isNil, "valid"},
		{hSplit, shared.Addrs.Mirror, isNil, "valid"},
		{hPrivReg, shared.Addrs.Registry, isNil, "valid"},
		{hUntrusted, shared.Addrs.Registry, func(err error) bool { var e x509.UnknownAuthorityError; return errors.As(err, &e) }, "unknown authority"},
		{hWrongName, shared.Addrs.Registry, func(err error) bool {
			var e x509.HostnameError
			return errors.As(err, &e) && e.Certificate.DNSNames[0] == hOtherName+"."+Domain
		}, "hostname error (cert for other.lab.test)"},
		{hExpired, shared.Addrs.Registry, func(err error) bool {
			var e x509.CertificateInvalidError
			return errors.As(err, &e) && e.Reason == x509.Expired
		}, "expired"},
	} {
		t.Run(tt.short+"@"+tt.addr.String(), func(t *testing.T) {
			d := &tls.Dialer{Config: &tls.Config{RootCAs: pool, ServerName: tt.short + "." + Domain}}
			conn, err := d.DialContext(t.Context(), "tcp", netip.AddrPortFrom(tt.addr, uint16(shared.HTTPSPort)).String())
			if err == nil {
				conn.Close()
			}
			if !tt.check(err) {
				t.Errorf("TLS to %s.%s: error %v, want %s", tt.short, Domain, err, tt.want)
			}
		})
	}
}

func isNil(err error) bool { return err == nil }

func TestPlatforms(t *testing.T) {
	ref, err := name.ParseReference(shared.Registry + "/multi/app:1.0")
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(ref, remote.WithTransport(shared.Transport()), remote.WithContext(t.Context()))
	if err != nil {
		t.Fatalf("reading index: %v", err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range m.Manifests {
		got = append(got, d.Platform.String())
	}
	if diff := cmp.Diff([]string{"linux/amd64", "linux/arm64"}, got); diff != "" {
		t.Errorf("index platforms (-want +got):\n%s", diff)
	}
	// Each platform's image pulls in full.
	for _, p := range got {
		s := Scenario{Image: ref.String(), Platform: p}
		if _, err := pull(t, shared.Transport(), s); err != nil {
			t.Errorf("pulling %s for %s: %v", ref, p, err)
		}
	}
}

// TestScenarioTable checks the table is complete and consistent: data, not
// branches.
func TestScenarioTable(t *testing.T) {
	want := []string{"healthy", "healthy-auth", "dns-nxdomain", "dns-resolver-down", "dns-private-zone", "route-refused",
		"tls-untrusted", "tls-name", "tls-expired", "auth-anonymous", "auth-bad-credentials", "authz-scope", "authz-denied",
		"manifest-unknown", "manifest-platform", "healthy-index", "auth-host-down", "blob-nxdomain", "blob-refused", "blob-corrupt",
		"ratelimit", "server-error", "mirror-fallback", "proxy", "proxy-down", "proxy-denied", "proxy-bypass", "hosts-entry", "split-answer"}
	var got []string
	for _, s := range shared.Scenarios {
		got = append(got, s.Name)
		t.Run(s.Name, func(t *testing.T) {
			if _, err := name.ParseReference(s.Image, name.StrictValidation); err != nil {
				t.Errorf("Image %q: %v", s.Image, err)
			}
			if _, err := v1.ParsePlatform(s.Platform); err != nil || s.Platform == "" {
				t.Errorf("Platform %q: %v", s.Platform, err)
			}
			if s.Description == "" {
				t.Error("Description is empty")
			}
			e := s.Expect
			if e.OK {
				if e.Layer != verdict.LayerNone || e.Cause != "" || e.Role != "" || e.Endpoint != "" {
					t.Errorf("OK expectation carries failure fields: %+v", e)
				}
			} else {
				if got := verdict.LayerOf(e.Cause); got != e.Layer || !e.Layer.Valid() {
					t.Errorf("LayerOf(%q) = %q, want %q", e.Cause, got, e.Layer)
				}
				wantPort := fmt.Sprint(shared.HTTPSPort)
				if e.Role == verdict.RoleProxy {
					wantPort = strings.TrimPrefix(e.Endpoint[strings.LastIndexByte(e.Endpoint, ':'):], ":")
					if wantPort != fmt.Sprint(shared.ProxyPort) && wantPort != fmt.Sprint(shared.DenyProxyPort) {
						t.Errorf("proxy Endpoint %q is not on a lab proxy port", e.Endpoint)
					}
				}
				if _, port, err := net.SplitHostPort(e.Endpoint); err != nil || port != wantPort {
					t.Errorf("Endpoint %q is not host:%s", e.Endpoint, wantPort)
				}
				if e.Role == verdict.RoleNone {
					t.Error("Role is empty")
				}
			}
			for _, f := range []string{"etc/resolv.conf", "etc/hosts", "etc/ssl/certs/ca-certificates.crt"} {
				if _, err := os.Stat(filepath.Join(s.Root, f)); err != nil {
					t.Errorf("root file: %v", err)
				}
			}
			if (s.Username == "") != (s.Password == "") {
				t.Errorf("Username %q with password set %t", s.Username, s.Password != "")
			}
		})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scenario names (-want +got):\n%s", diff)
	}
}

// TestHealthyScenariosPull pulls every OK scenario the way the node would
// at its core (the lab transport knows the hosts-entry name; it ignores
// mirrors), proving the registry behind each name serves the image.
func TestHealthyScenariosPull(t *testing.T) {
	for _, s := range shared.Scenarios {
		if !s.Expect.OK {
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			if _, err := pull(t, shared.Transport(), s); err != nil {
				t.Errorf("pull(%s): %v", s.Image, err)
			}
		})
	}
}
