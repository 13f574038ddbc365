package explain

import (
	"net"
	"net/url"
	"strings"

	"github.com/pullpath/pullpath/internal/verdict"
)

// foundURL is one http(s) URL found in a message.
type foundURL struct {
	raw    string // as written, without surrounding quotes
	start  int    // byte offset in the message
	method string // HEAD, GET, POST... when a method precedes it
	u      *url.URL
}

// docHosts are hosts that messages cite as documentation, never as a
// failing endpoint.
var docHosts = map[string]bool{
	"aka.ms": true, "www.docker.com": true, "docs.docker.com": true, "docker.com": true,
	"learn.microsoft.com": true, "docs.microsoft.com": true, "docs.aws.amazon.com": true,
	"cloud.google.com": true, "kubernetes.io": true, "github.com": true, "docs.github.com": true,
	"access.redhat.com": true, "docs.gitlab.com": true, "goharbor.io": true, "errors.pkg.dev": true,
	"www.rfc-editor.org": true, "pkg.go.dev": true,
}

// findURLs returns every http(s) URL in s (l is its lowercase copy), in
// order. A URL ends at white space, a quote, a bracket, a comma or ": ".
func findURLs(s, l string) []foundURL {
	var out []foundURL
	off := 0
	for off < len(l) && len(out) < 32 {
		i := strings.Index(l[off:], "http")
		if i < 0 {
			break
		}
		i += off
		var rest string
		switch {
		case strings.HasPrefix(l[i:], "https://"):
			rest = l[i+8:]
		case strings.HasPrefix(l[i:], "http://"):
			rest = l[i+7:]
		default:
			off = i + 4
			continue
		}
		end := len(l) - len(rest)
		for end < len(l) {
			c := l[end]
			if c == ' ' || c == '"' || c == '\'' || c == '<' || c == '>' || c == '`' || c == ']' || c == ')' || c == '[' || c == ',' || c == '\\' || c == '|' || c == '}' || c == '{' {
				break
			}
			if c == ':' && (end+1 == len(l) || l[end+1] == ' ') {
				break
			}
			end++
		}
		raw := strings.TrimRight(s[i:end], ".;:")
		off = end
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			continue
		}
		f := foundURL{raw: raw, start: i, u: u, method: methodBefore(s[:i])}
		out = append(out, f)
	}
	return out
}

// methodBefore returns the HTTP method that directly precedes a URL
// (`Head "`, `GET `, `request to `).
func methodBefore(prefix string) string {
	p := strings.TrimRight(prefix, " \"'")
	j := len(p)
	for j > 0 && (p[j-1] >= 'A' && p[j-1] <= 'Z' || p[j-1] >= 'a' && p[j-1] <= 'z') {
		j--
	}
	w := strings.ToUpper(p[j:])
	switch w {
	case "HEAD", "GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS":
		return w
	}
	return ""
}

// hostOf returns the lowercase host of u without its port.
func hostOf(u *url.URL) string { return strings.ToLower(u.Hostname()) }

// isBlobPath reports whether a URL path is a blob download.
func isBlobPath(p string) bool {
	p = strings.ToLower(p)
	return strings.Contains(p, "/blobs/") || strings.Contains(p, "/registry-v2/") ||
		strings.Contains(p, "/docker/registry/v2/") || strings.Contains(p, "/artifacts-downloads/") ||
		strings.HasSuffix(p, "/blobs")
}

// isTokenPath reports whether a URL path is a token realm.
func isTokenPath(p string) bool {
	p = strings.ToLower(strings.TrimRight(p, "/"))
	switch {
	case strings.HasSuffix(p, "/token"), strings.HasSuffix(p, "/oauth2/token"),
		strings.HasSuffix(p, "/oauth2/exchange"), strings.HasSuffix(p, "/jwt/auth"),
		strings.HasSuffix(p, "/v2/auth"), strings.HasSuffix(p, "/service/token"),
		strings.HasSuffix(p, "/v2/token"), strings.HasSuffix(p, "/oauth/token"),
		strings.HasSuffix(p, "/api/v1/token"), strings.Contains(p, "/token/"),
		strings.HasSuffix(p, "/auth/token"), p == "/auth", p == "/v1/token":
		return true
	}
	return false
}

// authHosts are hosts that only serve tokens.
var authHosts = map[string]bool{
	"auth.docker.io": true, "auth.ipv6.docker.com": true, "login.microsoftonline.com": true,
	"oauth2.googleapis.com": true, "api.ecr.aws": true,
}

// blobHostSuffixes are storage and CDN hosts that registries redirect layer
// downloads to.
var blobHostSuffixes = []string{
	".blob.core.windows.net", ".blob.core.chinacloudapi.cn", ".blob.core.usgovcloudapi.net",
	".data.mcr.microsoft.com", ".mcr-msedge.net", ".cdn.mscr.io",
	".r2.cloudflarestorage.com", ".cloudfront.net", ".cloudflare.docker.com", ".cloudfront.docker.com",
	".storage.googleapis.com", ".githubusercontent.com", ".gitlab-static.net",
	".akamaized.net", ".fastly.net", ".azureedge.net",
}

var blobHosts = map[string]bool{
	"production.cloudflare.docker.com": true, "production.cloudfront.docker.com": true,
	"storage.googleapis.com": true, "pkg-containers.githubusercontent.com": true,
	"cdn.registry.gitlab-static.net": true, "cdn.quay.io": true, "mcr-0001.mcr-msedge.net": true,
	"docker-images-prod.s3.amazonaws.com": true,
}

