package azure

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v9"
)

// Next hop types of effective routes. The SDK's RouteNextHopType lists the
// ones a user route may name; effective routes add the peering hops.
const (
	hopVnetLocal     = "VnetLocal"
	hopPeering       = "VNetPeering"
	hopGlobalPeering = "VNetGlobalPeering"
	hopGateway       = "VirtualNetworkGateway"
	hopAppliance     = "VirtualAppliance"
	hopInternet      = "Internet"
	hopNone          = "None"
)

// sourceRank orders routes of equal prefix length: a user route beats a
// BGP (gateway) route, which beats a system route (Azure's documented
// precedence).
func sourceRank(src string) int {
	switch src {
	case string(armnetwork.EffectiveRouteSourceUser):
		return 3
	case string(armnetwork.EffectiveRouteSourceVirtualNetworkGateway):
		return 2
	}
	return 1
}

// lpm picks the active route with the longest prefix containing ip.
func lpm(routes []*armnetwork.EffectiveRoute, ip netip.Addr) (*armnetwork.EffectiveRoute, netip.Prefix) {
	var best *armnetwork.EffectiveRoute
	var bestP netip.Prefix
	for _, r := range routes {
		if r == nil || (r.State != nil && *r.State != armnetwork.EffectiveRouteStateActive) {
			continue
		}
		for _, ps := range strs(r.AddressPrefix) {
			p, err := netip.ParsePrefix(ps)
			if err != nil || !p.Contains(ip) {
				continue
			}
			if best == nil || p.Bits() > bestP.Bits() ||
				(p.Bits() == bestP.Bits() && sourceRank(str(r.Source)) > sourceRank(str(best.Source))) {
				best, bestP = r, p
			}
		}
	}
	return best, bestP
}

// defaultNone are the address ranges Azure's system routes send to None
// unless a VNet, peering or gateway route covers them.
var defaultNone = []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10"}

// reconstructRoutes builds the routes Azure would apply to a NIC in subnet
// from the configuration alone: the VNet's own space, each connected
// peering's remote space, the subnet's route table and the default system
// routes. Routes a gateway learns by BGP cannot be seen this way.
func (s *Snapshot) reconstructRoutes(vnet *armnetwork.VirtualNetwork, subnet *armnetwork.Subnet) []*armnetwork.EffectiveRoute {
	active := armnetwork.EffectiveRouteStateActive
	mk := func(src armnetwork.EffectiveRouteSource, hop string, name string, nextIP string, prefixes ...string) *armnetwork.EffectiveRoute {
		h := armnetwork.RouteNextHopType(hop)
		r := &armnetwork.EffectiveRoute{Source: &src, State: &active, NextHopType: &h}
		for _, p := range prefixes {
			r.AddressPrefix = append(r.AddressPrefix, &p)
		}
		if name != "" {
			r.Name = &name
		}
		if nextIP != "" {
			r.NextHopIPAddress = []*string{&nextIP}
		}
		return r
	}
	var out []*armnetwork.EffectiveRoute
	out = append(out, mk(armnetwork.EffectiveRouteSourceDefault, hopVnetLocal, "", "", vnetPrefixes(vnet)...))
	for _, p := range s.Peerings[strings.ToLower(str(vnet.ID))] {
		if p == nil || p.Properties == nil || str(p.Properties.PeeringState) != string(armnetwork.VirtualNetworkPeeringStateConnected) {
			continue
		}
		if rs := p.Properties.RemoteAddressSpace; rs != nil {
			out = append(out, mk(armnetwork.EffectiveRouteSourceDefault, hopPeering, "", "", strs(rs.AddressPrefixes)...))
		}
	}
	out = append(out, mk(armnetwork.EffectiveRouteSourceDefault, hopInternet, "", "", "0.0.0.0/0"))
	out = append(out, mk(armnetwork.EffectiveRouteSourceDefault, hopNone, "", "", defaultNone...))
	if subnet != nil && subnet.Properties != nil && subnet.Properties.RouteTable != nil {
		if rt := s.routeTableByID(str(subnet.Properties.RouteTable.ID)); rt != nil && rt.Properties != nil {
			for _, r := range rt.Properties.Routes {
				if r == nil || r.Properties == nil {
					continue
				}
				out = append(out, mk(armnetwork.EffectiveRouteSourceUser, str(r.Properties.NextHopType), str(r.Name),
					str(r.Properties.NextHopIPAddress), str(r.Properties.AddressPrefix)))
			}
		}
	}
	return out
}

