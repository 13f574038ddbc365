package probe

import (
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/pullpath/pullpath/internal/verdict"
)

// checkHostname reports why host (the registry part of a reference, or a
// mirror's host, with an optional :port) is not a name any resolver could
// be asked for: RFC 1035 allows at most 63 bytes per label and 253 in all,
// and a label of letters, digits and hyphens that neither starts nor ends
// with a hyphen (the underscore is tolerated, as resolvers do). An IP
// literal passes. It returns nil for a valid name.
func checkHostname(host string) error {
	h := host
	if hp, _, err := net.SplitHostPort(host); err == nil {
		h = hp
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if _, err := netip.ParseAddr(h); err == nil {
		return nil
	}
	name := strings.TrimSuffix(h, ".")
	if name == "" {
		return fmt.Errorf("host name %q is empty", host)
	}
	if len(name) > 253 {
		return fmt.Errorf("host name %.40q... is %d bytes long, more than the 253 DNS allows", name, len(name))
	}
	for _, label := range strings.Split(name, ".") {
		switch {
		case label == "":
			return fmt.Errorf("host name %q has an empty label", name)
		case len(label) > 63:
			return fmt.Errorf("host name %q has a label of %d bytes, more than the 63 DNS allows", name, len(label))
		case label[0] == '-' || label[len(label)-1] == '-':
			return fmt.Errorf("host name %q has a label that starts or ends with a hyphen", name)
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("host name %q has the character %q, which no DNS name holds", name, c)
			}
		}
	}
	return nil
}

// problemMessage is a node-view problem as a warning's message: its detail
// and error without the cause code and endpoint, which the warning carries
// in its own fields (so a warning reads "config.ca-file: no trust store
// ...", not "config.ca-file: config.ca-file: no trust store ...").
func problemMessage(e *verdict.Error) string {
	var parts []string
	if e.Detail != "" {
		parts = append(parts, e.Detail)
	}
	if e.Err != nil {
		parts = append(parts, e.Err.Error())
	}
	return strings.Join(parts, ": ")
}
