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
// peering's remote space, the /32 routes of private endpoints in the VNet
// or a peered one, the routes the gateway learned (when read and let in by
// the route table), the subnet's route table and the default system
// routes. What it could not read goes to rv.unknown.
func (s *Snapshot) reconstructRoutes(vnet *armnetwork.VirtualNetwork, subnet *armnetwork.Subnet, eps []Endpoint, rv *routeView) {
	active, invalid := armnetwork.EffectiveRouteStateActive, armnetwork.EffectiveRouteStateInvalid
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
	rv.reconstructed = true
	rv.pePolicy = map[string]string{}
	vnetID := str(vnet.ID)
	peerings, peeringsRead := s.Peerings[strings.ToLower(vnetID)]
	if !peeringsRead {
		rv.unknown = append(rv.unknown, cmdPeerings(vnetID))
	}
	var out []*armnetwork.EffectiveRoute
	out = append(out, mk(armnetwork.EffectiveRouteSourceDefault, hopVnetLocal, "", "", vnetPrefixes(vnet)...))
	peered := map[string]bool{strings.ToLower(vnetID): true}
	if hasGateway(vnet) {
		rv.gateway, rv.gatewayID = str(vnet.Name), gatewayOf(vnet)
	}
	for _, p := range peerings {
		if !peeringConnected(p) {
			continue
		}
		if p.Properties.RemoteVirtualNetwork != nil {
			remote := str(p.Properties.RemoteVirtualNetwork.ID)
			peered[strings.ToLower(remote)] = true
			if flag(p.Properties.UseRemoteGateways) && rv.gateway == "" {
				rv.gateway, rv.gatewayID = idName(remote), gatewayOf(s.vnetByID(remote))
			}
		}
		if rs := p.Properties.RemoteAddressSpace; rs != nil {
			out = append(out, mk(armnetwork.EffectiveRouteSourceDefault, hopPeering, "", "", strs(rs.AddressPrefixes)...))
		}
	}
	out = append(out, mk(armnetwork.EffectiveRouteSourceDefault, hopInternet, "", "", "0.0.0.0/0"))
	out = append(out, mk(armnetwork.EffectiveRouteSourceDefault, hopNone, "", "", defaultNone...))
	var rt *armnetwork.RouteTable
	if rv.tableID != "" {
		rt = s.routeTableByID(rv.tableID)
		if rt == nil || rt.Properties == nil {
			rt = nil
			rv.unknown = append(rv.unknown, cmdRouteTable(rv.tableID))
		} else {
			rv.propagationOff = flag(rt.Properties.DisableBgpRoutePropagation)
		}
	}
	if rv.gateway != "" && !rv.propagationOff && s.Gateway.Learned != nil {
		for _, g := range s.Gateway.Learned {
			// Origin Network is the gateway's own VNet space, which the
			// VNet and peering routes above already carry.
			if g == nil || strings.EqualFold(str(g.Origin), "Network") {
				continue
			}
			if _, err := netip.ParsePrefix(str(g.Network)); err == nil {
				out = append(out, mk(armnetwork.EffectiveRouteSourceVirtualNetworkGateway, hopGateway, "", str(g.NextHop), str(g.Network)))
			}
		}
	}
	var user []*armnetwork.EffectiveRoute
	if rt != nil {
		for _, r := range rt.Properties.Routes {
			if r == nil || r.Properties == nil {
				continue
			}
			user = append(user, mk(armnetwork.EffectiveRouteSourceUser, str(r.Properties.NextHopType), str(r.Name),
				str(r.Properties.NextHopIPAddress), str(r.Properties.AddressPrefix)))
		}
	}
	// A private endpoint adds a /32 route (next hop InterfaceEndpoint) to
	// its VNet and the directly peered ones. It beats any wider user route
	// unless the endpoint's subnet enables network policies for route
	// tables (privateEndpointNetworkPolicies Enabled or RouteTableEnabled):
	// then a user route that covers the address invalidates it.
	for _, ep := range eps {
		ip, err := netip.ParseAddr(ep.IP)
		if err != nil || ep.Subnet == "" || !peered[strings.ToLower(subnetVNetID(ep.Subnet))] {
			continue
		}
		r := mk(armnetwork.EffectiveRouteSourceDefault, hopInterfaceEndpoint, "", "", netip.PrefixFrom(ip, ip.BitLen()).String())
		if covered := prefixesContain(routePrefixes(user), ip); covered {
			sn := s.subnetByID(ep.Subnet)
			switch {
			case sn == nil || sn.Properties == nil:
				rv.pePolicy[ip.String()] = fmt.Sprintf("az network vnet subnet show -g %s --vnet-name %s -n %s --query privateEndpointNetworkPolicies", idGroup(ep.Subnet), idName(subnetVNetID(ep.Subnet)), idName(ep.Subnet))
			case policiesCoverRoutes(str(sn.Properties.PrivateEndpointNetworkPolicies)):
				r.State = &invalid
			}
		}
		out = append(out, r)
	}
	rv.routes = append(out, user...)
	rv.from = froms(s.from(fromVNet, vnetID), s.from(fromPeerings, vnetID), s.from(fromRouteTable, rv.tableID))
}

// hopInterfaceEndpoint is the next hop of a private endpoint's /32 route.
const hopInterfaceEndpoint = "InterfaceEndpoint"

// policiesCoverRoutes: privateEndpointNetworkPolicies values that let user
// routes override a private endpoint's /32 route.
func policiesCoverRoutes(p string) bool {
	return strings.EqualFold(p, "Enabled") || strings.EqualFold(p, "RouteTableEnabled")
}

func routePrefixes(routes []*armnetwork.EffectiveRoute) []string {
	var out []string
	for _, r := range routes {
		if r != nil {
			out = append(out, strs(r.AddressPrefix)...)
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
