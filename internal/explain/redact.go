package explain

import (
	"net/url"
	"strings"
)

// redacted replaces every secret value.
const redacted = "REDACTED"

// redactURL returns u's text with every query value and any user
// information replaced: signed storage URLs (sig=, se=, X-Amz-Signature=)
// and token requests carry credentials in their query strings.
func redactURL(u *url.URL) string {
	c := *u
	if c.User != nil {
		c.User = url.User(redacted)
	}
	if c.RawQuery != "" {
		parts := strings.Split(c.RawQuery, "&")
		for i, p := range parts {
			k, _, _ := strings.Cut(p, "=")
			parts[i] = k + "=" + redacted
		}
		c.RawQuery = strings.Join(parts, "&")
	}
	c.Fragment = ""
	c.RawFragment = ""
	return c.String()
}

// secretKeys are keys whose value is a secret when written key=value or
// "key":"value" (lowercase).
var secretKeys = []string{
	"password", "passwd", "pwd", "token", "access_token", "refresh_token", "id_token",
	"identitytoken", "registrytoken", "secret", "client_secret", "auth", "sig", "signature",
	"x-amz-signature", "x-amz-credential", "x-amz-security-token", "x-goog-signature",
	"x-goog-credential", "se", "st", "skoid", "sktid", "sk", "apikey", "api_key", "key",
	"policy", "key-pair-id", "expires", "x-amz-date",
}

var secretKeySet = func() map[string]bool {
	m := make(map[string]bool, len(secretKeys))
	for _, k := range secretKeys {
		m[k] = true
	}
	return m
}()

// Redact removes secrets from free text: URL query strings and user
// information, Authorization header values (Bearer/Basic credentials),
// key=value and "key":"value" pairs whose key names a secret, and
// JWT-shaped tokens. It runs in one pass and never grows the secret.
func Redact(s string) string {
	s = capText(s, 4*MaxMessageBytes)
	l := lowerASCII(s)
	// Unchanged text is not copied: s[last:i] is pending, and the builder
	// is used only once something is replaced.
	var b strings.Builder
	last := 0
	changed := false
	replace := func(from, to int, with string) {
		if !changed {
			b.Grow(len(s))
			changed = true
		}
		b.WriteString(s[last:from])
		b.WriteString(with)
		last = to
	}
	i := 0
	for i < len(s) {
		c := l[i]
		// URLs: redact query and user information.
		if c == 'h' && (strings.HasPrefix(l[i:], "https://") || strings.HasPrefix(l[i:], "http://")) {
			end := i
			for end < len(s) && !urlStop(l[end]) {
				end++
			}
			for end > i && (s[end-1] == ':' || s[end-1] == '.' || s[end-1] == ',' || s[end-1] == ';') {
				end--
			}
			raw := s[i:end]
			if strings.ContainsAny(raw, "?@#") {
				if u, err := url.Parse(raw); err == nil && (u.RawQuery != "" || u.User != nil || u.Fragment != "") {
					replace(i, end, redactURL(u))
				} else if q := strings.IndexByte(raw, '?'); q >= 0 {
					replace(i, end, raw[:q+1]+redacted)
				}
			}
			i = end
			continue
		}
		// Authorization: Bearer|Basic <credential>.
		if (c == 'b') && wordStart(l, i) && (strings.HasPrefix(l[i:], "bearer ") || strings.HasPrefix(l[i:], "basic ")) {
			sp := strings.IndexByte(l[i:], ' ') + i + 1
			j := sp
			for j < len(s) && isTokenByte(s[j]) {
				j++
			}
			val := l[sp:j]
			if j-sp >= 8 && !strings.HasPrefix(val, "realm") && !strings.HasPrefix(val, "auth") {
				replace(sp, j, redacted)
				i = j
				continue
			}
		}
		// JWTs: eyJ... with two dots.
		if c == 'e' && wordStart(l, i) && strings.HasPrefix(s[i:], "eyJ") {
			j := i
			dots := 0
			for j < len(s) && (isTokenByte(s[j]) || s[j] == '.') {
				if s[j] == '.' {
					dots++
				}
				j++
			}
			if dots >= 2 && j-i >= 20 {
				replace(i, j, redacted)
				i = j
				continue
			}
		}
		// key=value, key: value after "authorization", "key":"value".
		if isAlnum(c) && wordStart(l, i) {
			j := i
			for j < len(l) && (isAlnum(l[j]) || l[j] == '_' || l[j] == '-') {
				j++
			}
			key := l[i:j]
			if j < len(s) && (s[j] == '=' || s[j] == '"' || s[j] == ':') && (secretKeySet[key] || key == "authorization") {
				k := j
				if k < len(s) && s[k] == '"' {
					k++
				}
				sep := k < len(s) && (s[k] == '=' || s[k] == ':')
				if sep && key == "authorization" || sep && s[k] == '=' || sep && k > j {
					k++
					for k < len(s) && (s[k] == ' ' && key == "authorization" || s[k] == '"') {
						k++
					}
					if key == "authorization" {
						// Keep the scheme word, drop the credential.
						w := k
						for w < len(s) && isAlnum(s[w]) {
							w++
						}
						if w < len(s) && s[w] == ' ' {
							k = w + 1
						}
					}
					v := k
					for v < len(s) && !valueStop(s[v]) {
						v++
					}
					if v > k {
						replace(k, v, redacted)
						i = v
						continue
					}
				}
			}
			i = j
			continue
		}
		i++
	}
	if !changed {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
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
	case ' ', '"', '\'', '&', ',', ';', '\n', '\t', '\r', '}', ']', ')', '>':
		return true
	}
	return false
}

func isTokenByte(c byte) bool {
	return isAlnum(c) || c == '-' || c == '_' || c == '+' || c == '/' || c == '=' || c == '~'
}

// wordStart reports whether position i of l starts a word.
func wordStart(l string, i int) bool {
	if i == 0 {
		return true
	}
	p := l[i-1]
	return !isAlnum(p) && p != '_' && p != '-'
}
