package redact

import (
	"bytes"
	"encoding/base64"
	"net/url"
	"strings"
)

// Marker replaces every secret value.
const Marker = "REDACTED"

// MaxText bounds the text String reads; the rest is cut. Output of pullpath
// never needs more of one message or body than this.
const MaxText = 64 << 10

// secretKeys are keys whose value is a secret when written key=value or
// "key":"value" (compared in lower case).
var secretKeys = set(
	"password", "passwd", "pwd", "pass", "token", "access_token", "refresh_token", "id_token",
	"identitytoken", "identity_token", "registrytoken", "registry_token", "secret", "client_secret",
	"auth", "sig", "signature", "x-amz-signature", "x-amz-credential", "x-amz-security-token",
	"x-goog-signature", "x-goog-credential", "googleaccessid", "awsaccesskeyid", "se", "st",
	"skoid", "sktid", "sk", "apikey", "api_key", "key", "policy", "key-pair-id", "expires",
	"x-amz-date", "signatureprovided", "credential", "session_token", "sessiontoken", "code",
)

// headerKeys are header names whose value is a secret after "Name:" (as in
// a dumped request or Go's header map).
var headerKeys = set(
	"authorization", "proxy-authorization", "cookie", "set-cookie", "x-amz-security-token",
	"x-registry-auth", "x-registry-token", "x-auth-token", "x-api-key",
)

// schemeHeaders keep their first word (the scheme: Bearer, Basic) and drop
// the credential after it.
var schemeHeaders = set("authorization", "proxy-authorization")

// cookieHeaders' whole value is secret, up to the end of the header.
var cookieHeaders = set("cookie", "set-cookie")

// xmlSecrets are elements of S3/GCS/Azure error bodies whose text is secret.
var xmlSecrets = set(
	"signatureprovided", "awsaccesskeyid", "stringtosign", "stringtosignbytes", "canonicalrequest",
	"canonicalrequestbytes", "accesskeyid", "signature", "credential", "securitytoken",
	"x-amz-security-token", "password", "token", "authorizationheader", "googleaccessid",
)

// awsKeyPrefixes start AWS access key ids (AKIA long-term, ASIA temporary, ...).
var awsKeyPrefixes = set("akia", "asia", "aida", "aroa", "agpa", "anpa", "anva", "aipa", "abia", "acca")

func set(ks ...string) map[string]bool {
	m := make(map[string]bool, len(ks))
	for _, k := range ks {
		m[k] = true
	}
	return m
}

// keepQuery are query keys whose value is no secret and helps a reader
// (the ?ns= of a mirror request, a token request's service and scope).
var keepQuery = set("ns", "service", "scope")

// URL returns u's text with every query value except ns, service and scope
// replaced by Marker, user information replaced, and no fragment: signed
// storage URLs (sig=, se=, X-Amz-Signature=) and token requests carry
// credentials there.
func URL(u *url.URL) string {
	c := *u
	if c.User != nil {
		c.User = url.User(Marker)
	}
	if c.RawQuery != "" {
		parts := strings.Split(c.RawQuery, "&")
		for i, p := range parts {
			k, v, _ := strings.Cut(p, "=")
			if p == Marker {
				continue
			}
			if !keepQuery[strings.ToLower(k)] {
				v = Marker
			} else {
				v = String(v)
			}
			parts[i] = k + "=" + v
		}
		c.RawQuery = strings.Join(parts, "&")
	}
	c.Fragment = ""
	c.RawFragment = ""
	return c.String()
}

// Query returns raw without user information and fragment, and with its
// whole query string replaced by Marker unless it is only a mirror's ?ns=.
// Text that is not a URL is cut at its first '?' or '#'.
func Query(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if i := strings.IndexAny(raw, "?#"); i >= 0 {
			return String(raw[:i])
		}
		return String(raw)
	}
	u.User = nil
	if u.RawQuery != "" {
		q := u.Query()
		if ns := q.Get("ns"); ns != "" && len(q) == 1 && len(q["ns"]) == 1 {
			u.RawQuery = url.Values{"ns": {ns}}.Encode()
		} else {
			u.RawQuery = Marker
		}
	}
	u.Fragment = ""
	u.RawFragment = ""
	out := u.String()
	if i := strings.IndexByte(out, '?'); i >= 0 {
		return String(out[:i]) + out[i:]
	}
	return String(out)
}

