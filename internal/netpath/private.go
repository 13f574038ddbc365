package netpath

import "net/netip"

var (
	cgnat = netip.MustParsePrefix("100.64.0.0/10")
)

// IsPrivate reports whether a is not a public internet address a registry's
// private endpoint would never use: RFC 1918 (10/8, 172.16/12, 192.168/16),
// CGNAT (100.64/10), IPv6 ULA (fc00::/7), loopback and link-local. An
// IPv4-mapped IPv6 address is judged as its IPv4 address.
func IsPrivate(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() {
		return false
	}
	return a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() || cgnat.Contains(a)
}
