package registry

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseChallenges(t *testing.T) {
	tests := []struct {
		name, in string
		want     []Challenge
	}{
		{"docker hub", `Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/ubuntu:pull"`,
			[]Challenge{{"bearer", map[string]string{"realm": "https://auth.docker.io/token", "service": "registry.docker.io", "scope": "repository:library/ubuntu:pull"}}}},
		{"ecr basic", `Basic realm="https://1234.dkr.ecr.us-east-1.amazonaws.com/",service="ecr.amazonaws.com"`,
			[]Challenge{{"basic", map[string]string{"realm": "https://1234.dkr.ecr.us-east-1.amazonaws.com/", "service": "ecr.amazonaws.com"}}}},
		{"quay two on one line", `Basic realm="quay.io", Bearer realm="https://quay.io/v2/auth",service="quay.io"`,
			[]Challenge{{"basic", map[string]string{"realm": "quay.io"}}, {"bearer", map[string]string{"realm": "https://quay.io/v2/auth", "service": "quay.io"}}}},
		{"insufficient scope with spaces", `Bearer realm = "https://r/token" , error="insufficient_scope", scope="repository:a:pull"`,
			[]Challenge{{"bearer", map[string]string{"realm": "https://r/token", "error": "insufficient_scope", "scope": "repository:a:pull"}}}},
		{"escaped quote", `Bearer realm="https://r/t\"x"`, []Challenge{{"bearer", map[string]string{"realm": `https://r/t"x`}}}},
		{"unterminated", `Bearer realm="https://r/t`, []Challenge{{"bearer", map[string]string{"realm": "https://r/t"}}}},
		{"bare scheme", `Negotiate`, []Challenge{{"negotiate", map[string]string{}}}},
		{"empty", ``, nil},
		{"garbage", `=== ,,, "`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseChallenges(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseChallenges(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func FuzzParseChallenges(f *testing.F) {
	for _, s := range []string{`Bearer realm="https://a/b",service="x"`, `Basic realm="q", Bearer realm="r"`, `"`, `a=b=c,,`, `Bearer realm="\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range ParseChallenges(s) {
			if c.Scheme == "" {
				t.Fatalf("ParseChallenges(%q) returned an empty scheme", s)
			}
		}
	})
}

func TestStatusCause(t *testing.T) {
	hdr := func(v string) http.Header { h := http.Header{}; h.Set("WWW-Authenticate", v); return h }
	tests := []struct {
		name      string
		err       StatusError
		anonymous bool
		manifest  bool
		want      string
	}{
		{"429", StatusError{Code: 429}, true, true, "registry.ratelimit"},
		{"toomanyrequests body", StatusError{Code: 403, Codes: []ErrorCode{{Code: "TOOMANYREQUESTS"}}}, true, true, "registry.ratelimit"},
		{"503", StatusError{Code: 503}, false, true, "registry.unavailable"},
		{"401 anonymous", StatusError{Code: 401}, true, true, "auth.no-credentials"},
		{"401 with creds", StatusError{Code: 401}, false, true, "auth.bad-credentials"},
		{"401 insufficient scope", StatusError{Code: 401, Header: hdr(`Bearer realm="x",error="insufficient_scope"`)}, false, true, "authz.denied"},
		{"403 denied", StatusError{Code: 403, Codes: []ErrorCode{{Code: "DENIED"}}}, false, true, "authz.denied"},
		{"403 acr firewall", StatusError{Code: 403, Codes: []ErrorCode{{Code: "DENIED", Message: "client with IP '1.2.3.4' is not allowed access. Refer https://aka.ms/acr/firewall to grant access."}}}, false, true, "authz.ip-denied"},
		{"404 manifest", StatusError{Code: 404, Codes: []ErrorCode{{Code: "MANIFEST_UNKNOWN"}}}, true, true, "manifest.unknown"},
		{"404 name", StatusError{Code: 404, Codes: []ErrorCode{{Code: "NAME_UNKNOWN"}}}, true, true, "manifest.name-unknown"},
		{"404 blob", StatusError{Code: 404}, true, false, "transfer.status"},
		{"418", StatusError{Code: 418}, true, true, "registry.protocol"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err.Header == nil {
				tt.err.Header = http.Header{}
			}
			if got := statusCause(&tt.err, tt.anonymous, tt.manifest); got != tt.want {
				t.Errorf("statusCause(%d %v) = %q, want %q", tt.err.Code, tt.err.Codes, got, tt.want)
			}
		})
	}
}

func TestReadErrorBody(t *testing.T) {
	codes, text := ReadErrorBody(strings.NewReader(`{"errors":[{"code":"denied","message":"requested access to the resource is denied"}]}`))
	if len(codes) != 1 || codes[0].Code != "DENIED" || text != "" {
		t.Errorf("ReadErrorBody(json) = %v, %q", codes, text)
	}
	codes, text = ReadErrorBody(strings.NewReader(`<?xml version="1.0"?><Error><Code>AccessDenied</Code></Error>`))
	if codes != nil || !strings.Contains(text, "AccessDenied") {
		t.Errorf("ReadErrorBody(xml) = %v, %q", codes, text)
	}
	_, text = ReadErrorBody(strings.NewReader(strings.Repeat("x", 1<<20)))
	if len(text) > 400 {
		t.Errorf("ReadErrorBody kept %d bytes of a huge body", len(text))
	}
}

func TestRedactURL(t *testing.T) {
	tests := map[string]string{
		"https://x.blob.core.windows.net/a/data?se=2026&sig=SECRET": "https://x.blob.core.windows.net/a/data?REDACTED",
		"https://user:pass@r.example/v2/":                           "https://r.example/v2/",
		"https://mirror/v2/a/manifests/1?ns=docker.io":              "https://mirror/v2/a/manifests/1?ns=docker.io",
		"https://r/v2/?ns=docker.io&X-Amz-Signature=abc":            "https://r/v2/?REDACTED",
		"::not a url?token=abc":                                     "::not a url",
	}
	for in, want := range tests {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
		if strings.Contains(RedactURL(in), "SECRET") || strings.Contains(RedactURL(in), "pass") {
			t.Errorf("RedactURL(%q) leaks a secret", in)
		}
	}
}

func TestSelectPlatform(t *testing.T) {
	index := []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[
	 {"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","size":10,"platform":{"os":"linux","architecture":"amd64"}},
	 {"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb","size":11,"platform":{"os":"linux","architecture":"arm64","variant":"v8"}}]}`)
	for p, want := range map[string]string{"linux/amd64": "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "linux/arm64": "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"} {
		d, _, err := SelectPlatform(index, p)
		if err != nil || d.Digest.String() != want {
			t.Errorf("SelectPlatform(%s) = %v, %v, want %s", p, d.Digest, err, want)
		}
	}
	_, offered, err := SelectPlatform(index, "linux/s390x")
	if err == nil || len(offered) != 2 {
		t.Errorf("SelectPlatform(linux/s390x) = %v, %v; want an error listing 2 platforms", offered, err)
	}
	if _, _, err := SelectPlatform([]byte("{"), "linux/amd64"); err == nil {
		t.Error("SelectPlatform(garbage) did not fail")
	}
}

func TestCredentialsDescribeHidesSecret(t *testing.T) {
	c := &Credentials{Username: "puller", Password: "hunter2", Source: "--password-stdin"}
	if d := c.Describe(); strings.Contains(d, "hunter2") || !strings.Contains(d, "puller") {
		t.Errorf("Describe() = %q", d)
	}
	var none *Credentials
	if !none.Anonymous() || none.Describe() != "anonymous" {
		t.Error("nil credentials are not anonymous")
	}
}
