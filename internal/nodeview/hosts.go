package nodeview

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
)

// HostsEntry is one line of a hosts file: an address and its names.
type HostsEntry struct {
	Addr  netip.Addr
	Names []string
	// Line is the 1-based line number in the file.
	Line int
}

// HostsLineError is a hosts-file line the resolver ignores.
type HostsLineError struct {
	Line   int
	Reason string
}

func (e *HostsLineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Reason) }

// ParseHosts reads a hosts file (hosts(5)): an address followed by a
// canonical name and aliases, # starting a comment anywhere on a line. An
// IPv6 address may carry a zone. Lines with an unparsable address or no
// name are skipped as glibc skips them; they are reported in the error (a
// join of *HostsLineError) next to the entries that did parse. A reader
// failure is returned wrapped, with the entries read so far.
func ParseHosts(r io.Reader) ([]HostsEntry, error) {
	var (
		entries []HostsEntry
		bad     []error
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLineBytes)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		a, err := netip.ParseAddr(f[0])
		if err != nil {
			bad = append(bad, &HostsLineError{Line: line, Reason: fmt.Sprintf("%q is not an IP address; line ignored", f[0])})
			continue
		}
		if len(f) < 2 {
			bad = append(bad, &HostsLineError{Line: line, Reason: fmt.Sprintf("address %s has no name; line ignored", a)})
			continue
		}
		entries = append(entries, HostsEntry{Addr: a, Names: f[1:], Line: line})
	}
	if err := sc.Err(); err != nil {
		bad = append(bad, fmt.Errorf("reading hosts file line %d: %w", line+1, err))
	}
	return entries, errors.Join(bad...)
}

// lookupHosts returns the addresses the entries give name, with /etc/hosts
// semantics: case-insensitive, a trailing dot ignored, every matching line in
// file order, duplicates dropped.
func lookupHosts(entries []HostsEntry, name string) []netip.Addr {
	name = strings.ToLower(trimDot(name))
	if name == "" {
		return nil
	}
	var out []netip.Addr
	seen := map[netip.Addr]bool{}
	for _, e := range entries {
		for _, n := range e.Names {
			if strings.ToLower(trimDot(n)) == name {
				if !seen[e.Addr] {
					seen[e.Addr] = true
					out = append(out, e.Addr)
				}
				break
			}
		}
	}
	return out
}
