package azure

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v9"

	"github.com/pullpath/pullpath/internal/verdict"
)

// azureDNS is the address of Azure's own resolver, the one a custom DNS
// server must forward the private zone to.
const azureDNS = "168.63.129.16"

// Options select what Analyze looks at.
type Options struct {
	// Pool limits the report to one node pool. The default is every pool.
	Pool string
}

// Analyze reads a snapshot of Azure's configuration and says, for every
// node pool, whether its nodes have a private path to every registry
// endpoint, and which setting breaks it. It never fails: what is missing
// from the snapshot becomes a skipped check or a warning.
//
// For each pool, in the order a pull needs them:
//  1. endpoints: every FQDN of the registry's private endpoints and its IP;
//  2. dns: the VNet's resolver (Azure DNS or custom servers), the private
//     zone's link to that VNet, and one A record per FQDN with its IP;
//  3. route: longest-prefix match of each IP in a node NIC's effective
//     routes, and the peering or gateway behind the hop;
//  4. security: the NIC's effective security rules for TCP 443;
//  5. return: the route back from the endpoint's subnet.
func Analyze(s *Snapshot, opts Options) *Report {
	rep := &Report{APIVersion: APIVersion, Kind: Kind, Source: SourceControlPlane,
		Endpoints: []Endpoint{}, Pools: []PoolReport{}, Warnings: []verdict.Warning{}}
	rep.Input.Zone = s.Zone.Name
	if s.Cluster != nil {
		rep.Input.Cluster = str(s.Cluster.Name)
	}
	if s.Registry != nil {
		rep.Input.Registry = str(s.Registry.Name)
	}
	eps, epChecks := s.endpoints()
	rep.Endpoints = eps
	for _, p := range s.pools() {
		if opts.Pool != "" && p.name != opts.Pool {
			continue
		}
		pr := s.analyzePool(p, eps, epChecks)
		rep.Pools = append(rep.Pools, pr)
	}
	if len(rep.Pools) == 0 {
		rep.Warnings = append(rep.Warnings, verdict.Warning{Code: verdict.CodeAzureNoPools,
			Message: "no node pool to check: the cluster lists none (or none named by --pool) with a subnet that was read"})
	}
	rep.Verdict = worst(rep.Pools)
	return rep
}

type poolRef struct {
	name   string
	subnet string
}

// pools lists the cluster's agent pools with their subnet IDs. A pool
// without vnetSubnetID uses the VNet AKS made in the node resource group.
func (s *Snapshot) pools() []poolRef {
	if s.Cluster == nil || s.Cluster.Properties == nil {
		return nil
	}
	var out []poolRef
	for _, ap := range s.Cluster.Properties.AgentPoolProfiles {
		if ap == nil {
			continue
		}
		p := poolRef{name: str(ap.Name), subnet: str(ap.VnetSubnetID)}
		if p.subnet == "" {
			p.subnet = s.managedSubnet(str(s.Cluster.Properties.NodeResourceGroup))
		}
		out = append(out, p)
	}
	return out
}

func (s *Snapshot) managedSubnet(nodeRG string) string {
	for _, v := range s.VNets {
		r, err := arm.ParseResourceID(str(v.ID))
		if err != nil || !strings.EqualFold(r.ResourceGroupName, nodeRG) || v.Properties == nil {
			continue
		}
		for _, sn := range v.Properties.Subnets {
			if sn != nil {
				return str(sn.ID)
			}
		}
	}
	return ""
}

