package redact

import (
	"errors"
	"io"
	"net/url"
	"strings"
	"testing"
)

const jwt = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJwdWxsZXIiLCJhY2Nlc3MiOltdfQ.SECRETsignatureAbc123_-xyz"

// TestStringRedacts lists every shape of secret the redactor must remove.
// Each input holds SECRET (or a value known to be one) and, where it
// matters, text that must survive.
func TestStringRedacts(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		secret string // must not survive
		keep   string // must survive
	}{
		{"bare bearer JWT", "Authorization failed for Bearer " + jwt + " at the registry", "signatureAbc", "at the registry"},
		{"bearer JWT payload kept today", "Bearer " + jwt, "eyJzdWIiOiJwdWxsZXIiLCJhY2Nlc3MiOltdfQ", "Bearer"},
		{"bearer opaque", "sent Bearer SECRETopaque123 to host", "SECRETopaque123", "to host"},
		{"bearer token starting with auth", "Bearer authSECRET9xQ2", "authSECRET9xQ2", "Bearer"},
		{"bearer token starting with realm", "Bearer realmSECRET9xQ2", "realmSECRET9xQ2", "Bearer"},
		{"basic token starting with auth", "Basic authX2VjcmV0OnBhc3M=", "authX2VjcmV0OnBhc3M=", "Basic"},
		{"lower-case header, raw token", "authorization: sekret9Token then", "sekret9Token", "authorization:"},
		{"lower-case header, bearer", "> authorization: Bearer opaqueSECRETvalue", "opaqueSECRETvalue", "authorization: Bearer"},
		{"go header map basic", "request headers: map[Authorization:[Basic dXNlcjpTRUNSRVQ=] User-Agent:[pullpath]]", "dXNlcjpTRUNSRVQ=", "User-Agent:[pullpath]"},
		{"go header map bearer", "map[Authorization:[Bearer " + jwt + "]]", "signatureAbc", "map[Authorization:[Bearer"},
		{"go header map cookie", "map[Cookie:[session=SECRETcookie; other=SECRET2] Accept:[*/*]]", "SECRET", "Accept:[*/*]"},
		{"dumped header", "Authorization: Basic dXNlcjpTRUNSRVQ=\r\nHost: r.example", "dXNlcjpTRUNSRVQ=", "Host: r.example"},
		{"proxy authorization", "Proxy-Authorization: Basic dXNlcjpTRUNSRVQ=", "dXNlcjpTRUNSRVQ=", "Proxy-Authorization: Basic"},
		{"bare basic base64", "the header held dXNlcjpTRUNSRVQ= for the pull", "dXNlcjpTRUNSRVQ=", "for the pull"},
		{"unpadded basic base64", "creds cHVsbGVyOlNFQ1JFVHB3 rejected", "cHVsbGVyOlNFQ1JFVHB3", "rejected"},
		{"url-encoded basic", "Authorization=Basic%20dXNlcjpTRUNSRVQ%3D&x=1", "dXNlcjpTRUNSRVQ", "x=1"},
		{"json auth field", `{"auths":{"r.example":{"auth":"dXNlcjpTRUNSRVQ="}}}`, "dXNlcjpTRUNSRVQ=", `"r.example"`},
		{"escaped json password", `{\"password\":\"SECRETpw\"}`, "SECRETpw", `password`},
		{"json password with space", `{"username": "puller", "password": "SECRETpw"}`, "SECRETpw", `"puller"`},
		{"form body", "grant_type=password&username=puller&password=SECRETpw&scope=repository:a:pull", "SECRETpw", "scope=repository:a:pull"},
		{"refresh token form", "grant_type=refresh_token&refresh_token=SECRETrt&service=r", "SECRETrt", "service=r"},
		{"access token json", `{"token":"SECRETtok","access_token":"SECRETat","expires_in":300}`, "SECRET", `"expires_in":300`},
		{"access token query", "GET https://auth.example/token?access_token=SECRETat&service=reg", "SECRETat", "service=reg"},
		{"jwt shaped not eyJ", "token AAAAbbbbCCCCdddd1234.EEEEffffGGGGhhhh5678.IIIIjjjjKKKKllll9012 expired", "AAAAbbbbCCCCdddd1234", "expired"},
		{"aws key id", "The AWS Access Key Id you provided AKIAIOSFODNN7SECRET1 does not exist", "AKIAIOSFODNN7SECRET1", "does not exist"},
		{"aws temp key id", "key ASIAY34FZKBOKMUTVV7A used", "ASIAY34FZKBOKMUTVV7A", "used"},
		{"s3 signature body", `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SignatureDoesNotMatch</Code><AWSAccessKeyId>AKIAIOSFODNN7SECRET1</AWSAccessKeyId><StringToSign>AWS4-HMAC-SHA256 SECRETsts</StringToSign><SignatureProvided>SECRETsig0123</SignatureProvided></Error>`, "SECRET", "SignatureDoesNotMatch"},
		{"x-amz-signature query", "Get \"https://b.s3.amazonaws.com/x?X-Amz-Credential=AKIAIOSFODNN7SECRET1%2F2026&X-Amz-Signature=SECRETsig\": EOF", "SECRET", "b.s3.amazonaws.com/x"},
		{"x-amz-signature bare", "X-Amz-Signature=SECRETsig X-Amz-Security-Token=SECRETtok", "SECRET", ""},
		{"azure sas", "https://acct.blob.core.windows.net/c/data?sv=2021&se=2026-01-01&sig=SECRETsig%3D&sp=r", "SECRETsig", "acct.blob.core.windows.net/c/data"},
		{"azure sas bare", "SAS token sv=2021&sig=SECRETsig%3D expired", "SECRETsig", "expired"},
		{"gcs signature", "https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4&X-Goog-Signature=SECRETsig", "SECRETsig", "storage.googleapis.com/b/o"},
		{"gcs bare", "X-Goog-Signature=SECRETsig", "SECRETsig", ""},
		{"set-cookie", "Set-Cookie: sid=SECRETsid; Path=/; HttpOnly\nServer: x", "SECRETsid", "Server: x"},
		{"user info", "POST https://puller:SECRETpw@r.example/oauth2/token", "SECRETpw", "r.example/oauth2/token"},
		{"user info in unparsable url", "POST https://puller:SECRETpw@r.exa mple", "SECRETpw", ""},
		{"yaml registry token header", "X-Registry-Auth: SECRETxra", "SECRETxra", "X-Registry-Auth:"},
		// Signed URLs and tokens in query strings, as a runtime's error quotes
		// them in the kubelet's event (Go's `Get "URL": cause`): every query
		// value goes, whatever its key, except ns, service and scope.
		{"event: azure sas", `failed to copy: httpReadSeeker: failed open: failed to do request: Get "https://myacr.blob.core.windows.net/x/y?sv=2020&sig=SECRETSIG&se=2026": dial tcp 10.0.0.9:443: i/o timeout`, "SECRETSIG", `Get "https://myacr.blob.core.windows.net/x/y?sv=REDACTED&sig=REDACTED&se=REDACTED": dial tcp 10.0.0.9:443: i/o timeout`},
		{"event: x-amz-signature", `Get "https://prod-us-east-1-starport-layer-bucket.s3.us-east-1.amazonaws.com/a/b?X-Amz-Security-Token=SECRETtok&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=ASIAY34FZKBOKMUTVV7A%2F20261129%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-SignedHeaders=host&X-Amz-Signature=SECRETsig": net/http: TLS handshake timeout`, "SECRET", "s3.us-east-1.amazonaws.com/a/b?"},
		{"event: x-amz credential", `Get "https://b.s3.amazonaws.com/a/b?X-Amz-Credential=ASIAY34FZKBOKMUTVV7A%2F20261129": EOF`, "ASIAY34FZKBOKMUTVV7A", `"https://b.s3.amazonaws.com/a/b?X-Amz-Credential=REDACTED": EOF`},
		{"event: x-goog-signature", `Get "https://storage.googleapis.com/artifacts.p.appspot.com/containers/images/sha256:ab?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential=SECRETcred%40p.iam.gserviceaccount.com&X-Goog-Signature=SECRETsig": dial tcp: i/o timeout`, "SECRET", "storage.googleapis.com/artifacts.p.appspot.com/containers/images/sha256:ab?"},
		{"event: cloudflare verify", `Get "https://production.cloudflare.docker.com/registry-v2/docker/registry/v2/blobs/sha256/ab/abc/data?verify=1764590000-SECRETverify%2Bsig": read: connection reset by peer`, "SECRETverify", "data?verify=REDACTED"},
		{"event: token in query", `Get "https://auth.example/token?scope=repository%3Ateam%2Fapp%3Apull&service=reg&access_token=SECRETat": EOF`, "SECRETat", "scope=repository%3Ateam%2Fapp%3Apull&service=reg&access_token=REDACTED"},
		{"event: unknown key", `Get "https://cdn.example/blob?exp=1764590000&hmac=SECREThmac": EOF`, "SECREThmac", "cdn.example/blob?exp=REDACTED&hmac=REDACTED"},
		{"event: ipv6 host", `Get "https://[2001:db8::1]:5000/blob?hmac=SECREThmac": dial tcp [2001:db8::1]:5000: i/o timeout`, "SECREThmac", `"https://[2001:db8::1]:5000/blob?hmac=REDACTED": dial tcp [2001:db8::1]:5000: i/o timeout`},
		{"event: ipv6 host with zone", `Get "https://[fe80::1%25eth0]/blob?hmac=SECREThmac": EOF`, "SECREThmac", "hmac=REDACTED"},
		{"event: bad escape in query", `Get "https://cdn.example/blob?sig=SECRET%zz": EOF`, "SECRET", `"https://cdn.example/blob?sig=REDACTED": EOF`},
		{"event: unparsable url", `Get "https://[::1/blob?sig=SECRET": EOF`, "SECRET", `"https://[::1/blob?sig=REDACTED": EOF`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := String(tt.in)
			if strings.Contains(got, tt.secret) {
				t.Errorf("String(%q) = %q, want %q removed", tt.in, got, tt.secret)
			}
			if !strings.Contains(got, Marker) {
				t.Errorf("String(%q) = %q, want a %s marker", tt.in, got, Marker)
			}
			if tt.keep != "" && !strings.Contains(got, tt.keep) {
				t.Errorf("String(%q) = %q, want %q kept", tt.in, got, tt.keep)
			}
		})
	}
}

