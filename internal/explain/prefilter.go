package explain

// failureWords are words one of which every pull failure message holds, in
// lower case: a message with none of them gets no verdict, so a stream of
// log lines skips the classifier for it. TestPrefilterKeepsCorpus and
// FuzzPrefilter hold the classifier to that: a message mayFail rejects must
// classify as no failure.
var failureWords = []string{
	"fail", "err", "denied", "unauthori", "forbidden", "not found", "unknown", "invalid", "timeout",
	"timed out", "refused", "reset", "unreachable", "no such host", "x509", "certificate",
	"eof", "toomanyrequests", "too many requests", "back-off", "backoff", "deadline", "cannot",
	"can't", "unable", "no space", "broken pipe", "exceeded", "mismatch", "missing", "expired",
	"servfail", "nxdomain", "handshake", "abort", "quota", "read-only", "unsupported", "permission",
	"unauthenticated", "wrong", "not ", "no ", "corrupt", "bad ", "illegal", "refus", "reject", "panic",
	"status", "http", "unavailable", "gateway", "code", "dns", "tls", "proxy", "limit", "misbehav",
	"dial", "lookup", "read tcp", "write tcp", "read udp", "cancel", "closed", "broken",
	"awaiting", "media type", "mediatype", "untar", "archive/tar", "write ", "overlay", "snapshot", "unpack",
	"extract", "mount", "layer", "digest", "signature", "policy", "never", "killed", "oom", "could",
	"warning", "lowercase", "must ", "required", "authentica", "credential", "token", "expect", "unexpected",
	"fatal", "redirect", "short-name", "short name", "blocked", "disk", ".sock", "daemon running",
	"runtime is down", "short read", "sans", "common name", "doesn't match", "alternative name", "ssl",
	"nodename nor servname", "enotfound", "eai_again", "ehostunreach", "enetunreach", "etimedout",
	"stalled", "client with ip", "aka.ms/acr/firewall", "vpc", "throttl", "architecture", "schema 1",
	"schema1", "nosuchkey", "blobnotfound", "incorrect", "password", "login", "insufficient",
	"malformed", "open /", "mkdir /", "stat /", "rename /", "unlinkat /", "chmod /", "chown /",
	"remove /", "too many open files", "readlink /", "symlink /", "lchown", "devmapper", "zfs",
	"stargz", "toml", "registries.conf", "reading json file", "anonymous",
}

// prefilter is failureWords indexed by their first byte.
var prefilter = func() (t [256][]string) {
	for _, w := range failureWords {
		t[w[0]] = append(t[w[0]], w)
	}
	return t
}()

// mayFail reports whether s holds one of failureWords, ignoring ASCII case,
// or holds no letter or digit (which the classifier reads as a detail-less back-off). It
// reads s once and allocates nothing.
func mayFail(s string) bool {
	if !hasAlnum(s) {
		return true
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		for _, w := range prefilter[c] {
			if hasFoldPrefix(s[i:], w) {
				return true
			}
		}
	}
	return false
}

// hasAlnum reports whether s holds an ASCII letter or digit that is not
// an escape (\n, \t).
func hasAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if isAlnum(s[i]) && (i == 0 || s[i-1] != '\\') {
			return true
		}
	}
	return false
}

// hasFoldPrefix reports whether s starts with the lower-case word w,
// ignoring ASCII case.
func hasFoldPrefix(s, w string) bool {
	if len(s) < len(w) {
		return false
	}
	for j := 1; j < len(w); j++ {
		c := s[j]
		switch {
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		case c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r':
			c = ' '
		}
		if c != w[j] {
			return false
		}
	}
	return true
}
