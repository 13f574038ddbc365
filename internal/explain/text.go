package explain

import (
	"strings"
	"unicode/utf8"
	"unsafe"
)

// MaxMessageBytes caps the text Classify reads from one message. Pull
// failure messages are a few hundred bytes; anything longer is cut so that
// classification stays bounded on any input.
const MaxMessageBytes = 16 << 10

// capText cuts s to at most n bytes on a rune boundary.
func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.RuneStart(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	if len(s) > 0 {
		if r, size := utf8.DecodeLastRuneInString(s); r == utf8.RuneError && size <= 1 {
			s = s[:len(s)-1]
		}
	}
	return s
}

// normalize undoes the escaping that log lines and JSON pastes add
// (\" \\ \n \t), turns every run of white space into one space and trims
// the result. It is a single pass over s.
func normalize(s string) string {
	if isNormal(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' {
			// Runs of backslashes before a quote or an escape letter, as
			// log lines and JSON pastes leave them: \" \\\" \n \t \r.
			j := i
			for j < len(s) && s[j] == '\\' {
				j++
			}
			if j < len(s) {
				switch s[j] {
				case '"':
					i = j - 1
					continue
				case 'n', 't', 'r':
					space = b.Len() > 0
					i = j
					continue
				}
			}
			// A plain run: copy it whole so that the scan stays linear.
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteString(s[i:j])
			i = j - 1
			continue
		}
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteByte(c)
	}
	return b.String()
}

// lowerASCII lowercases ASCII letters only, so byte offsets in the result
// match those in s.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; c >= 'A' && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			// b is never written again: hand it over as the string
			// without a second copy (what strings.Builder does).
			return unsafe.String(unsafe.SliceData(b), len(b))
		}
	}
	return s
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isHostByte reports whether c can be part of a host name or IPv4 address.
func isHostByte(c byte) bool {
	return isAlnum(c) || c == '.' || c == '-' || c == '_'
}

// containsAny reports whether s contains any of subs.
func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// lastIndexAny returns the largest index of any of subs in s, or -1.
func lastIndexAny(s string, subs ...string) int {
	best := -1
	for _, sub := range subs {
		if i := strings.LastIndex(s, sub); i > best {
			best = i
		}
	}
	return best
}

// quotedAfter returns the text between the first double quote after the
// first occurrence of prefix in l (a lowercased copy of s) and the next
// quote, taken from s. ok is false when prefix or the quotes are missing.
func quotedAfter(s, l, prefix string) (string, bool) {
	i := strings.Index(l, prefix)
	if i < 0 {
		return "", false
	}
	rest := s[i+len(prefix):]
	rest = strings.TrimLeft(rest, " ")
	if !strings.HasPrefix(rest, "\"") {
		return "", false
	}
	rest = rest[1:]
	j := strings.IndexByte(rest, '"')
	if j < 0 {
		return "", false
	}
	return rest[:j], true
}

// wordAfter returns the token after prefix in s (l is its lowercase copy),
// ending at white space, a quote, a comma or ": ". Quotes around the token
// are dropped.
func wordAfter(s, l, prefix string) (string, int) {
	i := strings.Index(l, prefix)
	if i < 0 {
		return "", -1
	}
	start := i + len(prefix)
	rest := s[start:]
	rest = strings.TrimLeft(rest, " \"'")
	off := len(s) - len(rest)
	end := 0
	for end < len(rest) {
		c := rest[end]
		if c == ' ' || c == '"' || c == '\'' || c == ',' || c == ']' || c == ')' {
			break
		}
		if c == ':' && (end+1 == len(rest) || rest[end+1] == ' ') {
			break
		}
		end++
	}
	return strings.TrimRight(rest[:end], ".;:"), off
}

// isNormal reports whether normalize would return s unchanged: no
// backslash, no whitespace but single spaces between words.
func isNormal(s string) bool {
	if len(s) == 0 {
		return true
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	prevSpace := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\', '\t', '\n', '\r', '\f', '\v':
			return false
		case ' ':
			if prevSpace {
				return false
			}
			prevSpace = true
		default:
			prevSpace = false
		}
	}
	return true
}
