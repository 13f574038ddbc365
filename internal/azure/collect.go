package azure

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerregistry/armcontainerregistry"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v9"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/privatedns/armprivatedns"
)

// Config names what Collect reads.
type Config struct {
	// Subscription is the subscription of the cluster and, unless their
	// IDs say otherwise, of the registry and the zone.
	Subscription string
	// ClusterGroup and Cluster name the AKS managed cluster.
	ClusterGroup, Cluster string
	// RegistryGroup and Registry name the container registry; optional
	// when PrivateEndpoints is given.
	RegistryGroup, Registry string
	// PrivateEndpoints are private endpoint resource IDs. The default is
	// every private endpoint connection of the registry.
	PrivateEndpoints []string
	// ZoneID is the private DNS zone's resource ID. The default is the
	// zone of the first private endpoint's DNS zone group.
	ZoneID string
	// NICs maps a pool name to the resource ID of a node NIC whose
	// effective routes and rules to read. The default is a NIC of the
	// pool found among the subnet's IP configurations.
	NICs map[string]string
}

// Collector reads Azure's configuration through the Azure SDK for Go.
type Collector struct {
	cred azcore.TokenCredential
	opts *arm.ClientOptions
}

// NewCollector returns a Collector that authenticates with cred (for
// example azidentity's DefaultAzureCredential) and builds every client with
// opts (nil for the defaults).
func NewCollector(cred azcore.TokenCredential, opts *arm.ClientOptions) *Collector {
	return &Collector{cred: cred, opts: opts}
}

// collection gathers a snapshot and the errors met on the way: a failed
// read leaves its part of the snapshot empty and the analysis says so.
type collection struct {
	c    *Collector
	ctx  context.Context
	s    *Snapshot
	errs []error
	net  map[string]*armnetwork.ClientFactory
}

func (k *collection) fail(what string, err error) {
	k.errs = append(k.errs, fmt.Errorf("%s: %w", what, trimAzError(err)))
}

// trimAzError keeps the status and error code of an ARM error and drops
// the SDK's multi-line dump of the request and the response body, which
// may echo anything (a token included). The code keeps only the leading
// identifier characters ARM codes are made of.
func trimAzError(err error) error {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return fmt.Errorf("%d %s", re.StatusCode, armCode(re.ErrorCode))
	}
	return err
}

func armCode(code string) string {
	end := 0
	for end < len(code) && end < 64 {
		c := code[end]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			break
		}
		end++
	}
	if end == 0 {
		return "(no error code)"
	}
	return code[:end]
}

func (k *collection) network(sub string) *armnetwork.ClientFactory {
	if f, ok := k.net[sub]; ok {
		return f
	}
	f, err := armnetwork.NewClientFactory(sub, k.c.cred, k.c.opts)
	if err != nil {
		k.fail("creating network clients", err)
		return nil
	}
	k.net[sub] = f
	return f
}