// Error returns err with its text redacted; errors.Is and errors.As still
// see the original chain. A nil err stays nil.
func Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if r := String(msg); r != msg {
		return &redactedError{msg: r, err: err}
	}
	return err
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// String removes secrets from free text (see the package comment for the
// shapes). Text without a secret is returned as it is, without a copy.
func String(s string) string {
	s = capText(s, MaxText)
	l := lowerASCII(s)
	r := rewriter{s: s}
	i := 0
	for i < len(s) {
		c := l[i]
		switch {
		case c == 'h' && (strings.HasPrefix(l[i:], "https://") || strings.HasPrefix(l[i:], "http://")):
			i = r.url(l, i)
			continue
		case c == '<' && i+1 < len(s) && isAlnum(l[i+1]):
			if j, ok := r.xmlElement(l, i); ok {
				i = j
				continue
			}
		case isAlnum(c) && wordStart(l, i):
			i = r.word(l, i)
			continue
		}
		i++
	}
	return r.done()
}

// rewriter copies s with replacements, lazily: nothing is copied until the
// first replacement.
type rewriter struct {
	s       string
	b       strings.Builder
	last    int
	changed bool
}

func (r *rewriter) replace(from, to int) {
	if !r.changed {
		r.b.Grow(len(r.s))
		r.changed = true
	}
	r.b.WriteString(r.s[r.last:from])
	r.b.WriteString(Marker)
	r.last = to
}

func (r *rewriter) replaceWith(from, to int, with string) {
	if !r.changed {
		r.b.Grow(len(r.s))
		r.changed = true
	}
	r.b.WriteString(r.s[r.last:from])
	r.b.WriteString(with)
	r.last = to
}

func (r *rewriter) done() string {
	if !r.changed {
		return r.s
	}
	r.b.WriteString(r.s[r.last:])
	return r.b.String()
}

// url redacts the query and user information of the URL at i and returns
// the index after it.
func (r *rewriter) url(l string, i int) int {
	s := r.s
	end := i + strings.Index(l[i:], "//") + 2
	if end < len(s) && s[end] == '[' {
		// An IPv6 literal host ([2001:db8::1]:5000): its brackets are part
		// of the URL, where elsewhere a bracket ends it.
		if k := strings.IndexByte(s[end:], ']'); k > 0 && isIPv6Literal(s[end+1:end+k]) {
			end += k + 1
		}
	}
	for end < len(s) && !urlStop(l[end]) {
		end++
	}
	for end > i && strings.IndexByte(":.,;", s[end-1]) >= 0 {
		end--
	}
	raw := s[i:end]
	if strings.ContainsAny(raw, "?@#") {
		if u, err := url.Parse(raw); err == nil && u.Host != "" {
			already := u.RawQuery == Marker && u.User == nil && u.Fragment == ""
			if !already && (u.RawQuery != "" || u.User != nil || u.Fragment != "") {
				if rep := URL(u); rep != raw {
					r.replaceWith(i, end, rep)
				}
			}
		} else if q := strings.IndexByte(raw, '?'); q >= 0 && raw[q+1:] == Marker {
			// Already redacted.
		} else if q := strings.IndexByte(raw, '?'); q >= 0 {
			r.replaceWith(i, end, raw[:q+1]+Marker)
		} else if a := strings.IndexByte(raw, '@'); a >= 0 {
			r.replaceWith(i, end, raw[:strings.Index(raw, "//")+2]+Marker+raw[a:])
		}
	}
	return end
}

// xmlElement redacts the text of <Name>text</Name> when Name is secret.
func (r *rewriter) xmlElement(l string, i int) (int, bool) {
	j := i + 1
	for j < len(l) && (isAlnum(l[j]) || l[j] == '-' || l[j] == '_') {
		j++
	}
	if j >= len(l) || l[j] != '>' || !xmlSecrets[l[i+1:j]] {
		return 0, false
	}
	k := j + 1
	v := k
	for v < len(l) && l[v] != '<' {
		v++
	}
	if v > k {
		r.replace(k, v)
	}
	return v, true
}

// word handles a word starting at i: an AWS key id, a credential after a
// Bearer/Basic scheme word, a JWT-shaped or Basic base64 token, or a
// secret key=value pair. It returns the index after what it consumed.
func (r *rewriter) word(l string, i int) int {
	s := r.s
	// The run of token characters from i (keys, base64, JWT segments).
	j := i
	for j < len(s) && (isTokenByte(s[j]) || s[j] == '.') {
		j++
	}
	run := s[i:j]
	// An AWS access key id: AKIA/ASIA... and 16 upper-case letters or digits.
	if len(run) >= 20 && awsKeyPrefixes[l[i:i+4]] && isAWSKeyID(s[i:i+20]) && (len(run) == 20 || !isAlnum(s[i+20])) {
		r.replace(i, i+20)
		return i + 20
	}
	// Bearer / Basic followed by a credential.
	if k := schemeEnd(l, i); k > 0 {
		if v := credentialEnd(s, k); v > k {
			r.replace(k, v)
			return v
		}
		return k
	}
	if isJWTShaped(run) || isBasicBase64(strings.TrimRight(run, ".")) {
		r.replace(i, i+len(strings.TrimRight(run, ".")))
		return j
	}
	// key=value, "key":"value", Header: value.
	k := i
	for k < len(l) && (isAlnum(l[k]) || l[k] == '_' || l[k] == '-') {
		k++
	}
	key := l[i:k]
	if v, ok := r.pair(l, key, k); ok {
		return v
	}
	if k == i {
		return i + 1
	}
	return k
}