// routeMatch describes the route that decided ip.
func routeMatch(r *armnetwork.EffectiveRoute, p netip.Prefix, ip netip.Addr, table string) *RouteMatch {
	m := &RouteMatch{IP: ip.String(), NextHopIP: []string{}}
	if r == nil {
		return m
	}
	m.Prefix = p.String()
	m.NextHopType = str(r.NextHopType)
	m.NextHopIP = strs(r.NextHopIPAddress)
	m.Source = str(r.Source)
	m.Route = str(r.Name)
	if m.Source == string(armnetwork.EffectiveRouteSourceUser) {
		m.RouteTable = table
	}
	return m
}

// describe names a route as the portal shows it.
func (m *RouteMatch) describe() string {
	var b strings.Builder
	if m.RouteTable != "" {
		fmt.Fprintf(&b, "route table %s, ", m.RouteTable)
	}
	if m.Route != "" {
		fmt.Fprintf(&b, "route %s: ", m.Route)
	} else if m.Source != "" {
		fmt.Fprintf(&b, "%s route ", strings.ToLower(m.Source))
	}
	fmt.Fprintf(&b, "%s → %s", m.Prefix, m.NextHopType)
	if len(m.NextHopIP) > 0 {
		fmt.Fprintf(&b, " %s", strings.Join(m.NextHopIP, ","))
	}
	return b.String()
}

func prefixesContain(prefixes []string, ip netip.Addr) bool {
	for _, ps := range prefixes {
		if p, err := netip.ParsePrefix(ps); err == nil && p.Contains(ip) {
			return true
		}
	}
	return false
}

// firstAddr is the first address of the first parseable prefix.
func firstAddr(prefixes []string) (netip.Addr, bool) {
	for _, ps := range prefixes {
		if p, err := netip.ParsePrefix(ps); err == nil {
			return p.Masked().Addr(), true
		}
	}
	return netip.Addr{}, false
}

// vnetContaining finds the read VNet whose address space holds ip.
func (s *Snapshot) vnetContaining(ip netip.Addr) *armnetwork.VirtualNetwork {
	for _, v := range s.VNets {
		if prefixesContain(vnetPrefixes(v), ip) {
			return v
		}
	}
	return nil
}

// peering finds from's peering to the VNet to, and whether from's
// peerings were read at all.
func (s *Snapshot) peering(from, to string) (*armnetwork.VirtualNetworkPeering, bool) {
	list, read := s.Peerings[strings.ToLower(from)]
	for _, p := range list {
		if p != nil && p.Properties != nil && p.Properties.RemoteVirtualNetwork != nil &&
			sameID(str(p.Properties.RemoteVirtualNetwork.ID), to) {
			return p, true
		}
	}
	return nil, read
}

func peeringConnected(p *armnetwork.VirtualNetworkPeering) bool {
	return p != nil && p.Properties != nil &&
		str(p.Properties.PeeringState) == string(armnetwork.VirtualNetworkPeeringStateConnected)
}

func peeringState(p *armnetwork.VirtualNetworkPeering) string {
	if p == nil || p.Properties == nil {
		return "absent"
	}
	return str(p.Properties.PeeringState)
}

// accessAllowed is allowVirtualNetworkAccess, which ARM defaults to true.
func accessAllowed(p *armnetwork.VirtualNetworkPeering) bool {
	return p.Properties.AllowVirtualNetworkAccess == nil || *p.Properties.AllowVirtualNetworkAccess
}

// isPrivate reports whether ip is an address the Internet does not route.
func isPrivate(ip netip.Addr) bool {
	return ip.IsPrivate() || netip.MustParsePrefix("100.64.0.0/10").Contains(ip) || ip.IsLoopback() || ip.IsLinkLocalUnicast()
}
