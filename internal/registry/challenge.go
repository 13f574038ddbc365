package registry

import (
	"strings"
)

// Challenge is one parsed WWW-Authenticate challenge.
type Challenge struct {
	Scheme string            // lower case: "bearer", "basic"
	Params map[string]string // keys lower case: realm, service, scope, error
}

// maxChallengeLen bounds the header we are willing to parse.
const maxChallengeLen = 16 << 10

// ParseChallenges parses a WWW-Authenticate header value (RFC 7235) that may
// hold several challenges, e.g. Quay's `Basic realm="quay.io", Bearer
// realm="https://quay.io/v2/auth",service="quay.io"`. Malformed parts are
// skipped; it never fails and runs in linear time.
func ParseChallenges(header string) []Challenge {
	if len(header) > maxChallengeLen {
		header = header[:maxChallengeLen]
	}
	var out []Challenge
	p := &parser{s: header}
	for {
		p.skipSpaceAndCommas()
		if p.done() {
			return out
		}
		scheme := p.token()
		if scheme == "" {
			p.i++ // not a token character: skip it
			continue
		}
		c := Challenge{Scheme: strings.ToLower(scheme), Params: map[string]string{}}
		// auth-params: key=value pairs separated by commas, until the next
		// bare token that is not followed by '='.
		for {
			p.skipSpace()
			save := p.i
			key := p.token()
			if key == "" {
				// token68 or stray characters: consume up to the next comma.
				for !p.done() && p.s[p.i] != ',' {
					p.i++
				}
				if p.done() {
					break
				}
				p.i++
				continue
			}
			p.skipSpace()
			if p.done() || p.s[p.i] != '=' {
				// The next challenge begins.
				p.i = save
				break
			}
			p.i++ // '='
			p.skipSpace()
			var val string
			if !p.done() && p.s[p.i] == '"' {
				val = p.quoted()
			} else {
				val = p.token()
			}
			c.Params[strings.ToLower(key)] = val
			p.skipSpace()
			if !p.done() && p.s[p.i] == ',' {
				p.i++
				continue
			}
			break
		}
		out = append(out, c)
	}
}

// Bearer returns the first Bearer challenge, if any.
func Bearer(cs []Challenge) (Challenge, bool) { return find(cs, "bearer") }

// Basic returns the first Basic challenge, if any.
func Basic(cs []Challenge) (Challenge, bool) { return find(cs, "basic") }

func find(cs []Challenge, scheme string) (Challenge, bool) {
	for _, c := range cs {
		if c.Scheme == scheme {
			return c, true
		}
	}
	return Challenge{}, false
}

type parser struct {
	s string
	i int
}

func (p *parser) done() bool { return p.i >= len(p.s) }

func (p *parser) skipSpace() {
	for !p.done() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *parser) skipSpaceAndCommas() {
	for !p.done() && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == ',') {
		p.i++
	}
}

func isTokenChar(c byte) bool {
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~/:", c) >= 0
}

func (p *parser) token() string {
	start := p.i
	for !p.done() && isTokenChar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

func (p *parser) quoted() string {
	p.i++ // opening quote
	var b strings.Builder
	for !p.done() {
		c := p.s[p.i]
		p.i++
		switch c {
		case '\\':
			if !p.done() {
				b.WriteByte(p.s[p.i])
				p.i++
			}
		case '"':
			return b.String()
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