// pair redacts the value after key when key names a secret; k is the index
// after the key. It reports the index after the value.
func (r *rewriter) pair(l, key string, k int) (int, bool) {
	s := r.s
	if k >= len(s) || !(secretKeys[key] || headerKeys[key]) {
		return 0, false
	}
	keyText := s[k-len(key) : k]
	quotedKey := false
	if s[k] == '"' || s[k] == '\'' || s[k] == '\\' {
		// "key": or \"key\": in JSON or escaped JSON.
		q := k
		for q < len(s) && (s[q] == '"' || s[q] == '\'' || s[q] == '\\') {
			q++
		}
		if q < len(s) && s[q] == ':' {
			k, quotedKey = q, true
		} else {
			return 0, false
		}
	}
	switch {
	case s[k] == '=':
	case s[k] == ':' && (quotedKey || headerKeys[key]):
	default:
		return 0, false
	}
	k++
	for k < len(s) && (s[k] == ' ' || s[k] == '"' || s[k] == '\'' || s[k] == '\\' || s[k] == '[' || s[k] == '\t') {
		k++
	}
	if cookieHeaders[key] {
		// The whole cookie header value, up to the end of the header.
		v := k
		for v < len(s) && s[v] != '\n' && s[v] != '\r' && s[v] != ']' && s[v] != '"' {
			v++
		}
		if v > k {
			r.replace(k, v)
		}
		return v, true
	}
	if schemeHeaders[key] {
		// Keep the scheme word, drop the credential.
		w := k
		for w < len(s) && isAlnum(s[w]) {
			w++
		}
		if !quotedKey && keyText == key && w < len(s) && s[w] == ' ' && isProseWord(s[k:w]) {
			// "may require authorization: server message: …" (containerd's
			// and Docker's pull-access message) is prose, not a header: the
			// key is in lower case (as HTTP/2 dumps print it too) but the
			// word after it is a plain lower-case word that is no
			// authentication scheme, and a credential follows none.
			return 0, false
		}
		// Only a scheme word is kept: "Authorization: sekret9Token then"
		// carries its credential first.
		switch {
		case w == k || !authSchemes[strings.ToLower(s[k:w])]:
		case w < len(s) && (s[w] == ' ' || s[w] == '+'):
			k = w + 1
		case strings.HasPrefix(s[w:], "%20"):
			k = w + 3
		}
	}
	v := k
	for v < len(s) && !valueStop(s[v]) {
		v++
	}
	if v > k {
		r.replace(k, v)
	}
	return v, true
}

// authSchemes are the HTTP authentication schemes (the IANA registry, and
// AWS's) in lower case.
var authSchemes = set("basic", "bearer", "digest", "negotiate", "ntlm", "token", "hoba", "mutual",
	"vapid", "scram", "aws4", "privatetoken", "dpop", "gnap", "concealed", "oauth")

