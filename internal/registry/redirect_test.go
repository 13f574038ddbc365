package registry

import (
	"net/http"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/verdict"
)

func TestCheckRedirect(t *testing.T) {
	get := func(u string, hdr ...string) *http.Request {
		r, _ := http.NewRequest(http.MethodGet, u, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Set(hdr[i], hdr[i+1])
		}
		return r
	}
	post := func(u string) *http.Request {
		r, _ := http.NewRequest(http.MethodPost, u, strings.NewReader("password=x"))
		return r
	}
	plain := func(host string) bool { return host == "plain.example:5000" }
	first := get("https://r.example/v2/app/blobs/sha256:x")
	tests := []struct {
		name string
		req  *http.Request
		via  []*http.Request
		want string // cause, "" for allowed, "redirects" for the limit
	}{
		{"https to https", get("https://r.example/data", "Authorization", "Bearer t"), []*http.Request{first}, ""},
		{"https to http with a token", get("http://r.example/data", "Authorization", "Bearer t"), []*http.Request{first}, "transfer.downgrade"},
		{"https to http with a cookie", get("http://r.example/data", "Cookie", "s=1"), []*http.Request{first}, "transfer.downgrade"},
		{"https to http without credentials", get("http://cdn.example/data?sig=x"), []*http.Request{first}, ""},
		{"to a declared plain-http host", get("http://plain.example:5000/data", "Authorization", "Bearer t"), []*http.Request{first}, ""},
		{"token POST body to http", post("http://r.example/token"), []*http.Request{post("https://r.example/token")}, "transfer.downgrade"},
		{"token POST body to another host", post("https://evil.example/token"), []*http.Request{post("https://auth.example/token")}, "auth.token"},
		{"token POST body, same host", post("https://auth.example/v2/token"), []*http.Request{post("https://auth.example/token")}, ""},
		{"ten redirects", get("https://r.example/11"), make([]*http.Request, MaxRedirects), "redirects"},
	}
	check := CheckRedirect(plain, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := range tt.via {
				if tt.via[i] == nil {
					tt.via[i] = first
				}
			}
			err := check(tt.req, tt.via)
			var got string
			if ve, ok := verdict.AsError(err); ok {
				got = ve.Cause
			} else if err != nil && strings.Contains(err.Error(), "stopped after 10 redirects") {
				got = "redirects"
			} else if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("CheckRedirect(%s) = %q (%v), want %q", tt.req.URL, got, err, tt.want)
			}
		})
	}
}
