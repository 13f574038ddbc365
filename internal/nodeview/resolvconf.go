package nodeview

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"
)

// Limits and defaults of glibc's resolver (resolv.h) that the parser applies.
const (
	maxNameservers  = 3  // MAXNS
	maxNdots        = 15 // RES_MAXNDOTS
	maxTimeout      = 30 // RES_MAXRETRANS, seconds
	maxAttempts     = 5  // RES_MAXRETRY
	defaultNdots    = 1
	defaultTimeout  = 5 * time.Second
	defaultAttempts = 2
	maxLineBytes    = 64 << 10
)

// ResolvConf is the node's resolver configuration as glibc (and Go's pure
// resolver) read /etc/resolv.conf.
type ResolvConf struct {
	// Nameservers are the first three valid nameserver addresses, in file
	// order. An IPv6 address may carry a zone (fe80::1%eth0).
	Nameservers []netip.Addr
	// Search is the search list from the last search or domain line.
	Search []string
	// Ndots is options ndots:n (0..15); the default is 1.
	Ndots int
	// Timeout is options timeout:n (1..30 s); the default is 5s.
	Timeout time.Duration
	// Attempts is options attempts:n (1..5); the default is 2.
	Attempts int
	// Rotate is options rotate: queries are spread over the nameservers
	// instead of always starting with the first.
	Rotate bool
	// UseTCP is options use-vc (tcp): queries go over TCP.
	UseTCP bool
	// Options lists every option word in file order, as written.
	Options []string
	// Defaulted is true when the file names no usable nameserver, so the
	// resolver falls back to the local host (127.0.0.1 and ::1).
	Defaulted bool
	// NameserverLines counts the nameserver lines, usable or not.
	NameserverLines int
	// Notes lists what the resolver ignores: nameservers beyond the third,
	// unparsable addresses, unknown or malformed lines (with line numbers).
	Notes []string
	// Path is the file this was read from ("" when parsed from a reader or
	// when the file is missing).
	Path string
}

// DefaultNameservers is what glibc and Go use when resolv.conf names no
// nameserver: the local host.
var DefaultNameservers = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}

// DefaultResolvConf is the configuration of a node without /etc/resolv.conf.
func DefaultResolvConf() ResolvConf {
	return ResolvConf{
		Nameservers: append([]netip.Addr(nil), DefaultNameservers...),
		Ndots:       defaultNdots,
		Timeout:     defaultTimeout,
		Attempts:    defaultAttempts,
		Defaulted:   true,
	}
}

// ParseResolvConf reads a resolv.conf with glibc's semantics: at most three
// nameserver lines are kept (the rest are noted), the last search or domain
// line wins, options ndots:n, timeout:n, attempts:n, rotate and use-vc are
// understood and clamped to glibc's limits, and lines starting with # or ;
// are comments. Lines the resolver ignores are recorded in Notes. The error
// is non-nil only when the reader fails or a line is absurdly long; the
// result parsed so far is returned with it.
func ParseResolvConf(r io.Reader) (ResolvConf, error) {
	rc := ResolvConf{Ndots: defaultNdots, Timeout: defaultTimeout, Attempts: defaultAttempts}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLineBytes)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if text == "" || text[0] == '#' || text[0] == ';' {
			continue
		}
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "nameserver":
			rc.NameserverLines++
			if len(f) < 2 {
				rc.note(line, "nameserver line without an address ignored")
				continue
			}
			a, err := netip.ParseAddr(f[1])
			if err != nil {
				rc.note(line, "nameserver %q is not an IP address; ignored", f[1])
				continue
			}
			if len(rc.Nameservers) >= maxNameservers {
				rc.note(line, "nameserver %s ignored: only the first %d are used", a, maxNameservers)
				continue
			}
			rc.Nameservers = append(rc.Nameservers, a)
		case "domain":
			if len(f) < 2 {
				rc.note(line, "domain line without a name ignored")
				continue
			}
			rc.Search = nil
			if d := trimDot(f[1]); d != "" {
				rc.Search = []string{d}
			}
		case "search":
			rc.Search = rc.Search[:0:0]
			for _, s := range f[1:] {
				if s = trimDot(s); s != "" {
					rc.Search = append(rc.Search, s)
				}
			}
		case "options":
			for _, o := range f[1:] {
				rc.option(line, o)
			}
		case "sortlist", "lookup", "family":
			// Understood by some resolvers, irrelevant to name lookup here.
		default:
			rc.note(line, "unknown keyword %q ignored", f[0])
		}
	}
	if len(rc.Nameservers) == 0 {
		rc.Nameservers = append([]netip.Addr(nil), DefaultNameservers...)
		rc.Defaulted = true
		if rc.NameserverLines > 0 {
			rc.Notes = append(rc.Notes, fmt.Sprintf("none of the %d nameserver lines is usable: the resolver falls back to 127.0.0.1 and ::1", rc.NameserverLines))
		}
	}
	if err := sc.Err(); err != nil {
		return rc, fmt.Errorf("reading resolv.conf line %d: %w", line+1, err)
	}
	return rc, nil
}

func (rc *ResolvConf) note(line int, format string, args ...any) {
	rc.Notes = append(rc.Notes, fmt.Sprintf("line %d: ", line)+fmt.Sprintf(format, args...))
}

func (rc *ResolvConf) option(line int, o string) {
	rc.Options = append(rc.Options, o)
	name, val, hasVal := strings.Cut(o, ":")
	num := func(lo, hi int) (int, bool) {
		// glibc reads the value with atoi: leading digits count and
		// anything else reads as 0; the result is clamped to its range.
		n, clean := atoi(val)
		if !hasVal {
			rc.note(line, "option %q has no value; ignored", o)
			return 0, false
		}
		if !clean {
			rc.note(line, "option %q is not a clean number; read as %d", o, min(max(n, lo), hi))
		}
		return min(max(n, lo), hi), true
	}
	switch name {
	case "ndots":
		if n, ok := num(0, maxNdots); ok {
			rc.Ndots = n
		}
	case "timeout":
		if n, ok := num(1, maxTimeout); ok {
			rc.Timeout = time.Duration(n) * time.Second
		}
	case "attempts":
		if n, ok := num(1, maxAttempts); ok {
			rc.Attempts = n
		}
	case "rotate":
		rc.Rotate = true
	case "use-vc", "usevc", "tcp":
		rc.UseTCP = true
	}
}

func trimDot(s string) string { return strings.TrimRight(s, ".") } // "x." and "x.." are x; ".." is nothing

// atoi reads a number the way C's atoi does: an optional sign, then leading
// decimal digits; no digits read as 0. clean reports whether the whole string
// was a number.
func atoi(s string) (n int, clean bool) {
	i, neg := 0, false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	start := i
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if n < 1<<20 {
			n = n*10 + int(s[i]-'0')
		}
	}
	if neg {
		n = -n
	}
	return n, i > start && i == len(s)
}