// isProseWord reports whether w is a lower-case word of letters only that
// is no authentication scheme.
func isProseWord(w string) bool {
	if w == "" || authSchemes[w] {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// schemeEnd returns the index of the credential after a "Bearer " or
// "Basic " scheme word at i (also "Bearer+", "Bearer%20"), or 0.
func schemeEnd(l string, i int) int {
	var n int
	switch {
	case strings.HasPrefix(l[i:], "bearer"):
		n = i + len("bearer")
	case strings.HasPrefix(l[i:], "basic"):
		n = i + len("basic")
	default:
		return 0
	}
	switch {
	case strings.HasPrefix(l[n:], "%20"):
		return n + 3
	case n < len(l) && (l[n] == ' ' || l[n] == '+' || l[n] == '\t'):
		return n + 1
	}
	return 0
}

// credentialEnd returns the end of the credential starting at k, or k when
// what follows is no credential: a challenge's auth-param (realm="...",
// error=...), or a plain lower-case word of prose ("Basic authentication").
func credentialEnd(s string, k int) int {
	v := k
	for v < len(s) && (isTokenByte(s[v]) || s[v] == '.' || s[v] == '%') {
		v++
	}
	val := s[k:v]
	if len(val) < 8 {
		return k
	}
	if eq := strings.IndexByte(val, '='); eq > 0 && isParamKey(val[:eq]) {
		// key= followed by a quote or more token text: an auth-param, not
		// base64 padding (which only ends a value).
		if eq+1 == len(val) && v < len(s) && s[v] == '"' || eq+1 < len(val) && val[eq+1] != '=' {
			return k
		}
	}
	if isLowerWord(val) {
		return k
	}
	return v
}

func isParamKey(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func isLowerWord(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < 'a' || v[i] > 'z' {
			return false
		}
	}
	return true
}

func isAWSKeyID(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// isJWTShaped reports whether run looks like a JWT (eyJ... with two dots)
// or another xxx.yyy.zzz token of three long base64url segments; host
// names and versions do not (their labels are short or have no digits).
func isJWTShaped(run string) bool {
	run = strings.TrimRight(run, ".")
	dots := strings.Count(run, ".")
	if dots < 2 {
		return false
	}
	if strings.HasPrefix(run, "eyJ") && len(run) >= 20 {
		return true
	}
	if dots != 2 {
		return false
	}
	for seg := range strings.SplitSeq(run, ".") {
		if len(seg) < 16 || !isBase64URL(seg) || !mixed(seg) {
			return false
		}
	}
	return true
}

// isBasicBase64 reports whether run is the base64 of user:password: it
// decodes to printable text with a colon inside.
func isBasicBase64(run string) bool {
	if len(run) < 8 || len(run) > 1024 || !mixed(run) {
		return false
	}
	for i := 0; i < len(run); i++ {
		if c := run[i]; !(isAlnum(c) || c == '+' || c == '/' || c == '=' || c == '-' || c == '_') {
			return false
		}
	}
	var buf [768]byte
	src := []byte(run)
	n, ok := 0, false
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		var err error
		if n, err = enc.Decode(buf[:], src); err == nil {
			ok = true
			break
		}
	}
	if !ok {
		return false
	}
	dec := buf[:n]
	colon := bytes.IndexByte(dec, ':')
	if colon <= 0 || colon == len(dec)-1 {
		return false
	}
	for _, c := range dec {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// mixed reports whether s has a digit, or both upper and lower case: the
// look of generated secrets rather than words.
func mixed(s string) bool {
	var up, low, dig bool
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z':
			up = true
		case c >= 'a' && c <= 'z':
			low = true
		case c >= '0' && c <= '9':
			dig = true
		}
	}
	return dig || (up && low)
}

func isBase64URL(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(isAlnum(c) || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// isIPv6Literal reports whether h can be the inside of a URL's [host]: hex
// digits, colons and dots (an embedded IPv4), then maybe a %zone.
func isIPv6Literal(h string) bool {
	addr, zone, _ := strings.Cut(h, "%")
	if addr == "" {
		return false
	}
	for i := 0; i < len(addr); i++ {
		c := addr[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == ':' || c == '.') {
			return false
		}
	}
	for i := 0; i < len(zone); i++ {
		if c := zone[i]; !(isAlnum(c) || c == '-' || c == '_' || c == '.' || c == '%') {
			return false
		}
	}
	return true
}

func urlStop(c byte) bool {
	switch c {
	case ' ', '"', '\'', '<', '>', '`', ')', ']', '[', '\\', '|', '{', '}', '\n', '\t', '\r':
		return true
	}
	return false
}

func valueStop(c byte) bool {
	switch c {
	case ' ', '"', '\'', '&', ',', ';', '\n', '\t', '\r', '}', ']', ')', '>', '<', '\\':
		return true
	}
	return false
}

func isTokenByte(c byte) bool {
	return isAlnum(c) || c == '-' || c == '_' || c == '+' || c == '/' || c == '=' || c == '~'
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// wordStart reports whether position i of l starts a word.
func wordStart(l string, i int) bool {
	if i == 0 {
		return true
	}
	p := l[i-1]
	return !isAlnum(p) && p != '_' && p != '-' && p != '.' && p != '/' && p != '+' && p != '='
}

func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; c >= 'A' && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// capText cuts s to at most n bytes, on a UTF-8 boundary.
func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && s[len(s)-1]&0xC0 == 0x80 {
		s = s[:len(s)-1]
	}
	if len(s) > 0 && s[len(s)-1] >= 0xC0 {
		s = s[:len(s)-1]
	}
	return s
}