// TestStringKeeps lists text with no secret: it must come back unchanged.
func TestStringKeeps(t *testing.T) {
	for _, in := range []string{
		`failed to fetch oauth token: unexpected status: 401 Unauthorized; Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/ubuntu:pull"`,
		`www-authenticate: Basic realm="Registry Realm"`,
		`Bearer error="invalid_token",error_description="The access token expired"`,
		`the registry asks for Basic authentication and the pull has none`,
		`failed to authorize: failed to fetch anonymous token: unexpected status from GET request to https://auth.example/token: 401 Unauthorized`,
		`dial tcp 10.0.0.5:443: i/o timeout`,
		`pulling image "myregistry12345678.azurecr.io/team/app:1.2.3": rpc error: code = Unknown`,
		`docker-images-prod.6aa30f8b08e16409b46e0173d6de2f56.r2.cloudflarestorage.com`,
		`sha256:2d4b2b2a0c1f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d`,
		`manifest unknown: Unauthorized access to team/app`,
		`https://mirror.example/v2/team/app/manifests/1?ns=docker.io`,
		`x509: certificate signed by unknown authority (possibly because of "crypto/rsa: verification error")`,
		`Get "https://r.example/v2/": net/http: TLS handshake timeout`,
		`ImagePullBackOff: Back-off pulling image "nginx:1.25"`,
		`pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed`,
	} {
		if got := String(in); got != in {
			t.Errorf("String(%q) = %q, want it unchanged", in, got)
		}
	}
}