// Collect reads the cluster, the registry's private endpoints, the node
// and endpoint VNets with their peerings (both sides), the subnets' route
// tables, the private DNS zone's links and A records, and a node NIC's
// effective routes and security rules per pool. It returns what it could
// read and every error met.
func (c *Collector) Collect(ctx context.Context, cfg Config) (*Snapshot, error) {
	k := &collection{c: c, ctx: ctx, net: map[string]*armnetwork.ClientFactory{},
		s: &Snapshot{Peerings: map[string][]*armnetwork.VirtualNetworkPeering{}, NICs: map[string]*NodeNIC{},
			ZoneGroups: map[string][]*armnetwork.PrivateDNSZoneGroup{}, From: map[string]string{}}}
	if cfg.Subscription == "" {
		return k.s, errors.New("no subscription: pass --subscription or set AZURE_SUBSCRIPTION_ID")
	}
	// 1. The cluster and its pools.
	if cs, err := armcontainerservice.NewManagedClustersClient(cfg.Subscription, c.cred, c.opts); err != nil {
		k.fail("creating AKS client", err)
	} else if resp, err := cs.Get(ctx, cfg.ClusterGroup, cfg.Cluster, nil); err != nil {
		k.fail("reading managed cluster "+cfg.Cluster, err)
	} else {
		k.s.Cluster = &resp.ManagedCluster
		k.s.setFrom(fromAKS, "", "ARM managedClusters/"+cfg.Cluster)
	}
	// 2. The registry and its private endpoints.
	peIDs := append([]string(nil), cfg.PrivateEndpoints...)
	if cfg.Registry != "" {
		if rc, err := armcontainerregistry.NewRegistriesClient(cfg.Subscription, c.cred, c.opts); err != nil {
			k.fail("creating registry client", err)
		} else if resp, err := rc.Get(ctx, cfg.RegistryGroup, cfg.Registry, nil); err != nil {
			k.fail("reading registry "+cfg.Registry, err)
		} else {
			k.s.Registry = &resp.Registry
			k.s.setFrom(fromACR, "", "ARM registries/"+cfg.Registry)
			if len(peIDs) == 0 && resp.Properties != nil {
				for _, pc := range resp.Properties.PrivateEndpointConnections {
					if pc != nil && pc.Properties != nil && pc.Properties.PrivateEndpoint != nil {
						peIDs = append(peIDs, str(pc.Properties.PrivateEndpoint.ID))
					}
				}
			}
		}
	}
	zoneID := cfg.ZoneID
	for _, id := range peIDs {
		pe, zone := k.privateEndpoint(id)
		if pe != nil {
			k.s.PrivateEndpoints = append(k.s.PrivateEndpoints, pe)
		}
		if zoneID == "" {
			zoneID = zone
		}
	}
	// 3. VNets: the pools', the endpoints', and one hop of peers.
	vnets := []string{}
	for _, p := range k.poolSubnets() {
		vnets = append(vnets, subnetVNetID(p))
	}
	for _, pe := range k.s.PrivateEndpoints {
		if pe.Properties != nil && pe.Properties.Subnet != nil {
			vnets = append(vnets, subnetVNetID(str(pe.Properties.Subnet.ID)))
		}
	}
	if k.s.Cluster != nil && k.needsManagedVNet() {
		k.managedVNets(cfg.Subscription, str(k.s.Cluster.Properties.NodeResourceGroup))
	}
	for _, id := range vnets {
		k.vnet(id)
	}
	for _, v := range append([]*armnetwork.VirtualNetwork(nil), k.s.VNets...) {
		for _, p := range k.s.Peerings[strings.ToLower(str(v.ID))] {
			if p.Properties != nil && p.Properties.RemoteVirtualNetwork != nil {
				k.vnet(str(p.Properties.RemoteVirtualNetwork.ID))
			}
		}
	}
	// The endpoints' NICs (their IP configurations carry each FQDN's
	// address) and the learned routes of the gateways in the VNets read.
	for _, pe := range k.s.PrivateEndpoints {
		if pe.Properties == nil {
			continue
		}
		for _, ni := range pe.Properties.NetworkInterfaces {
			if ni != nil {
				k.endpointNIC(str(ni.ID))
			}
		}
	}
	for _, v := range k.s.VNets {
		if gw := gatewayOf(v); gw != "" {
			k.learnedRoutes(gw)
		}
	}
	// 4. Route tables of every subnet read that has one.
	for _, v := range k.s.VNets {
		if v.Properties == nil {
			continue
		}
		for _, sn := range v.Properties.Subnets {
			if sn != nil && sn.Properties != nil && sn.Properties.RouteTable != nil {
				k.routeTable(str(sn.Properties.RouteTable.ID))
			}
		}
	}
	// 5. The private DNS zone.
	if zoneID == "" && cfg.RegistryGroup != "" {
		zoneID = fmt.Sprintf("/subscriptions/%s/resourceGroups/%s/providers/Microsoft.Network/privateDnsZones/%s", cfg.Subscription, cfg.RegistryGroup, DefaultZone)
	}
	k.s.Zone.Name = DefaultZone
	if zoneID != "" {
		k.zone(zoneID)
	}
	// 6. A node NIC per pool: effective routes and security rules.
	if k.s.Cluster != nil && k.s.Cluster.Properties != nil {
		for _, p := range k.s.pools() {
			k.nic(p, cfg.NICs[p.name])
		}
	}
	return k.s, errors.Join(k.errs...)
}

func (k *collection) poolSubnets() []string {
	var out []string
	if k.s.Cluster == nil || k.s.Cluster.Properties == nil {
		return nil
	}
	for _, ap := range k.s.Cluster.Properties.AgentPoolProfiles {
		if ap != nil && str(ap.VnetSubnetID) != "" {
			out = append(out, str(ap.VnetSubnetID))
		}
	}
	return out
}

