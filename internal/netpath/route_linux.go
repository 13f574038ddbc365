//go:build linux

package netpath

import (
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
)

// lookupRoute asks the kernel (RTM_GETROUTE, as `ip route get`) which
// route, interface and source address it would use for dst.
func lookupRoute(dst netip.Addr) route {
	var rt route
	routes, err := netlink.RouteGet(net.IP(dst.Unmap().AsSlice()))
	if err != nil {
		rt.err = err.Error()
		return rt
	}
	if len(routes) == 0 {
		rt.err = "no route"
		return rt
	}
	r := routes[0]
	if r.Gw != nil {
		rt.gateway = r.Gw.String()
	}
	if r.Src != nil {
		rt.src = r.Src.String()
	}
	if r.LinkIndex > 0 {
		if ifc, err := net.InterfaceByIndex(r.LinkIndex); err == nil {
			rt.iface = ifc.Name
		}
	}
	return rt
}