// isBlobHost reports whether host is a known storage or CDN host that layer
// downloads are redirected to.
func isBlobHost(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "" {
		return false
	}
	if blobHosts[host] {
		return true
	}
	for _, suf := range blobHostSuffixes {
		if strings.HasSuffix(host, suf) {
			return true
		}
	}
	// <reg>.<region>.data.azurecr.io (and the sovereign clouds' forms).
	if i := strings.Index(host, ".data.azurecr."); i > 0 {
		return true
	}
	// cdn.quay.io, cdn01.quay.io ...
	if strings.HasPrefix(host, "cdn") && strings.HasSuffix(host, ".quay.io") {
		return true
	}
	// S3: the ECR starport layer bucket, Docker Hub's and registry.k8s.io's
	// buckets, and any bucket-style S3 host.
	if strings.Contains(host, "starport-layer-bucket") || strings.HasPrefix(host, "docker-images-prod") ||
		strings.HasPrefix(host, "prod-registry-k8s-io-") {
		return true
	}
	// Alibaba OSS buckets behind ACR.
	if strings.HasSuffix(host, ".aliyuncs.com") && strings.Contains(host, ".oss-") {
		return true
	}
	if (strings.HasSuffix(host, ".amazonaws.com") || strings.HasSuffix(host, ".amazonaws.com.cn")) &&
		(strings.Contains(host, ".s3.") || strings.Contains(host, ".s3-") || strings.HasPrefix(host, "s3.") || strings.HasPrefix(host, "s3-")) {
		return true
	}
	return false
}

// roleOfURL decides the role of the endpoint a URL points at.
func roleOfURL(u *url.URL) verdict.Role {
	h := hostOf(u)
	if q := strings.ToLower(u.RawQuery); strings.HasPrefix(q, "ns=") || strings.Contains(q, "&ns=") {
		// containerd adds ?ns=<upstream> only when it asks a mirror.
		return verdict.RoleMirror
	}
	switch {
	case isTokenPath(u.Path) || authHosts[h]:
		return verdict.RoleAuth
	case isBlobHost(h) || isBlobPath(u.Path):
		return verdict.RoleBlob
	}
	return verdict.RoleRegistry
}

// roleOfHost decides the role of a bare host name.
func roleOfHost(h string) verdict.Role {
	switch {
	case h == "":
		return verdict.RoleNone
	case authHosts[h]:
		return verdict.RoleAuth
	case isBlobHost(h):
		return verdict.RoleBlob
	}
	return verdict.RoleRegistry
}

// hostToken cleans a host[:port] token taken from a message and splits off
// the port. IPv6 addresses in brackets keep no brackets.
func hostToken(tok string) (host, port string) {
	tok = strings.Trim(tok, "\"'`()[],;")
	if tok == "" {
		return "", ""
	}
	if h, p, err := net.SplitHostPort(tok); err == nil {
		return strings.ToLower(h), p
	}
	if strings.HasPrefix(tok, "[") {
		return "", ""
	}
	if strings.Count(tok, ":") > 1 { // a bare IPv6 address
		return strings.ToLower(tok), ""
	}
	return strings.ToLower(strings.TrimSuffix(tok, ":")), ""
}

// validHost reports whether h looks like a host name or an IP address.
func validHost(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	if net.ParseIP(h) != nil {
		return true
	}
	dot := false
	for i := 0; i < len(h); i++ {
		c := h[i]
		if c == '.' {
			dot = true
		}
		if !isHostByte(c) {
			return false
		}
	}
	return dot || h == "localhost"
}

// isIP reports whether h is an IP address literal.
func isIP(h string) bool { return net.ParseIP(h) != nil }

// imageDomain returns the registry host of an image reference the way
// containerd resolves it: no domain, or docker.io/index.docker.io, means
// registry-1.docker.io.
func imageDomain(ref string) string {
	ref = strings.TrimSpace(ref)
	for _, p := range []string{"docker://", "https://", "http://", "oci://"} {
		ref = strings.TrimPrefix(ref, p)
	}
	if ref == "" {
		return ""
	}
	i := strings.IndexByte(ref, '/')
	if i < 0 {
		return "registry-1.docker.io"
	}
	d := ref[:i]
	if !strings.ContainsAny(d, ".:") && d != "localhost" {
		return "registry-1.docker.io"
	}
	d = strings.ToLower(d)
	if d == "docker.io" || d == "index.docker.io" {
		return "registry-1.docker.io"
	}
	if h, _, err := net.SplitHostPort(d); err == nil {
		return h
	}
	return d
}

// imagePort returns the port of an image reference's domain, or "".
func imagePort(ref string) string {
	ref = strings.TrimPrefix(strings.TrimSpace(ref), "docker://")
	i := strings.IndexByte(ref, '/')
	if i < 0 {
		return ""
	}
	if _, p, err := net.SplitHostPort(ref[:i]); err == nil {
		return p
	}
	return ""
}

// sameRegistry reports whether two hosts name the same registry, treating
// Docker Hub's aliases as one.
func sameRegistry(a, b string) bool {
	if a == b {
		return true
	}
	hub := func(h string) bool {
		return h == "docker.io" || h == "index.docker.io" || h == "registry-1.docker.io" || h == "registry.hub.docker.com"
	}
	return hub(a) && hub(b)
}

// validLabel reports whether h is a single DNS label (a short name the
// resolver was asked for, e.g. a proxy named "proxy").
func validLabel(h string) bool {
	if h == "" || len(h) > 63 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if !isAlnum(h[i]) && h[i] != '-' && h[i] != '_' {
			return false
		}
	}
	return true
}
