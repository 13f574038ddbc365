package azure

import (
	"fmt"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerregistry/armcontainerregistry"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v9"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/privatedns/armprivatedns"
)

// Snapshot is the Azure configuration one analysis reads, in the SDK's own
// model types whichever way it was read (SDK or az CLI dumps).
type Snapshot struct {
	// Cluster is the managed cluster (its agent pool profiles name the
	// node subnets).
	Cluster *armcontainerservice.ManagedCluster
	// Registry is the container registry, when it was read.
	Registry *armcontainerregistry.Registry
	// VNets are every virtual network read: the node VNets, the registry
	// endpoint's VNet, peered hubs.
	VNets []*armnetwork.VirtualNetwork
	// Peerings are the peerings of a VNet, keyed by the VNet's lower-case
	// resource ID. A VNet absent from the map was not read; one with an
	// empty list has no peerings.
	Peerings map[string][]*armnetwork.VirtualNetworkPeering
	// PrivateEndpoints are the registry's private endpoints.
	PrivateEndpoints []*armnetwork.PrivateEndpoint
	// RouteTables are the route tables of the node and endpoint subnets.
	RouteTables []*armnetwork.RouteTable
	// Zone is the private DNS zone the registry's names resolve in
	// (privatelink.azurecr.io), with its VNet links and A record sets.
	Zone Zone
	// NICs holds one node NIC per pool name, with its effective routes and
	// security rules.
	NICs map[string]*NodeNIC
	// Targets are extra registry endpoints given by hand (a registry that
	// is not ACR, e.g. on-premises behind a VPN gateway).
	Targets []Target
	// ZoneGroups are the private DNS zone groups of a private endpoint,
	// keyed by the endpoint's lower-case resource ID. An endpoint absent
	// from the map had its zone groups not read.
	ZoneGroups map[string][]*armnetwork.PrivateDNSZoneGroup
	// EndpointNICs are the network interfaces of the private endpoints
	// (their IP configurations carry each FQDN's address).
	EndpointNICs []*armnetwork.Interface
	// Gateway holds the routes the VPN or ExpressRoute gateway learned and
	// advertises, when they were read.
	Gateway GatewayRoutes
	// From names, for each part of the snapshot, the dump (or ARM read)
	// it came from: the proof a certain verdict cites. Keys are made by
	// fromKey; a part without an entry was not read.
	From map[string]string
}

// GatewayRoutes are a virtual network gateway's BGP routes.
type GatewayRoutes struct {
	// Learned are the routes the gateway learned (list-learned-routes);
	// nil when not read.
	Learned []*armnetwork.GatewayRoute
	// Advertised are the routes it advertises to a BGP peer
	// (list-advertised-routes); nil when not read.
	Advertised []*armnetwork.GatewayRoute
}

// The kinds of part Snapshot.From names.
const (
	fromAKS        = "aks"
	fromACR        = "acr"
	fromVNet       = "vnet"
	fromPeerings   = "peerings"
	fromRouteTable = "route-table"
	fromPE         = "private-endpoint"
	fromZoneGroups = "zone-groups"
	fromPENIC      = "pe-nic"
	fromLinks      = "dns-links"
	fromRecords    = "dns-records"
	fromRoutes     = "routes"
	fromNSG        = "nsg"
	fromLearned    = "learned-routes"
	fromAdvertised = "advertised-routes"
)

// fromKey is the key of one part in Snapshot.From: a kind and the
// resource's ID (lower-cased, since ARM IDs compare case-insensitively) or
// pool name.
func fromKey(kind, id string) string { return kind + ":" + strings.ToLower(id) }

// setFrom records where a part came from.
func (s *Snapshot) setFrom(kind, id, from string) {
	if s.From == nil {
		s.From = map[string]string{}
	}
	s.From[fromKey(kind, id)] = from
}

// from names where a part came from, or "" when it was not read.
func (s *Snapshot) from(kind, id string) string { return s.From[fromKey(kind, id)] }

// froms lists the named sources of the given parts that were read, once
// each, in order.
func froms(list ...string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, f := range list {
		if f != "" && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// Zone is a private DNS zone as the analysis needs it.
type Zone struct {
	Name string
	// LinksRead and RecordsRead say whether the zone's VNet links and its
	// A records were read: a list not read is not an empty list.
	LinksRead, RecordsRead bool
	Links                  []*armprivatedns.VirtualNetworkLink
	// Records are the zone's A record sets.
	Records []*armprivatedns.RecordSet
}

// NodeNIC is the NIC of one node of a pool and what Azure applies to it.
type NodeNIC struct {
	// ID is the NIC's (or its IP configuration's) resource ID.
	ID string
	// Routes are the NIC's effective routes; nil when they could not be
	// read (RoutesNote says why).
	Routes     []*armnetwork.EffectiveRoute
	RoutesNote string
	// Security are the NIC's effective security groups; nil when they
	// could not be read (SecurityNote says why).
	Security     []*armnetwork.EffectiveNetworkSecurityGroup
	SecurityNote string
}

// Target is a registry endpoint given by hand: a host name and its address.
type Target struct {
	Host string
	IP   string
}

// str dereferences p, or "" for nil.
func str[T ~string](p *T) string {
	if p == nil {
		return ""
	}
	return string(*p)
}

func flag(p *bool) bool { return p != nil && *p }

func strs(ps []*string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		if p != nil && *p != "" {
			out = append(out, *p)
		}
	}
	return out
}

// sameID compares two resource IDs the way ARM does (case-insensitively).
func sameID(a, b string) bool { return a != "" && strings.EqualFold(a, b) }

// idName is the last segment of a resource ID, or the ID itself.
func idName(id string) string {
	if r, err := arm.ParseResourceID(id); err == nil {
		return r.Name
	}
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		return id[i+1:]
	}
	return id
}