// endpoints lists every FQDN → IP the private endpoints give (login
// server first, then the data endpoints), then the hand-given targets.
// An endpoint's DNS configuration (customDnsConfigs) is read first; an
// endpoint whose private DNS zone group keeps its records may print an
// empty one, so the zone group's record sets and the endpoint NIC's own
// IP configurations are read too. A data endpoint the registry serves
// that no private endpoint lists is a finding of its own.
func (s *Snapshot) endpoints() ([]Endpoint, []Check) {
	out := []Endpoint{}
	var checks []Check
	seen := map[string]bool{}
	add := func(fqdn, ip string, pe *armnetwork.PrivateEndpoint, subnet, from string) {
		fqdn = strings.ToLower(strings.TrimSuffix(fqdn, "."))
		if fqdn == "" || ip == "" || seen[fqdn] {
			return
		}
		seen[fqdn] = true
		out = append(out, Endpoint{FQDN: fqdn, IP: ip, Role: acrRole(fqdn), PrivateEndpoint: str(pe.Name), Subnet: subnet, From: from})
	}
	for _, pe := range s.PrivateEndpoints {
		if pe == nil || pe.Properties == nil {
			continue
		}
		subnet := ""
		if pe.Properties.Subnet != nil {
			subnet = str(pe.Properties.Subnet.ID)
		}
		peFrom := s.from(fromPE, str(pe.ID))
		for _, c := range pe.Properties.CustomDNSConfigs {
			if c == nil {
				continue
			}
			if ips := strs(c.IPAddresses); len(ips) > 0 {
				add(str(c.Fqdn), ips[0], pe, subnet, peFrom)
			}
		}
		for _, g := range s.ZoneGroups[strings.ToLower(str(pe.ID))] {
			for _, zc := range zoneConfigs(g) {
				zone := strings.ToLower(idName(str(zc.Properties.PrivateDNSZoneID)))
				for _, rs := range zc.Properties.RecordSets {
					if rs == nil || !strings.EqualFold(str(rs.RecordType), "A") {
						continue
					}
					if ips := strs(rs.IPAddresses); len(ips) > 0 && zone != "" {
						add(publicName(str(rs.RecordSetName), zone), ips[0], pe, subnet, s.from(fromZoneGroups, str(pe.ID)))
					}
				}
			}
		}
		for _, ni := range pe.Properties.NetworkInterfaces {
			nic := s.endpointNIC(str(ni.ID))
			if nic == nil || nic.Properties == nil {
				continue
			}
			for _, ipc := range nic.Properties.IPConfigurations {
				if ipc == nil || ipc.Properties == nil || ipc.Properties.PrivateLinkConnectionProperties == nil {
					continue
				}
				for _, f := range strs(ipc.Properties.PrivateLinkConnectionProperties.Fqdns) {
					add(f, str(ipc.Properties.PrivateIPAddress), pe, subnet, s.from(fromPENIC, str(nic.ID)))
				}
			}
		}
	}
	if s.Registry != nil && s.Registry.Properties != nil {
		for _, h := range strs(s.Registry.Properties.DataEndpointHostNames) {
			h = strings.ToLower(h)
			if !seen[h] && len(s.PrivateEndpoints) > 0 {
				c := Check{Step: StepEndpoints, Endpoint: h, Certain: true, Cause: verdict.CodeDNSNoEndpointIP, role: verdict.RoleBlob,
					Summary: fmt.Sprintf("The registry serves data endpoint %s but no private endpoint's DNS configuration gives it an address: only the manifest endpoint is reachable.", h),
					Setting: fmt.Sprintf("registry %s dataEndpointHostNames lists %s; private endpoint customDnsConfigs do not", str(s.Registry.Name), h)}
				c.From = froms(s.from(fromACR, ""))
				for _, pe := range s.PrivateEndpoints {
					c.From = froms(append(c.From, s.from(fromPE, str(pe.ID)), s.from(fromZoneGroups, str(pe.ID)))...)
				}
				// customDnsConfigs may be empty when a zone group keeps the
				// records: without the zone group or the endpoint's NIC,
				// the address is not read rather than absent.
				if missing := s.endpointSourcesMissing(); missing != "" {
					c.Certain = false
					c.Settle = missing
				}
				checks = append(checks, c)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Role == verdict.RoleRegistry && out[j].Role != verdict.RoleRegistry })
	for _, t := range s.Targets {
		out = append(out, Endpoint{FQDN: strings.ToLower(t.Host), IP: t.IP, Role: verdict.RoleRegistry, From: "--target"})
	}
	return out, checks
}

// endpointSourcesMissing names the command that reads what a private
// endpoint with an empty customDnsConfigs keeps elsewhere (its zone
// groups, its NIC), or "" when all was read.
func (s *Snapshot) endpointSourcesMissing() string {
	for _, pe := range s.PrivateEndpoints {
		if pe == nil || pe.Properties == nil || len(pe.Properties.CustomDNSConfigs) > 0 {
			continue
		}
		if _, ok := s.ZoneGroups[strings.ToLower(str(pe.ID))]; ok {
			continue
		}
		return fmt.Sprintf("az network private-endpoint dns-zone-group list -g %s --endpoint-name %s", idGroup(str(pe.ID)), str(pe.Name))
	}
	return ""
}

func zoneConfigs(g *armnetwork.PrivateDNSZoneGroup) []*armnetwork.PrivateDNSZoneConfig {
	if g == nil || g.Properties == nil {
		return nil
	}
	var out []*armnetwork.PrivateDNSZoneConfig
	for _, zc := range g.Properties.PrivateDNSZoneConfigs {
		if zc != nil && zc.Properties != nil {
			out = append(out, zc)
		}
	}
	return out
}

// publicName is the public FQDN a record set of a privatelink zone
// stands for: "acrprod" in privatelink.azurecr.io is acrprod.azurecr.io.
func publicName(record, zone string) string {
	return strings.ToLower(record) + "." + strings.TrimPrefix(strings.ToLower(zone), "privatelink.")
}

func (s *Snapshot) endpointNIC(id string) *armnetwork.Interface {
	for _, n := range s.EndpointNICs {
		if n != nil && sameID(str(n.ID), id) {
			return n
		}
	}
	return nil
}

// acrRole: <reg>.<region>.data.azurecr.io serves layers (the blob role), the
// login server serves the API and the token realm.
func acrRole(fqdn string) verdict.Role {
	if strings.Contains(fqdn, ".data.") {
		return verdict.RoleBlob
	}
	return verdict.RoleRegistry
}

// zoneRecordName is the record set a public FQDN needs in the private zone:
// myreg.azurecr.io in privatelink.azurecr.io is "myreg", the data endpoint
// myreg.eastus.data.azurecr.io is "myreg.eastus.data". ok is false when the
// FQDN is not under the zone's public suffix.
func zoneRecordName(zone, fqdn string) (string, bool) {
	suffix := "." + strings.TrimPrefix(strings.ToLower(zone), "privatelink.")
	if zone == "" || !strings.HasSuffix(fqdn, suffix) {
		return "", false
	}
	return strings.TrimSuffix(fqdn, suffix), true
}

// routeView is the routes a pool's check reads: a NIC's effective routes,
// or routes rebuilt from the configuration with what that cannot see.
type routeView struct {
	routes        []*armnetwork.EffectiveRoute
	reconstructed bool
	// from names the dumps the routes come from.
	from []string
	// unknown lists, for rebuilt routes, the parts not read (each the
	// command that reads it): a verdict resting on them is uncertain.
	unknown []string
	// pePolicy holds, per endpoint IP, the command that would settle
	// whether a user route overrides its /32 route.
	pePolicy map[string]string
	// gateway is the gateway the node subnet learns BGP routes from
	// ("" when none can be reached), gatewayID its ID when known, and
	// propagation whether the subnet's route table lets them in.
	gateway, gatewayID string
	propagationOff     bool
	table              string
	tableID            string
}

func (s *Snapshot) analyzePool(p poolRef, eps []Endpoint, epChecks []Check) PoolReport {
	pr := PoolReport{Name: p.name, Subnet: p.subnet, SubnetPrefix: []string{}, DNSServers: []string{}, Checks: []Check{}}
	subnet := s.subnetByID(p.subnet)
	vnet := s.vnetByID(subnetVNetID(p.subnet))
	if vnet == nil || subnet == nil {
		pr.Checks = append(pr.Checks, Check{Step: StepEndpoints, Skipped: true, OK: true,
			Summary: fmt.Sprintf("the pool's subnet %q was not read: nothing to compare", p.subnet),
			Settle:  cmdVNet(subnetVNetID(p.subnet))})
		pr.Verdict = finish(pr.Checks)
		return pr
	}
	pr.VNet = str(vnet.Name)
	pr.SubnetPrefix = subnetPrefixes(subnet)
	pr.DNSServers = append(pr.DNSServers, vnetDNSServers(vnet)...)
	nic := s.NICs[p.name]
	rv := routeView{}
	if subnet.Properties != nil && subnet.Properties.RouteTable != nil {
		rv.tableID = str(subnet.Properties.RouteTable.ID)
		rv.table = idName(rv.tableID)
	}
	if nic != nil {
		pr.NIC = nic.ID
		rv.routes = nic.Routes
	}
	if rv.routes != nil {
		pr.RoutesFrom = "effective routes of " + idName(pr.NIC)
		rv.from = froms(s.from(fromRoutes, p.name))
	} else {
		s.reconstructRoutes(vnet, subnet, eps, &rv)
		pr.RoutesFrom = "reconstructed from the VNet, its peerings and the subnet's route table (no effective routes read"
		if nic != nil && nic.RoutesNote != "" {
			pr.RoutesFrom += ": " + nic.RoutesNote
		}
		switch {
		case rv.gateway == "":
			pr.RoutesFrom += "); no gateway reaches the subnet, so no routes are learned by BGP"
		case rv.propagationOff:
			pr.RoutesFrom += fmt.Sprintf("); route table %s disables gateway route propagation", rv.table)
		case s.Gateway.Learned != nil:
			pr.RoutesFrom += fmt.Sprintf("), with the routes the gateway in %s learned (%s)", rv.gateway, s.from(fromLearned, ""))
		default:
			pr.RoutesFrom += "); routes a gateway learns by BGP cannot be seen this way"
		}
	}
	if len(eps) == 0 {
		c := Check{Step: StepEndpoints, Certain: true, Cause: verdict.CodeDNSNoEndpointIP, role: verdict.RoleRegistry,
			Summary: "No private endpoint of the registry gives an address for any of its names: the nodes would reach it over its public endpoint, or not at all.",
			Setting: "private endpoint customDnsConfigs (none read)"}
		for _, pe := range s.PrivateEndpoints {
			c.From = append(c.From, s.from(fromPE, str(pe.ID)))
		}
		c.From = froms(c.From...)
		if len(c.From) == 0 {
			c.Certain = false
			c.Settle = "az network private-endpoint show -g <rg> -n <registry's private endpoint> (--from-az reads it as private-endpoint.json)"
		} else if missing := s.endpointSourcesMissing(); missing != "" {
			c.Certain = false
			c.Settle = missing
		}
		pr.Checks = append(pr.Checks, c)
	}
	pr.Checks = append(pr.Checks, epChecks...)
	pr.Checks = append(pr.Checks, s.resolverCheck(vnet, eps)...)
	for _, ep := range eps {
		ip, err := netip.ParseAddr(ep.IP)
		if err != nil {
			pr.Checks = append(pr.Checks, Check{Step: StepEndpoints, Endpoint: ep.FQDN, Skipped: true, OK: true,
				Summary: fmt.Sprintf("address %q is not an IP address", ep.IP)})
			continue
		}
		if c, ok := s.recordCheck(ep); ok {
			pr.Checks = append(pr.Checks, c)
		}
		pr.Checks = append(pr.Checks, s.routeCheck(vnet, &rv, ep, ip))
		pr.Checks = append(pr.Checks, s.securityCheck(nic, p.name, vnet, pr.SubnetPrefix, ep, ip))
		pr.Checks = append(pr.Checks, s.returnCheck(vnet, pr.SubnetPrefix, &rv, ep, ip))
	}
	pr.Verdict = finish(pr.Checks)
	return pr
}

// resolverCheck: which resolver the nodes use, and whether it can see the
// private zone.
func (s *Snapshot) resolverCheck(vnet *armnetwork.VirtualNetwork, eps []Endpoint) []Check {
	var acr []Endpoint
	for _, ep := range eps {
		if _, ok := zoneRecordName(s.Zone.Name, ep.FQDN); ok {
			acr = append(acr, ep)
		}
	}
	if len(acr) == 0 {
		return nil
	}
	first := acr[0]
	vnetFrom := s.from(fromVNet, str(vnet.ID))
	var servers []string
	for _, srv := range vnetDNSServers(vnet) {
		if srv != azureDNS { // naming Azure DNS itself is not a custom server
			servers = append(servers, srv)
		}
	}
	if !s.Zone.LinksRead {
		c := Check{Step: StepDNS, Endpoint: first.FQDN, Skipped: true, OK: true,
			Summary: fmt.Sprintf("the virtual network links of private DNS zone %s were not read: whether VNet %s resolves the private names is not checked", s.Zone.Name, str(vnet.Name)),
			Settle:  cmdLinks(s.Zone.Name)}
		return []Check{c}
	}
	linksFrom := s.from(fromLinks, "")
	if len(servers) == 0 {
		if link := s.zoneLink(str(vnet.ID)); link != "" {
			return []Check{{Step: StepDNS, Endpoint: first.FQDN, OK: true, Certain: true, From: froms(vnetFrom, linksFrom),
				Summary: fmt.Sprintf("VNet %s uses Azure DNS and zone %s is linked to it (link %s)", str(vnet.Name), s.Zone.Name, link)}}
		}
		return []Check{{Step: StepDNS, Endpoint: first.FQDN, Certain: true, Cause: verdict.CodeDNSZoneNotLinked, role: first.Role, From: froms(vnetFrom, linksFrom),
			Summary: fmt.Sprintf("VNet %s uses Azure DNS but private DNS zone %s has no virtual network link to it: the nodes resolve %s to its public address.", str(vnet.Name), s.Zone.Name, first.FQDN),
			Setting: fmt.Sprintf("private DNS zone %s: virtual network links (none to %s)", s.Zone.Name, str(vnet.Name))}}
	}
	var out []Check
	unseen := []string{}
	for _, srv := range servers {
		ip, err := netip.ParseAddr(srv)
		var home *armnetwork.VirtualNetwork
		if err == nil {
			home = s.vnetContaining(ip)
		}
		if home != nil && s.zoneLink(str(home.ID)) == "" {
			out = append(out, Check{Step: StepDNS, Endpoint: first.FQDN, Certain: true, Cause: verdict.CodeDNSZoneNotLinked, role: first.Role,
				From:    froms(vnetFrom, s.from(fromVNet, str(home.ID)), linksFrom),
				Summary: fmt.Sprintf("VNet %s uses custom DNS server %s, which lives in VNet %s, and zone %s is not linked to %s: even forwarding to %s there cannot see the private records.", str(vnet.Name), srv, str(home.Name), s.Zone.Name, str(home.Name), azureDNS),
				Setting: fmt.Sprintf("private DNS zone %s: virtual network links (none to %s, the DNS server's VNet)", s.Zone.Name, str(home.Name))})
			continue
		}
		unseen = append(unseen, srv)
	}
	if len(unseen) > 0 {
		out = append(out, Check{Step: StepDNS, Endpoint: first.FQDN, Certain: false, Cause: verdict.CodeDNSCustomForwarder, role: first.Role,
			From:    froms(vnetFrom, linksFrom),
			Settle:  fmt.Sprintf("on each of %s: the conditional forwarder for azurecr.io (or privatelink.azurecr.io) → %s; from a node: dig %s", strings.Join(unseen, ", "), azureDNS, first.FQDN),
			Summary: fmt.Sprintf("VNet %s uses custom DNS servers %s: whether they forward %s to Azure DNS cannot be seen from Azure's configuration. Check the conditional forwarder for azurecr.io → %s on each.", str(vnet.Name), strings.Join(unseen, ", "), s.Zone.Name, azureDNS),
			Setting: fmt.Sprintf("VNet %s dhcpOptions.dnsServers %s; on those servers: conditional forwarder azurecr.io → %s", str(vnet.Name), strings.Join(unseen, ","), azureDNS)})
	}
	return out
}

// zoneLink names the zone's completed link to a VNet, or "".
func (s *Snapshot) zoneLink(vnetID string) string {
	for _, l := range s.Zone.Links {
		if l == nil || l.Properties == nil || l.Properties.VirtualNetwork == nil {
			continue
		}
		if sameID(str(l.Properties.VirtualNetwork.ID), vnetID) {
			if st := str(l.Properties.VirtualNetworkLinkState); st != "" && st != "Completed" {
				continue
			}
			return str(l.Name)
		}
	}
	return ""
}

// recordCheck: the zone holds an A record for the FQDN with the endpoint's
// IP. Without the zone's records, the record sets of the endpoint's
// private DNS zone group (which Azure keeps in the zone) stand for them.
func (s *Snapshot) recordCheck(ep Endpoint) (Check, bool) {
	name, ok := zoneRecordName(s.Zone.Name, ep.FQDN)
	if !ok || ep.PrivateEndpoint == "" {
		return Check{}, false
	}
	c := Check{Step: StepDNS, Endpoint: ep.FQDN, Certain: true, role: ep.Role}
	manifestOnly := ""
	if ep.Role == verdict.RoleBlob {
		manifestOnly = " Only the manifest endpoint is reachable: the login server answers, but every layer download redirected here fails."
	}
	if !s.Zone.RecordsRead {
		if g, from := s.zoneGroupRecord(ep, name); g != nil {
			ips := strs(g.IPAddresses)
			for _, ip := range ips {
				if ip == ep.IP {
					c.OK, c.From = true, froms(from)
					c.Summary = fmt.Sprintf("%s.%s A %s (kept by the endpoint's private DNS zone group)", name, s.Zone.Name, ep.IP)
					return c, true
				}
			}
		}
		c.OK, c.Skipped, c.Certain = true, true, false
		c.Summary = fmt.Sprintf("the A records of zone %s were not read: record %s not checked", s.Zone.Name, name)
		c.Settle = cmdRecords(s.Zone.Name)
		return c, true
	}
	c.From = froms(s.from(fromRecords, ""), ep.From)
	for _, rs := range s.Zone.Records {
		if rs == nil || !strings.EqualFold(str(rs.Name), name) {
			continue
		}
		var ips []string
		if rs.Properties != nil {
			for _, a := range rs.Properties.ARecords {
				if a != nil {
					ips = append(ips, str(a.IPv4Address))
				}
			}
		}
		for _, ip := range ips {
			if ip == ep.IP {
				c.OK = true
				c.Summary = fmt.Sprintf("%s.%s A %s", name, s.Zone.Name, ep.IP)
				return c, true
			}
		}
		c.Cause = verdict.CodeDNSWrongRecord
		c.Summary = fmt.Sprintf("Record %s.%s holds %s, not the private endpoint's %s.%s", name, s.Zone.Name, strings.Join(ips, ","), ep.IP, manifestOnly)
		c.Setting = fmt.Sprintf("private DNS zone %s, A record %s", s.Zone.Name, name)
		return c, true
	}
	c.Cause = verdict.CodeDNSMissingRecord
	c.Summary = fmt.Sprintf("Private DNS zone %s has no A record %s for %s (%s).%s", s.Zone.Name, name, ep.FQDN, ep.IP, manifestOnly)
	c.Setting = fmt.Sprintf("private DNS zone %s, A record %s → %s (missing)", s.Zone.Name, name, ep.IP)
	return c, true
}

// zoneGroupRecord finds the record set a private endpoint's zone group
// keeps for name in the zone.
func (s *Snapshot) zoneGroupRecord(ep Endpoint, name string) (*armnetwork.RecordSet, string) {
	for _, pe := range s.PrivateEndpoints {
		if pe == nil || !strings.EqualFold(str(pe.Name), ep.PrivateEndpoint) {
			continue
		}
		for _, g := range s.ZoneGroups[strings.ToLower(str(pe.ID))] {
			for _, zc := range zoneConfigs(g) {
				if !strings.EqualFold(idName(str(zc.Properties.PrivateDNSZoneID)), s.Zone.Name) {
					continue
				}
				for _, rs := range zc.Properties.RecordSets {
					if rs != nil && strings.EqualFold(str(rs.RecordSetName), name) {
						return rs, s.from(fromZoneGroups, str(pe.ID))
					}
				}
			}
		}
	}
	return nil, ""
}

// routeCheck: the route that decides ep.IP, and the peering or gateway
// behind it.
func (s *Snapshot) routeCheck(vnet *armnetwork.VirtualNetwork, rv *routeView, ep Endpoint, ip netip.Addr) Check {
	r, p := lpm(rv.routes, ip)
	m := routeMatch(r, p, ip, rv.table)
	c := Check{Step: StepRoute, Endpoint: ep.FQDN, Certain: true, Route: m, role: ep.Role, From: append([]string(nil), rv.from...)}
	hop := m.NextHopType
	var out Check
	switch {
	case r == nil:
		out = s.noRoute(c, vnet, rv, ip, "no route at all matches it")
	case hop == hopNone && m.Source == string(armnetwork.EffectiveRouteSourceUser):
		c.Cause = verdict.CodeRouteBlackhole
		c.Summary = fmt.Sprintf("%s (%s) is sent to next hop None by %s: a blackhole.", ep.FQDN, ip, m.describe())
		c.Setting = m.describe()
		out = c
	case hop == hopNone:
		out = s.noRoute(c, vnet, rv, ip, "only Azure's default route "+m.Prefix+" → None matches it")
	case hop == hopInternet && isPrivate(ip):
		out = s.noRoute(c, vnet, rv, ip, "only the route "+m.Prefix+" → Internet matches it, which cannot carry a private address")
	case hop == hopPeering || hop == hopGlobalPeering:
		out = s.peeringCheck(c, vnet, ip)
	case hop == hopGateway:
		c.OK = true
		c.Summary = fmt.Sprintf("%s (%s) → %s (%s)", ep.FQDN, ip, hopGateway, m.describe())
		if m.Source == string(armnetwork.EffectiveRouteSourceVirtualNetworkGateway) && rv.reconstructed {
			c.From = append(c.From, s.from(fromLearned, ""))
		}
		out = c
	case hop == hopAppliance:
		c.OK, c.Certain = true, false
		c.Summary = fmt.Sprintf("%s (%s) → appliance %s (%s): its own rules and its route back cannot be seen from here", ep.FQDN, ip, strings.Join(m.NextHopIP, ","), m.describe())
		c.Settle = fmt.Sprintf("the appliance %s: its forwarding rules for TCP 443 to %s and its route back to the node subnet", strings.Join(m.NextHopIP, ","), ip)
		out = c
	default:
		c.OK = true
		c.Summary = fmt.Sprintf("%s (%s) → %s (%s)", ep.FQDN, ip, hop, m.describe())
		out = c
	}
	out.From = froms(out.From...)
	if rv.reconstructed && out.Certain {
		unknown := rv.unknown
		if cmd := rv.pePolicy[ip.String()]; cmd != "" {
			unknown = append(append([]string(nil), unknown...), cmd)
		}
		if len(unknown) > 0 {
			out.Certain = false
			out.Settle = strings.Join(unknown, "; ")
		}
	}
	return out
}

// noRoute explains why nothing routes ip: a missing or broken peering to
// the VNet that holds it, missing gateway transit toward a network behind
// a gateway, gateway routes that never reach the subnet, or simply no
// route.
func (s *Snapshot) noRoute(c Check, vnet *armnetwork.VirtualNetwork, rv *routeView, ip netip.Addr, why string) Check {
	c.OK = false
	where := fmt.Sprintf("%s for %s: %s", c.Endpoint, ip, why)
	if home := s.vnetContaining(ip); home != nil && !sameID(str(home.ID), str(vnet.ID)) {
		if out := s.peeringCheck(c, vnet, ip); !out.OK {
			out.Summary = "No route " + where + ". " + out.Summary
			if !out.Certain && !rv.reconstructed {
				// The NIC's effective routes prove there is no route;
				// only the explanation is unproved.
				out.Certain = true
				out.Cause = verdict.CodeRouteNoRoute
				out.Setting = fmt.Sprintf("routes of the node subnet (VNet %s): none toward %s (VNet %s)", str(vnet.Name), ip, str(home.Name))
			}
			return out
		}
	}
	if gw := s.transitCheck(c, vnet, ip); gw != nil {
		gw.Summary = "No route " + where + ". " + gw.Summary
		return *gw
	}
	outside := s.vnetContaining(ip) == nil
	if rv.reconstructed && outside && rv.gateway != "" {
		if rv.propagationOff {
			c.Cause = verdict.CodeRoutePropagationDisabled
			c.Summary = fmt.Sprintf("No route %s. %s is outside every VNet read, behind the gateway in %s, but route table %s sets disableBgpRoutePropagation: the routes the gateway learns never reach the node subnet, and no user route sends %s there.", where, ip, rv.gateway, rv.table, ip)
			c.Setting = fmt.Sprintf("route table %s disableBgpRoutePropagation=true", rv.table)
			c.From = froms(append(c.From, s.from(fromRouteTable, rv.tableID))...)
			return c
		}
		if s.Gateway.Learned == nil {
			c.Cause = verdict.CodeRouteNoRoute
			c.Certain = false
			c.Summary = fmt.Sprintf("No route seen %s. %s is outside every VNet read; the gateway in %s reaches the node subnet and gateway route propagation is on, so a route it learned by BGP may carry it, and those cannot be seen from the configuration.", where, ip, rv.gateway)
			c.Setting = fmt.Sprintf("routes of the node subnet (VNet %s): none seen toward %s; routes learned by the gateway in %s: not read", str(vnet.Name), ip, rv.gateway)
			c.Settle = cmdLearned(rv.gatewayID)
			return c
		}
		c.From = froms(append(c.From, s.from(fromLearned, ""))...)
		why += fmt.Sprintf(", and none of the routes the gateway in %s learned covers it", rv.gateway)
		where = fmt.Sprintf("%s for %s: %s", c.Endpoint, ip, why)
	}
	c.Cause = verdict.CodeRouteNoRoute
	c.Summary = "No route " + where + "."
	c.Setting = fmt.Sprintf("routes of the node subnet (VNet %s): none toward %s", str(vnet.Name), ip)
	if c.Route != nil && c.Route.Prefix != "" {
		c.Setting += " (decided by " + c.Route.describe() + ")"
	}
	return c
}

// peeringCheck: the node VNet's peering to the VNet holding ip, and the
// peering back, both connected with VNet access. A side whose peerings
// were not read is not a side without peerings.
func (s *Snapshot) peeringCheck(c Check, vnet *armnetwork.VirtualNetwork, ip netip.Addr) Check {
	home := s.vnetContaining(ip)
	if home == nil {
		c.OK, c.Certain = true, false
		c.Summary = fmt.Sprintf("%s (%s) → %s; the remote VNet was not read, so the peering back is not checked", c.Endpoint, ip, c.Route.NextHopType)
		c.Settle = "az network vnet show for the VNet that holds " + ip.String() + " (and az network vnet peering list for it)"
		return c
	}
	local, remote := str(vnet.ID), str(home.ID)
	ln, rn := str(vnet.Name), str(home.Name)
	out, outRead := s.peering(local, remote)
	back, backRead := s.peering(remote, local)
	c.From = froms(append(c.From, s.from(fromPeerings, local), s.from(fromPeerings, remote))...)
	c.Cause = verdict.CodeRoutePeering
	switch {
	case out == nil && !outRead:
		c.Certain = false
		c.Summary = fmt.Sprintf("The peerings of VNet %s were not read: whether it peers with %s, where %s lives, is unknown.", ln, rn, ip)
		c.Setting = fmt.Sprintf("VNet %s peerings: not read", ln)
		c.Settle = cmdPeerings(local)
	case out == nil:
		c.Summary = fmt.Sprintf("VNet %s has no peering to %s, where %s lives.", ln, rn, ip)
		c.Setting = fmt.Sprintf("VNet %s peerings: none to %s", ln, rn)
	case !peeringConnected(out):
		c.Summary = fmt.Sprintf("Peering %s (%s → %s) is %s: %s lacks its peering back to %s. A route one way is not a route.", str(out.Name), ln, rn, peeringState(out), rn, ln)
		c.Setting = fmt.Sprintf("VNet %s peerings: none (or not connected) to %s", rn, ln)
	case !accessAllowed(out):
		c.Summary = fmt.Sprintf("Peering %s (%s → %s) has allowVirtualNetworkAccess false.", str(out.Name), ln, rn)
		c.Setting = fmt.Sprintf("peering %s allowVirtualNetworkAccess", str(out.Name))
	case backRead && back == nil:
		c.Summary = fmt.Sprintf("VNet %s has no peering back to %s. A route one way is not a route.", rn, ln)
		c.Setting = fmt.Sprintf("VNet %s peerings: none to %s", rn, ln)
	case back != nil && !accessAllowed(back):
		c.Summary = fmt.Sprintf("Peering %s (%s → %s) has allowVirtualNetworkAccess false: replies cannot come back.", str(back.Name), rn, ln)
		c.Setting = fmt.Sprintf("peering %s allowVirtualNetworkAccess", str(back.Name))
	default:
		c.Cause = ""
		c.OK = true
		c.Certain = backRead
		c.Summary = fmt.Sprintf("%s (%s) → peering %s (%s → %s, %s)", c.Endpoint, ip, str(out.Name), ln, rn, peeringState(out))
		if back != nil {
			c.Summary += fmt.Sprintf(", back %s (%s)", str(back.Name), peeringState(back))
		} else {
			c.Settle = cmdPeerings(remote)
		}
		return c
	}
	c.OK = false
	return c
}

// transitCheck: ip lies outside every VNet read, so it is on-premises or
// beyond a gateway. If a peered VNet has a gateway, the node VNet needs
// useRemoteGateways on its side and the hub allowGatewayTransit on its.
func (s *Snapshot) transitCheck(c Check, vnet *armnetwork.VirtualNetwork, ip netip.Addr) *Check {
	if s.vnetContaining(ip) != nil {
		return nil
	}
	for _, p := range s.Peerings[strings.ToLower(str(vnet.ID))] {
		if p == nil || p.Properties == nil || p.Properties.RemoteVirtualNetwork == nil {
			continue
		}
		hubID := str(p.Properties.RemoteVirtualNetwork.ID)
		hub := s.vnetByID(hubID)
		back, backRead := s.peering(hubID, str(vnet.ID))
		transit := back != nil && flag(back.Properties.AllowGatewayTransit)
		if hub == nil && !transit {
			continue
		}
		if hub != nil && !hasGateway(hub) && !transit {
			continue
		}
		hubName := idName(hubID)
		var lacks []string
		var setting []string
		if !flag(p.Properties.UseRemoteGateways) {
			lacks = append(lacks, fmt.Sprintf("the node side (peering %s on %s) lacks useRemoteGateways", str(p.Name), str(vnet.Name)))
			setting = append(setting, fmt.Sprintf("peering %s useRemoteGateways=false", str(p.Name)))
		}
		switch {
		case back == nil && backRead:
			lacks = append(lacks, fmt.Sprintf("the hub side (%s) has no peering back", hubName))
			setting = append(setting, fmt.Sprintf("VNet %s: no peering to %s", hubName, str(vnet.Name)))
		case back != nil && !flag(back.Properties.AllowGatewayTransit):
			lacks = append(lacks, fmt.Sprintf("the hub side (peering %s on %s) lacks allowGatewayTransit", str(back.Name), hubName))
			setting = append(setting, fmt.Sprintf("peering %s allowGatewayTransit=false", str(back.Name)))
		case back == nil:
			lacks = append(lacks, fmt.Sprintf("the hub side's peering (%s) was not read", hubName))
		}
		if len(setting) == 0 {
			continue
		}
		out := c
		out.OK = false
		out.Cause = verdict.CodeRouteGatewayTransit
		out.Summary = fmt.Sprintf("%s is outside every VNet read, behind the gateway in %s, but gateway transit is off: %s.", ip, hubName, strings.Join(lacks, "; "))
		out.Setting = strings.Join(setting, "; ")
		out.From = froms(append(out.From, s.from(fromPeerings, str(vnet.ID)), s.from(fromPeerings, hubID), s.from(fromVNet, hubID))...)
		return &out
	}
	return nil
}

// securityCheck: the effective security rules for TCP 443 to ip.
func (s *Snapshot) securityCheck(nic *NodeNIC, pool string, vnet *armnetwork.VirtualNetwork, src []string, ep Endpoint, ip netip.Addr) Check {
	c := Check{Step: StepSecurity, Endpoint: ep.FQDN, Certain: true, role: ep.Role}
	if nic == nil || nic.Security == nil {
		c.OK, c.Skipped, c.Certain = true, true, false
		c.Summary = "effective security rules not read"
		if nic != nil && nic.SecurityNote != "" {
			c.Summary += ": " + nic.SecurityNote
		}
		c.Settle = cmdEffectiveNSG(pool)
		return c
	}
	c.From = froms(s.from(fromNSG, pool))
	space := vnetPrefixes(vnet)
	for _, p := range s.Peerings[strings.ToLower(str(vnet.ID))] {
		if peeringConnected(p) && p.Properties.RemoteAddressSpace != nil {
			space = append(space, strs(p.Properties.RemoteAddressSpace.AddressPrefixes)...)
		}
	}
	rules := decide(nic.Security, flow{src: src, dst: ip, port: 443, vnet: space, private: isPrivate(ip)})
	for _, r := range rules {
		if r.Access == string(armnetwork.SecurityRuleAccessDeny) {
			c.Rule = r
			c.Cause = verdict.CodeRouteNSGDeny
			c.Summary = fmt.Sprintf("Security rule %s (priority %d) in %s denies TCP 443 from the node to %s (%s).", r.Rule, r.Priority, orDash(r.NSG), ep.FQDN, ip)
			c.Setting = fmt.Sprintf("network security group %s, outbound rule %s (priority %d, Deny)", orDash(r.NSG), r.Rule, r.Priority)
			return c
		}
	}
	c.OK = true
	if len(rules) == 0 {
		c.Summary = fmt.Sprintf("no security rule matches TCP 443 to %s", ip)
		return c
	}
	c.Rule = rules[len(rules)-1]
	names := make([]string, 0, len(rules))
	for _, r := range rules {
		names = append(names, fmt.Sprintf("%s/%s (%d)", orDash(r.NSG), r.Rule, r.Priority))
	}
	c.Summary = fmt.Sprintf("TCP 443 to %s allowed by %s", ip, strings.Join(names, ", "))
	return c
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// returnCheck: replies from ep's subnet must route back to the node
// subnet. For an address outside Azure the way back is the on-premises
// router's: the gateway's advertised routes (when read) say whether Azure
// offers it the node subnet at all.
func (s *Snapshot) returnCheck(vnet *armnetwork.VirtualNetwork, nodePrefixes []string, rv *routeView, ep Endpoint, ip netip.Addr) Check {
	c := Check{Step: StepReturn, Endpoint: ep.FQDN, OK: true, role: ep.Role}
	nodeIP, ok := firstAddr(nodePrefixes)
	if !ok {
		c.Skipped = true
		c.Summary = "node subnet prefix unknown"
		c.Settle = cmdVNet(str(vnet.ID))
		return c
	}
	nodes := strings.Join(nodePrefixes, ",")
	if ep.Subnet == "" {
		home := s.vnetContaining(ip)
		if home != nil {
			c.Certain = true
			c.From = froms(s.from(fromVNet, str(home.ID)), s.from(fromPeerings, str(home.ID)))
			c.Summary = fmt.Sprintf("%s lies in VNet %s (return through the peering checked above)", ip, str(home.Name))
			return c
		}
		c.Summary = fmt.Sprintf("%s lies outside Azure (or in a VNet not read): its return route to the node subnet %s is outside Azure. Check that the on-premises router and firewall route %s back through the VPN (the gateway's BGP advertisements or static routes toward the local network gateway) and allow TCP 443 replies.", ip, nodes, nodes)
		c.Settle = cmdAdvertised(rv.gatewayID) + "; then the on-premises router's route to " + nodes
		if adv := s.Gateway.Advertised; adv != nil {
			c.From = froms(s.from(fromAdvertised, ""))
			covered := ""
			for _, r := range adv {
				if r == nil {
					continue
				}
				if p, err := netip.ParsePrefix(str(r.Network)); err == nil && p.Contains(nodeIP) {
					covered = p.String()
					break
				}
			}
			if covered == "" {
				c.OK = false
				c.Cause = verdict.CodeRouteReturnPath
				c.Summary = fmt.Sprintf("Replies from %s (%s, outside Azure) to the node subnet %s need a route back, and the gateway advertises none that covers it to its BGP peer (%d route(s) advertised): unless the on-premises side has a static route to %s, the replies are lost.", ep.FQDN, ip, nodes, len(adv), nodes)
				c.Setting = fmt.Sprintf("gateway advertised routes: none covering %s", nodes)
				c.Settle = "the on-premises router's routing table: a static route to " + nodes + " through the VPN"
			} else {
				c.Summary = fmt.Sprintf("the gateway advertises %s (covering the node subnet %s) to its BGP peer; whether the on-premises router and firewall accept it and allow TCP 443 replies cannot be seen from Azure", covered, nodes)
				c.Settle = "the on-premises router's route to " + nodes + " and its firewall's rule for TCP 443 replies"
			}
		}
		return c
	}
	sn := s.subnetByID(ep.Subnet)
	if sn == nil {
		c.Skipped = true
		c.Summary = fmt.Sprintf("endpoint subnet %s was not read", idName(ep.Subnet))
		c.Settle = cmdVNet(subnetVNetID(ep.Subnet))
		return c
	}
	c.Certain = true
	snFrom := s.from(fromVNet, subnetVNetID(ep.Subnet))
	c.From = froms(snFrom)
	if sn.Properties == nil || sn.Properties.RouteTable == nil {
		c.Summary = fmt.Sprintf("endpoint subnet %s has no route table: replies to %s follow system routes", str(sn.Name), nodes)
		return c
	}
	rtID := str(sn.Properties.RouteTable.ID)
	rt := s.routeTableByID(rtID)
	if rt == nil || rt.Properties == nil {
		c.Certain = false
		c.Summary = fmt.Sprintf("endpoint subnet %s has route table %s, which was not read", str(sn.Name), idName(rtID))
		c.Settle = cmdRouteTable(rtID)
		return c
	}
	c.From = froms(snFrom, s.from(fromRouteTable, rtID))
	var best *armnetwork.Route
	bestBits := -1
	for _, r := range rt.Properties.Routes {
		if r == nil || r.Properties == nil {
			continue
		}
		p, err := netip.ParsePrefix(str(r.Properties.AddressPrefix))
		if err == nil && p.Contains(nodeIP) && p.Bits() > bestBits {
			best, bestBits = r, p.Bits()
		}
	}
	if best == nil {
		c.Summary = fmt.Sprintf("route table %s of endpoint subnet %s has no route for %s: replies follow system routes", str(rt.Name), str(sn.Name), nodeIP)
		return c
	}
	hop := str(best.Properties.NextHopType)
	desc := fmt.Sprintf("route table %s, route %s: %s → %s", str(rt.Name), str(best.Name), str(best.Properties.AddressPrefix), hop)
	switch hop {
	case hopNone:
		c.OK = false
		c.Cause = verdict.CodeRouteReturnPath
		c.Summary = fmt.Sprintf("Replies from %s (subnet %s) to the node subnet %s are dropped by %s.", ep.FQDN, str(sn.Name), nodes, desc)
		c.Setting = desc
	case hopAppliance:
		c.Certain = false
		c.Summary = fmt.Sprintf("replies to the node subnet go through appliance %s (%s): check it forwards them and is the same hop the requests take (asymmetric paths are dropped by stateful firewalls)", str(best.Properties.NextHopIPAddress), desc)
		c.Settle = fmt.Sprintf("the appliance %s: its route to %s and whether requests take the same hop", str(best.Properties.NextHopIPAddress), nodes)
	default:
		c.Summary = fmt.Sprintf("replies to the node subnet: %s", desc)
	}
	return c
}

// finish picks a pool's verdict: the first failing check in pull order
// that Azure's configuration proves, else the first it cannot rule out,
// else ok.
func finish(checks []Check) Verdict {
	var unsure *Check
	for i := range checks {
		c := &checks[i]
		if c.OK || c.Skipped {
			continue
		}
		if c.Certain {
			return toVerdict(c)
		}
		if unsure == nil {
			unsure = c
		}
	}
	if unsure != nil {
		return toVerdict(unsure)
	}
	v := Verdict{Verdict: verdict.OKVerdict("Azure's configuration gives the nodes a private path to every registry endpoint."), Source: SourceControlPlane, Certain: allCertain(checks)}
	for _, c := range checks {
		v.From = append(v.From, c.From...)
		if !c.Certain && v.Settle == "" {
			v.Settle = c.Settle
		}
	}
	v.From = froms(v.From...)
	return v
}

func allCertain(checks []Check) bool {
	for _, c := range checks {
		if !c.Certain {
			return false
		}
	}
	return true
}

func toVerdict(c *Check) Verdict {
	ep := ""
	if c.Endpoint != "" {
		ep = c.Endpoint + ":443"
	}
	d := verdict.Describe(c.Cause, c.role, ep)
	v := verdict.Verdict{Layer: verdict.LayerOf(c.Cause), Cause: c.Cause, Role: c.role, Owner: verdict.OwnerOf(c.Cause),
		Endpoint: ep, Summary: c.Summary, Next: d.Next, Evidence: c.Setting}
	out := Verdict{Verdict: v, Source: SourceControlPlane, Setting: c.Setting, Certain: c.Certain, From: froms(c.From...)}
	if !c.Certain {
		out.Settle = c.Settle
	}
	return out
}

// worst is the report's verdict: the first pool that fails (proved before
// unproved), else ok.
func worst(pools []PoolReport) Verdict {
	var unsure *Verdict
	for i := range pools {
		v := pools[i].Verdict
		if v.OK {
			continue
		}
		v.Summary = "pool " + pools[i].Name + ": " + v.Summary
		if v.Certain {
			return v
		}
		if unsure == nil {
			unsure = &v
		}
	}
	if unsure != nil {
		return *unsure
	}
	if len(pools) == 0 {
		return Verdict{Verdict: verdict.Verdict{Layer: verdict.LayerUnknown, Cause: verdict.CodeUnknown, Summary: "No node pool was checked.", Next: []string{"Pass --cluster (and --pool) naming an AKS cluster whose pools have subnets."}}, Source: SourceControlPlane}
	}
	v := pools[0].Verdict
	v.From = nil
	for _, p := range pools {
		v.From = append(v.From, p.Verdict.From...)
		if !p.Verdict.Certain {
			v.Certain = false
			if v.Settle == "" {
				v.Settle = p.Verdict.Settle
			}
		}
	}
	v.From = froms(v.From...)
	v.Summary = fmt.Sprintf("Azure's configuration gives every node pool checked (%d) a private path to every registry endpoint.", len(pools))
	return v
}