func (k *collection) needsManagedVNet() bool {
	if k.s.Cluster.Properties == nil {
		return false
	}
	for _, ap := range k.s.Cluster.Properties.AgentPoolProfiles {
		if ap != nil && str(ap.VnetSubnetID) == "" {
			return true
		}
	}
	return false
}

func (k *collection) managedVNets(sub, rg string) {
	f := k.network(sub)
	if f == nil || rg == "" {
		return
	}
	pager := f.NewVirtualNetworksClient().NewListPager(rg, nil)
	for pager.More() {
		page, err := pager.NextPage(k.ctx)
		if err != nil {
			k.fail("listing VNets of node resource group "+rg, err)
			return
		}
		for _, v := range page.Value {
			if v != nil {
				k.vnet(str(v.ID))
			}
		}
	}
}

// privateEndpoint reads one endpoint and the zone its DNS zone group uses.
func (k *collection) privateEndpoint(id string) (*armnetwork.PrivateEndpoint, string) {
	r, err := arm.ParseResourceID(id)
	if err != nil {
		k.fail("parsing private endpoint ID", err)
		return nil, ""
	}
	f := k.network(r.SubscriptionID)
	if f == nil {
		return nil, ""
	}
	resp, err := f.NewPrivateEndpointsClient().Get(k.ctx, r.ResourceGroupName, r.Name, nil)
	if err != nil {
		k.fail("reading private endpoint "+r.Name, err)
		return nil, ""
	}
	k.s.setFrom(fromPE, str(resp.ID), "ARM privateEndpoints/"+r.Name)
	zone := ""
	groups := []*armnetwork.PrivateDNSZoneGroup{}
	pager := f.NewPrivateDNSZoneGroupsClient().NewListPager(r.Name, r.ResourceGroupName, nil)
	for pager.More() {
		page, err := pager.NextPage(k.ctx)
		if err != nil {
			k.fail("listing DNS zone groups of "+r.Name, err)
			groups = nil
			break
		}
		groups = append(groups, page.Value...)
		for _, g := range page.Value {
			if g == nil || g.Properties == nil {
				continue
			}
			for _, zc := range g.Properties.PrivateDNSZoneConfigs {
				if zc != nil && zc.Properties != nil && strings.Contains(strings.ToLower(str(zc.Properties.PrivateDNSZoneID)), "/privatednszones/privatelink.azurecr") {
					zone = str(zc.Properties.PrivateDNSZoneID)
				}
			}
		}
	}
	if groups != nil {
		k.s.ZoneGroups[strings.ToLower(str(resp.ID))] = groups
		k.s.setFrom(fromZoneGroups, str(resp.ID), "ARM privateEndpoints/"+r.Name+"/privateDnsZoneGroups")
	}
	return &resp.PrivateEndpoint, zone
}

// endpointNIC reads a private endpoint's network interface.
func (k *collection) endpointNIC(id string) {
	r, err := arm.ParseResourceID(id)
	if err != nil {
		k.fail("parsing private endpoint NIC ID", err)
		return
	}
	f := k.network(r.SubscriptionID)
	if f == nil {
		return
	}
	resp, err := f.NewInterfacesClient().Get(k.ctx, r.ResourceGroupName, r.Name, nil)
	if err != nil {
		k.fail("reading private endpoint NIC "+r.Name, err)
		return
	}
	k.s.EndpointNICs = append(k.s.EndpointNICs, &resp.Interface)
	k.s.setFrom(fromPENIC, str(resp.ID), "ARM networkInterfaces/"+r.Name)
}

// learnedRoutes reads the routes a virtual network gateway learned. The
// routes it advertises need the on-premises BGP peer's address, which the
// configuration read here does not name: live mode leaves them unread.
func (k *collection) learnedRoutes(id string) {
	r, err := arm.ParseResourceID(id)
	if err != nil {
		k.fail("parsing gateway ID", err)
		return
	}
	f := k.network(r.SubscriptionID)
	if f == nil {
		return
	}
	poller, err := f.NewVirtualNetworkGatewaysClient().BeginGetLearnedRoutes(k.ctx, r.ResourceGroupName, r.Name, nil)
	if err != nil {
		k.fail("reading learned routes of "+r.Name, err)
		return
	}
	resp, err := poller.PollUntilDone(k.ctx, nil)
	if err != nil {
		k.fail("reading learned routes of "+r.Name, err)
		return
	}
	routes := resp.Value
	if routes == nil {
		routes = []*armnetwork.GatewayRoute{}
	}
	k.s.Gateway.Learned = append(k.s.Gateway.Learned, routes...)
	if k.s.Gateway.Learned == nil {
		k.s.Gateway.Learned = []*armnetwork.GatewayRoute{}
	}
	k.s.From[fromKey(fromLearned, "")] = joinFrom(k.s.From[fromKey(fromLearned, "")], "ARM virtualNetworkGateways/"+r.Name+"/getLearnedRoutes")
}