// subnetVNetID is the VNet ID a subnet ID belongs to.
func subnetVNetID(subnetID string) string {
	r, err := arm.ParseResourceID(subnetID)
	if err != nil || r.Parent == nil {
		return ""
	}
	return r.Parent.String()
}

// vnetByID finds a read VNet by ID.
func (s *Snapshot) vnetByID(id string) *armnetwork.VirtualNetwork {
	for _, v := range s.VNets {
		if v != nil && sameID(str(v.ID), id) {
			return v
		}
	}
	return nil
}

// subnetByID finds a subnet among the read VNets.
func (s *Snapshot) subnetByID(id string) *armnetwork.Subnet {
	for _, v := range s.VNets {
		if v == nil || v.Properties == nil {
			continue
		}
		for _, sn := range v.Properties.Subnets {
			if sn != nil && sameID(str(sn.ID), id) {
				return sn
			}
		}
	}
	return nil
}

func (s *Snapshot) routeTableByID(id string) *armnetwork.RouteTable {
	for _, rt := range s.RouteTables {
		if rt != nil && sameID(str(rt.ID), id) {
			return rt
		}
	}
	return nil
}

func vnetPrefixes(v *armnetwork.VirtualNetwork) []string {
	if v == nil || v.Properties == nil || v.Properties.AddressSpace == nil {
		return nil
	}
	return strs(v.Properties.AddressSpace.AddressPrefixes)
}

func subnetPrefixes(sn *armnetwork.Subnet) []string {
	if sn == nil || sn.Properties == nil {
		return nil
	}
	if p := str(sn.Properties.AddressPrefix); p != "" {
		return []string{p}
	}
	return strs(sn.Properties.AddressPrefixes)
}

func vnetDNSServers(v *armnetwork.VirtualNetwork) []string {
	if v == nil || v.Properties == nil || v.Properties.DhcpOptions == nil {
		return nil
	}
	return strs(v.Properties.DhcpOptions.DNSServers)
}

// hasGateway reports whether a VNet has a GatewaySubnet (where VPN and
// ExpressRoute gateways live).
func hasGateway(v *armnetwork.VirtualNetwork) bool {
	if v == nil || v.Properties == nil {
		return false
	}
	for _, sn := range v.Properties.Subnets {
		if sn != nil && strings.EqualFold(str(sn.Name), "GatewaySubnet") {
			return true
		}
	}
	return false
}

// idGroup is the resource group an ID names, or "<rg>".
func idGroup(id string) string {
	if r, err := arm.ParseResourceID(id); err == nil && r.ResourceGroupName != "" {
		return r.ResourceGroupName
	}
	return "<rg>"
}

// The az commands that read what a verdict lacks.
func cmdVNet(id string) string {
	return fmt.Sprintf("az network vnet show -g %s -n %s", idGroup(id), idName(id))
}

func cmdPeerings(vnetID string) string {
	return fmt.Sprintf("az network vnet peering list -g %s --vnet-name %s", idGroup(vnetID), idName(vnetID))
}

func cmdRouteTable(id string) string {
	return fmt.Sprintf("az network route-table show -g %s -n %s", idGroup(id), idName(id))
}

func cmdLinks(zone string) string {
	return fmt.Sprintf("az network private-dns link vnet list -g <zone-rg> -z %s", zone)
}

func cmdRecords(zone string) string {
	return fmt.Sprintf("az network private-dns record-set a list -g <zone-rg> -z %s", zone)
}

func cmdEffectiveNSG(pool string) string {
	return fmt.Sprintf("az network nic list-effective-nsg -g <node-rg> -n <nic> (a standalone NIC in pool %s's subnet; --from-az reads it as nsg-%s.json)", pool, pool)
}

func cmdLearned(gw string) string {
	return fmt.Sprintf("az network vnet-gateway list-learned-routes -g %s -n %s (--from-az reads it as gateway-learned.json)", idGroup(gw), gwName(gw))
}

func cmdAdvertised(gw string) string {
	return fmt.Sprintf("az network vnet-gateway list-advertised-routes -g %s -n %s --peer <on-premises BGP peer IP> (--from-az reads it as gateway-advertised.json)", idGroup(gw), gwName(gw))
}

func gwName(id string) string {
	if id == "" || !strings.Contains(strings.ToLower(id), "/virtualnetworkgateways/") {
		return "<gateway>"
	}
	return idName(id)
}

// gatewayOf finds the ID of the virtual network gateway in a VNet's
// GatewaySubnet (its IP configurations name it), or "".
func gatewayOf(v *armnetwork.VirtualNetwork) string {
	if v == nil || v.Properties == nil {
		return ""
	}
	for _, sn := range v.Properties.Subnets {
		if sn == nil || sn.Properties == nil || !strings.EqualFold(str(sn.Name), "GatewaySubnet") {
			continue
		}
		for _, ipc := range sn.Properties.IPConfigurations {
			id := str(ipc.ID)
			if i := strings.Index(strings.ToLower(id), "/ipconfigurations/"); i > 0 && strings.Contains(strings.ToLower(id), "/virtualnetworkgateways/") {
				return id[:i]
			}
		}
	}
	return ""
}
