package azure

import (
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
}

// Zone is a private DNS zone as the analysis needs it.
type Zone struct {
	Name  string
	Read  bool
	Links []*armprivatedns.VirtualNetworkLink
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