// vnet reads a VNet and its peerings, once.
func (k *collection) vnet(id string) {
	if id == "" || k.s.vnetByID(id) != nil {
		return
	}
	r, err := arm.ParseResourceID(id)
	if err != nil {
		k.fail("parsing VNet ID", err)
		return
	}
	f := k.network(r.SubscriptionID)
	if f == nil {
		return
	}
	resp, err := f.NewVirtualNetworksClient().Get(k.ctx, r.ResourceGroupName, r.Name, nil)
	if err != nil {
		k.fail("reading VNet "+r.Name, err)
		return
	}
	k.s.VNets = append(k.s.VNets, &resp.VirtualNetwork)
	k.s.setFrom(fromVNet, str(resp.ID), "ARM virtualNetworks/"+r.Name)
	list := []*armnetwork.VirtualNetworkPeering{}
	pager := f.NewVirtualNetworkPeeringsClient().NewListPager(r.ResourceGroupName, r.Name, nil)
	for pager.More() {
		page, err := pager.NextPage(k.ctx)
		if err != nil {
			k.fail("listing peerings of "+r.Name, err)
			return
		}
		list = append(list, page.Value...)
	}
	k.s.Peerings[strings.ToLower(str(resp.ID))] = list
	k.s.setFrom(fromPeerings, str(resp.ID), "ARM virtualNetworks/"+r.Name+"/virtualNetworkPeerings")
}

func (k *collection) routeTable(id string) {
	if k.s.routeTableByID(id) != nil {
		return
	}
	r, err := arm.ParseResourceID(id)
	if err != nil {
		k.fail("parsing route table ID", err)
		return
	}
	f := k.network(r.SubscriptionID)
	if f == nil {
		return
	}
	resp, err := f.NewRouteTablesClient().Get(k.ctx, r.ResourceGroupName, r.Name, nil)
	if err != nil {
		k.fail("reading route table "+r.Name, err)
		return
	}
	k.s.RouteTables = append(k.s.RouteTables, &resp.RouteTable)
	k.s.setFrom(fromRouteTable, str(resp.ID), "ARM routeTables/"+r.Name)
}

func (k *collection) zone(id string) {
	r, err := arm.ParseResourceID(id)
	if err != nil {
		k.fail("parsing private DNS zone ID", err)
		return
	}
	k.s.Zone.Name = strings.ToLower(r.Name)
	f, err := armprivatedns.NewClientFactory(r.SubscriptionID, k.c.cred, k.c.opts)
	if err != nil {
		k.fail("creating private DNS clients", err)
		return
	}
	links := []*armprivatedns.VirtualNetworkLink{}
	lp := f.NewVirtualNetworkLinksClient().NewListPager(r.ResourceGroupName, r.Name, nil)
	for lp.More() {
		page, err := lp.NextPage(k.ctx)
		if err != nil {
			k.fail("listing VNet links of "+r.Name, err)
			return
		}
		links = append(links, page.Value...)
	}
	records := []*armprivatedns.RecordSet{}
	rp := f.NewRecordSetsClient().NewListByTypePager(r.ResourceGroupName, r.Name, armprivatedns.RecordTypeA, nil)
	for rp.More() {
		page, err := rp.NextPage(k.ctx)
		if err != nil {
			k.fail("listing A records of "+r.Name, err)
			return
		}
		records = append(records, page.Value...)
	}
	k.s.Zone.Links, k.s.Zone.Records, k.s.Zone.LinksRead, k.s.Zone.RecordsRead = links, records, true, true
	k.s.setFrom(fromLinks, "", "ARM privateDnsZones/"+r.Name+"/virtualNetworkLinks")
	k.s.setFrom(fromRecords, "", "ARM privateDnsZones/"+r.Name+"/A")
}

