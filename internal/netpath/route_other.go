//go:build !linux

package netpath

import "net/netip"

// lookupRoute knows no route outside Linux.
func lookupRoute(netip.Addr) route { return route{} }