func TestURL(t *testing.T) {
	tests := map[string]string{
		"https://a.blob.core.windows.net/c/data?se=2026&sig=SECRET":    "https://a.blob.core.windows.net/c/data?se=REDACTED&sig=REDACTED",
		"https://auth.example/token?scope=repository:a:pull&service=r": "https://auth.example/token?scope=repository:a:pull&service=r",
		"https://u:SECRET@r.example/v2/#frag":                          "https://REDACTED@r.example/v2/",
	}
	for in, want := range tests {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := URL(u); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestQuery(t *testing.T) {
	tests := map[string]string{
		"https://x.blob.core.windows.net/a/data?se=2026&sig=SECRET": "https://x.blob.core.windows.net/a/data?REDACTED",
		"https://user:pass@r.example/v2/":                           "https://r.example/v2/",
		"https://mirror/v2/a/manifests/1?ns=docker.io":              "https://mirror/v2/a/manifests/1?ns=docker.io",
		"https://r/v2/?ns=docker.io&X-Amz-Signature=abc":            "https://r/v2/?REDACTED",
		"::not a url?token=abc":                                     "::not a url",
	}
	for in, want := range tests {
		if got := Query(in); got != want {
			t.Errorf("Query(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestErrorKeepsChain(t *testing.T) {
	base := &url.Error{Op: "Get", URL: "https://x/?sig=SECRET", Err: io.ErrUnexpectedEOF}
	err := Error(base)
	if strings.Contains(err.Error(), "SECRET") {
		t.Errorf("Error(%v) = %q, want the signature removed", base, err)
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Error(%v) lost the chain", base)
	}
	var ue *url.Error
	if !errors.As(err, &ue) {
		t.Errorf("Error(%v) hides the *url.Error", base)
	}
	if Error(nil) != nil {
		t.Error("Error(nil) != nil")
	}
	plain := errors.New("dial tcp: i/o timeout")
	if Error(plain) != plain {
		t.Error("Error of a clean error should return it as it is")
	}
}

// TestStringBounded checks the redactor cuts huge input and stays linear.
func TestStringBounded(t *testing.T) {
	in := strings.Repeat("Bearer "+jwt+" password=x&", 100000)
	got := String(in)
	if len(got) > MaxText {
		t.Errorf("String of %d bytes returned %d, want at most %d", len(in), len(got), MaxText)
	}
	if strings.Contains(got, "signatureAbc") {
		t.Error("String of a huge input leaks")
	}
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"Bearer " + jwt, "map[Authorization:[Basic dXNlcjpwYXNz]]", "<SignatureProvided>x</SignatureProvided>", "https://u:p@h/?sig=x", "password=", "\"auth\":\"", "Basic%20"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		if len(s) <= MaxText && len(out) > len(s)+len(Marker)*(strings.Count(s, "=")+strings.Count(s, ":")+strings.Count(s, " ")+strings.Count(s, ">")+strings.Count(s, "&")+4) {
			t.Fatalf("String grew %d bytes to %d", len(s), len(out))
		}
		// A planted secret after a secret key never survives, whatever
		// precedes it.
		planted := s + " password=FUZZSECRET9"
		if strings.Contains(String(planted), "FUZZSECRET9") && len(planted) <= MaxText {
			t.Fatalf("String(%q) keeps the planted password", planted)
		}
	})
}

func TestKnown(t *testing.T) {
	k := NewKnown([]string{"opaque-token-value"}, [2]string{"puller", "s3cr3t pass/word"})
	in := strings.Join([]string{
		"token opaque-token-value echoed",
		"password s3cr3t pass/word echoed",
		"url s3cr3t+pass%2Fword echoed",
		"path s3cr3t%20pass%2Fword echoed",
		"basic cHVsbGVyOnMzY3IzdCBwYXNzL3dvcmQ= echoed",
		"b64 b3BhcXVlLXRva2VuLXZhbHVl echoed",
	}, "\n")
	got := k.String(in)
	for _, sec := range []string{"opaque-token-value", "s3cr3t", "cHVsbGVy", "b3BhcXVl"} {
		if strings.Contains(got, sec) {
			t.Errorf("Known.String kept %q:\n%s", sec, got)
		}
	}
	if strings.Count(got, "echoed") != 6 {
		t.Errorf("Known.String cut plain text:\n%s", got)
	}
	if short := NewKnown([]string{"abc"}); short.String("abc def") != "abc def" {
		t.Error("a secret shorter than 6 bytes must not be replaced")
	}
	var none *Known
	if none.String("Bearer "+jwt) == "Bearer "+jwt {
		t.Error("a nil Known must still redact by shape")
	}
}

// BenchmarkString measures the redactor on typical runtime error text with
// and without secrets.
func BenchmarkString(b *testing.B) {
	clean := strings.Repeat(`failed to pull and unpack image "myacr.azurecr.io/team/app:1.2": failed to resolve reference: failed to do request: Head "https://myacr.azurecr.io/v2/team/app/manifests/1.2": dial tcp 10.1.2.3:443: i/o timeout `, 20)
	dirty := strings.Repeat(`Get "https://x.blob.core.windows.net/a/data?se=2026&sig=abc%3D": 403; map[Authorization:[Bearer `+jwt+`]] password=hunter2 `, 20)
	for _, in := range []struct{ name, s string }{{"clean", clean}, {"secrets", dirty}} {
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(int64(len(in.s)))
			for b.Loop() {
				String(in.s)
			}
		})
	}
}