// poolNIC finds a NIC of pool among its subnet's IP configurations: a
// standalone NIC (…/networkInterfaces/NIC/ipConfigurations/…) or a
// scale-set instance NIC (…/virtualMachineScaleSets/aks-POOL-…/…).
func (k *collection) poolNIC(p poolRef) (id string, standalone bool) {
	sn := k.s.subnetByID(p.subnet)
	if sn == nil || sn.Properties == nil {
		return "", false
	}
	marker := "aks-" + strings.ToLower(p.name) + "-"
	var vmss string
	for _, ipc := range sn.Properties.IPConfigurations {
		cid := strings.ToLower(str(ipc.ID))
		if !strings.Contains(cid, marker) {
			continue
		}
		if i := strings.Index(cid, "/ipconfigurations/"); i >= 0 && strings.Contains(cid, "/providers/microsoft.network/networkinterfaces/") {
			return str(ipc.ID)[:i], true
		}
		if vmss == "" {
			vmss = str(ipc.ID)
		}
	}
	return vmss, false
}

func (k *collection) nic(p poolRef, override string) {
	n := &NodeNIC{}
	k.s.NICs[p.name] = n
	id, standalone := override, override != ""
	if id == "" {
		id, standalone = k.poolNIC(p)
	}
	n.ID = id
	if id == "" {
		n.RoutesNote = "no NIC of the pool found among the subnet's IP configurations"
		n.SecurityNote = n.RoutesNote
		return
	}
	if !standalone {
		n.RoutesNote = "the pool's NIC is a scale-set instance NIC, and ARM's effectiveRouteTable and effectiveNetworkSecurityGroups operations take a standalone NIC; pass --nic POOL=ID of a standalone NIC in the same subnet for Azure's own effective view"
		n.SecurityNote = n.RoutesNote
		return
	}
	r, err := arm.ParseResourceID(id)
	if err != nil {
		k.fail("parsing NIC ID", err)
		return
	}
	f := k.network(r.SubscriptionID)
	if f == nil {
		return
	}
	ic := f.NewInterfacesClient()
	if poller, err := ic.BeginGetEffectiveRouteTable(k.ctx, r.ResourceGroupName, r.Name, nil); err != nil {
		k.fail("reading effective routes of "+r.Name, err)
		n.RoutesNote = "reading them failed"
	} else if resp, err := poller.PollUntilDone(k.ctx, nil); err != nil {
		k.fail("reading effective routes of "+r.Name, err)
		n.RoutesNote = "reading them failed"
	} else {
		n.Routes = resp.Value
		if n.Routes == nil {
			n.Routes = []*armnetwork.EffectiveRoute{}
		}
		k.s.setFrom(fromRoutes, p.name, "ARM networkInterfaces/"+r.Name+"/effectiveRouteTable")
	}
	n.Security, err = effectiveNSGs(k.ctx, ic, r.ResourceGroupName, r.Name)
	if err != nil {
		k.fail("reading effective security rules of "+r.Name, err)
		n.SecurityNote = "reading them failed"
	} else {
		k.s.setFrom(fromNSG, p.name, "ARM networkInterfaces/"+r.Name+"/effectiveNetworkSecurityGroups")
	}
}

// effectiveNSGs lists a NIC's effective security groups. The service sends
// tagMap as an object where the SDK model expects a string, which fails
// the SDK's decoder on real responses; the final response the SDK captured
// is then decoded without tagMap (decodeEffectiveNSGs).
func effectiveNSGs(ctx context.Context, ic *armnetwork.InterfacesClient, rg, name string) ([]*armnetwork.EffectiveNetworkSecurityGroup, error) {
	var raw *http.Response
	ctx = policy.WithCaptureResponse(ctx, &raw)
	poller, err := ic.BeginListEffectiveNetworkSecurityGroups(ctx, rg, name, nil)
	if err != nil {
		return nil, err
	}
	resp, err := poller.PollUntilDone(ctx, nil)
	if err == nil {
		if resp.Value == nil {
			return []*armnetwork.EffectiveNetworkSecurityGroup{}, nil
		}
		return resp.Value, nil
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) || raw == nil || raw.StatusCode != http.StatusOK {
		return nil, err
	}
	body, perr := runtime.Payload(raw)
	if perr != nil {
		return nil, err
	}
	groups, derr := decodeEffectiveNSGs(body)
	if derr != nil {
		return nil, fmt.Errorf("%w (and without tagMap: %v)", err, derr)
	}
	return groups, nil
}
