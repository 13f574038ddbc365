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
		rep.Warnings = append(rep.Warnings, verdict.Warning{Code: "azure.no-pools",
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

// endpoints lists every FQDN → IP the private endpoints' DNS configuration
// gives (login server first, then the data endpoints), then the hand-given
// targets. A data endpoint the registry serves that no private endpoint
// lists is a finding of its own.
func (s *Snapshot) endpoints() ([]Endpoint, []Check) {
	out := []Endpoint{}
	var checks []Check
	seen := map[string]bool{}
	for _, pe := range s.PrivateEndpoints {
		if pe == nil || pe.Properties == nil {
			continue
		}
		subnet := ""
		if pe.Properties.Subnet != nil {
			subnet = str(pe.Properties.Subnet.ID)
		}
		for _, c := range pe.Properties.CustomDNSConfigs {
			if c == nil {
				continue
			}
			fqdn := strings.ToLower(strings.TrimSuffix(str(c.Fqdn), "."))
			ips := strs(c.IPAddresses)
			if fqdn == "" || len(ips) == 0 || seen[fqdn] {
				continue
			}
			seen[fqdn] = true
			out = append(out, Endpoint{FQDN: fqdn, IP: ips[0], Role: acrRole(fqdn), PrivateEndpoint: str(pe.Name), Subnet: subnet})
		}
	}
	if s.Registry != nil && s.Registry.Properties != nil {
		for _, h := range strs(s.Registry.Properties.DataEndpointHostNames) {
			h = strings.ToLower(h)
			if !seen[h] && len(s.PrivateEndpoints) > 0 {
				checks = append(checks, Check{Step: StepEndpoints, Endpoint: h, Certain: true, Cause: "dns.no-endpoint-ip", role: verdict.RoleBlob,
					Summary: fmt.Sprintf("The registry serves data endpoint %s but no private endpoint's DNS configuration gives it an address: only the manifest endpoint is reachable.", h),
					Setting: fmt.Sprintf("registry %s dataEndpointHostNames lists %s; private endpoint customDnsConfigs do not", str(s.Registry.Name), h)})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Role == verdict.RoleRegistry && out[j].Role != verdict.RoleRegistry })
	for _, t := range s.Targets {
		out = append(out, Endpoint{FQDN: strings.ToLower(t.Host), IP: t.IP, Role: verdict.RoleRegistry})
	}
	return out, checks
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

func (s *Snapshot) analyzePool(p poolRef, eps []Endpoint, epChecks []Check) PoolReport {
	pr := PoolReport{Name: p.name, Subnet: p.subnet, SubnetPrefix: []string{}, DNSServers: []string{}, Checks: []Check{}}
	subnet := s.subnetByID(p.subnet)
	vnet := s.vnetByID(subnetVNetID(p.subnet))
	if vnet == nil || subnet == nil {
		pr.Checks = append(pr.Checks, Check{Step: StepEndpoints, Skipped: true, OK: true,
			Summary: fmt.Sprintf("the pool's subnet %q was not read: nothing to compare", p.subnet)})
		pr.Verdict = finish(pr.Checks)
		return pr
	}
	pr.VNet = str(vnet.Name)
	pr.SubnetPrefix = subnetPrefixes(subnet)
	pr.DNSServers = append(pr.DNSServers, vnetDNSServers(vnet)...)
	nic := s.NICs[p.name]
	routes := []*armnetwork.EffectiveRoute(nil)
	if nic != nil {
		pr.NIC = nic.ID
		routes = nic.Routes
	}
	if routes != nil {
		pr.RoutesFrom = "effective routes of " + idName(pr.NIC)
	} else {
		routes = s.reconstructRoutes(vnet, subnet)
		pr.RoutesFrom = "reconstructed from the VNet, its peerings and the subnet's route table (no effective routes read"
		if nic != nil && nic.RoutesNote != "" {
			pr.RoutesFrom += ": " + nic.RoutesNote
		}
		pr.RoutesFrom += "); routes a gateway learns by BGP cannot be seen this way"
	}
	if len(eps) == 0 {
		pr.Checks = append(pr.Checks, Check{Step: StepEndpoints, Certain: true, Cause: "dns.no-endpoint-ip", role: verdict.RoleRegistry,
			Summary: "No private endpoint of the registry gives an address for any of its names: the nodes would reach it over its public endpoint, or not at all.",
			Setting: "private endpoint customDnsConfigs (none read)"})
	}
	pr.Checks = append(pr.Checks, epChecks...)
	pr.Checks = append(pr.Checks, s.resolverCheck(vnet, eps)...)
	table := ""
	if subnet.Properties != nil && subnet.Properties.RouteTable != nil {
		table = idName(str(subnet.Properties.RouteTable.ID))
	}
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
		pr.Checks = append(pr.Checks, s.routeCheck(vnet, routes, table, ep, ip))
		pr.Checks = append(pr.Checks, securityCheck(nic, vnet, s, pr.SubnetPrefix, ep, ip))
		pr.Checks = append(pr.Checks, s.returnCheck(vnet, pr.SubnetPrefix, ep, ip))
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
	if !s.Zone.Read {
		return []Check{{Step: StepDNS, Endpoint: first.FQDN, Skipped: true, OK: true,
			Summary: fmt.Sprintf("private DNS zone %s was not read: records and links not checked", s.Zone.Name)}}
	}
	var servers []string
	for _, srv := range vnetDNSServers(vnet) {
		if srv != azureDNS { // naming Azure DNS itself is not a custom server
			servers = append(servers, srv)
		}
	}
	if len(servers) == 0 {
		if link := s.zoneLink(str(vnet.ID)); link != "" {
			return []Check{{Step: StepDNS, Endpoint: first.FQDN, OK: true, Certain: true,
				Summary: fmt.Sprintf("VNet %s uses Azure DNS and zone %s is linked to it (link %s)", str(vnet.Name), s.Zone.Name, link)}}
		}
		return []Check{{Step: StepDNS, Endpoint: first.FQDN, Certain: true, Cause: "dns.zone-not-linked", role: first.Role,
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
			out = append(out, Check{Step: StepDNS, Endpoint: first.FQDN, Certain: true, Cause: "dns.zone-not-linked", role: first.Role,
				Summary: fmt.Sprintf("VNet %s uses custom DNS server %s, which lives in VNet %s, and zone %s is not linked to %s: even forwarding to %s there cannot see the private records.", str(vnet.Name), srv, str(home.Name), s.Zone.Name, str(home.Name), azureDNS),
				Setting: fmt.Sprintf("private DNS zone %s: virtual network links (none to %s, the DNS server's VNet)", s.Zone.Name, str(home.Name))})
			continue
		}
		unseen = append(unseen, srv)
	}
	if len(unseen) > 0 {
		out = append(out, Check{Step: StepDNS, Endpoint: first.FQDN, Certain: false, Cause: "dns.custom-forwarder", role: first.Role,
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

// recordCheck: the zone holds an A record for the FQDN with the endpoint's IP.
func (s *Snapshot) recordCheck(ep Endpoint) (Check, bool) {
	name, ok := zoneRecordName(s.Zone.Name, ep.FQDN)
	if !ok || !s.Zone.Read {
		return Check{}, false
	}
	c := Check{Step: StepDNS, Endpoint: ep.FQDN, Certain: true, role: ep.Role}
	manifestOnly := ""
	if ep.Role == verdict.RoleBlob {
		manifestOnly = " Only the manifest endpoint is reachable: the login server answers, but every layer download redirected here fails."
	}
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
		c.Cause = "dns.wrong-record"
		c.Summary = fmt.Sprintf("Record %s.%s holds %s, not the private endpoint's %s.%s", name, s.Zone.Name, strings.Join(ips, ","), ep.IP, manifestOnly)
		c.Setting = fmt.Sprintf("private DNS zone %s, A record %s", s.Zone.Name, name)
		return c, true
	}
	c.Cause = "dns.missing-record"
	c.Summary = fmt.Sprintf("Private DNS zone %s has no A record %s for %s (%s).%s", s.Zone.Name, name, ep.FQDN, ep.IP, manifestOnly)
	c.Setting = fmt.Sprintf("private DNS zone %s, A record %s → %s (missing)", s.Zone.Name, name, ep.IP)
	return c, true
}

// routeCheck: the route that decides ep.IP, and the peering or gateway
// behind it.
func (s *Snapshot) routeCheck(vnet *armnetwork.VirtualNetwork, routes []*armnetwork.EffectiveRoute, table string, ep Endpoint, ip netip.Addr) Check {
	r, p := lpm(routes, ip)
	m := routeMatch(r, p, ip, table)
	c := Check{Step: StepRoute, Endpoint: ep.FQDN, Certain: true, Route: m, role: ep.Role}
	hop := m.NextHopType
	switch {
	case r == nil:
		return s.noRoute(c, vnet, ip, "no route at all matches it")
	case hop == hopNone && m.Source == string(armnetwork.EffectiveRouteSourceUser):
		c.Cause = "route.blackhole"
		c.Summary = fmt.Sprintf("%s (%s) is sent to next hop None by %s: a blackhole.", ep.FQDN, ip, m.describe())
		c.Setting = m.describe()
		return c
	case hop == hopNone:
		return s.noRoute(c, vnet, ip, "only Azure's default route "+m.Prefix+" → None matches it")
	case hop == hopInternet && isPrivate(ip):
		return s.noRoute(c, vnet, ip, "only the route "+m.Prefix+" → Internet matches it, which cannot carry a private address")
	case hop == hopPeering || hop == hopGlobalPeering:
		return s.peeringCheck(c, vnet, ip)
	case hop == hopGateway:
		c.OK = true
		c.Summary = fmt.Sprintf("%s (%s) → %s (%s)", ep.FQDN, ip, hopGateway, m.describe())
		return c
	case hop == hopAppliance:
		c.OK, c.Certain = true, false
		c.Summary = fmt.Sprintf("%s (%s) → appliance %s (%s): its own rules and its route back cannot be seen from here", ep.FQDN, ip, strings.Join(m.NextHopIP, ","), m.describe())
		return c
	}
	c.OK = true
	c.Summary = fmt.Sprintf("%s (%s) → %s (%s)", ep.FQDN, ip, hop, m.describe())
	return c
}

// noRoute explains why nothing routes ip: a missing or broken peering to
// the VNet that holds it, missing gateway transit toward a network behind
// a gateway, or simply no route.
func (s *Snapshot) noRoute(c Check, vnet *armnetwork.VirtualNetwork, ip netip.Addr, why string) Check {
	c.OK = false
	where := fmt.Sprintf("%s for %s: %s", c.Endpoint, ip, why)
	if home := s.vnetContaining(ip); home != nil && !sameID(str(home.ID), str(vnet.ID)) {
		if out := s.peeringCheck(c, vnet, ip); !out.OK {
			out.Summary = "No route " + where + ". " + out.Summary
			return out
		}
	}
	if gw := s.transitCheck(c, vnet, ip); gw != nil {
		gw.Summary = "No route " + where + ". " + gw.Summary
		return *gw
	}
	c.Cause = "route.no-route"
	c.Summary = "No route " + where + "."
	c.Setting = fmt.Sprintf("routes of the node subnet (VNet %s): none toward %s", str(vnet.Name), ip)
	if c.Route != nil && c.Route.Prefix != "" {
		c.Setting += " (decided by " + c.Route.describe() + ")"
	}
	return c
}

// peeringCheck: the node VNet's peering to the VNet holding ip, and the
// peering back, both connected with VNet access.
func (s *Snapshot) peeringCheck(c Check, vnet *armnetwork.VirtualNetwork, ip netip.Addr) Check {
	home := s.vnetContaining(ip)
	if home == nil {
		c.OK, c.Certain = true, false
		c.Summary = fmt.Sprintf("%s (%s) → %s; the remote VNet was not read, so the peering back is not checked", c.Endpoint, ip, c.Route.NextHopType)
		return c
	}
	local, remote := str(vnet.ID), str(home.ID)
	ln, rn := str(vnet.Name), str(home.Name)
	out, _ := s.peering(local, remote)
	back, backRead := s.peering(remote, local)
	c.Cause = "route.peering"
	switch {
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
		out.Cause = "route.gateway-transit"
		out.Summary = fmt.Sprintf("%s is outside every VNet read, behind the gateway in %s, but gateway transit is off: %s.", ip, hubName, strings.Join(lacks, "; "))
		out.Setting = strings.Join(setting, "; ")
		return &out
	}
	return nil
}

// securityCheck: the effective security rules for TCP 443 to ip.
func securityCheck(nic *NodeNIC, vnet *armnetwork.VirtualNetwork, s *Snapshot, src []string, ep Endpoint, ip netip.Addr) Check {
	c := Check{Step: StepSecurity, Endpoint: ep.FQDN, Certain: true, role: ep.Role}
	if nic == nil || nic.Security == nil {
		c.OK, c.Skipped, c.Certain = true, true, false
		c.Summary = "effective security rules not read"
		if nic != nil && nic.SecurityNote != "" {
			c.Summary += ": " + nic.SecurityNote
		}
		return c
	}
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
			c.Cause = "route.nsg-deny"
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

// returnCheck: replies from ep's subnet must route back to the node subnet.
func (s *Snapshot) returnCheck(vnet *armnetwork.VirtualNetwork, nodePrefixes []string, ep Endpoint, ip netip.Addr) Check {
	c := Check{Step: StepReturn, Endpoint: ep.FQDN, OK: true, role: ep.Role}
	nodeIP, ok := firstAddr(nodePrefixes)
	if !ok {
		c.Skipped = true
		c.Summary = "node subnet prefix unknown"
		return c
	}
	if ep.Subnet == "" {
		if s.vnetContaining(ip) == nil {
			c.Summary = fmt.Sprintf("%s lies outside Azure (or in a VNet not read): its return route to the node subnet %s is outside Azure. Check that the on-premises router and firewall route %s back through the VPN (the gateway's BGP advertisements or static routes toward the local network gateway) and allow TCP 443 replies.", ip, strings.Join(nodePrefixes, ","), strings.Join(nodePrefixes, ","))
			return c
		}
		c.Certain = true
		c.Summary = fmt.Sprintf("%s lies in VNet %s (return through the peering checked above)", ip, str(s.vnetContaining(ip).Name))
		return c
	}
	sn := s.subnetByID(ep.Subnet)
	if sn == nil {
		c.Skipped = true
		c.Summary = fmt.Sprintf("endpoint subnet %s was not read", idName(ep.Subnet))
		return c
	}
	c.Certain = true
	if sn.Properties == nil || sn.Properties.RouteTable == nil {
		c.Summary = fmt.Sprintf("endpoint subnet %s has no route table: replies to %s follow system routes", str(sn.Name), strings.Join(nodePrefixes, ","))
		return c
	}
	rtID := str(sn.Properties.RouteTable.ID)
	rt := s.routeTableByID(rtID)
	if rt == nil || rt.Properties == nil {
		c.Certain = false
		c.Summary = fmt.Sprintf("endpoint subnet %s has route table %s, which was not read", str(sn.Name), idName(rtID))
		return c
	}
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
		c.Cause = "route.return-path"
		c.Summary = fmt.Sprintf("Replies from %s (subnet %s) to the node subnet %s are dropped by %s.", ep.FQDN, str(sn.Name), strings.Join(nodePrefixes, ","), desc)
		c.Setting = desc
	case hopAppliance:
		c.Certain = false
		c.Summary = fmt.Sprintf("replies to the node subnet go through appliance %s (%s): check it forwards them and is the same hop the requests take (asymmetric paths are dropped by stateful firewalls)", str(best.Properties.NextHopIPAddress), desc)
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
	return Verdict{Verdict: verdict.OKVerdict("Azure's configuration gives the nodes a private path to every registry endpoint."), Source: SourceControlPlane, Certain: allCertain(checks)}
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
	return Verdict{Verdict: v, Source: SourceControlPlane, Setting: c.Setting, Certain: c.Certain}
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
		return Verdict{Verdict: verdict.Verdict{Layer: verdict.LayerUnknown, Cause: "unknown", Summary: "No node pool was checked.", Next: []string{"Pass --cluster (and --pool) naming an AKS cluster whose pools have subnets."}}, Source: SourceControlPlane}
	}
	v := pools[0].Verdict
	for _, p := range pools {
		if !p.Verdict.Certain {
			v.Certain = false
		}
	}
	v.Summary = fmt.Sprintf("Azure's configuration gives every node pool checked (%d) a private path to every registry endpoint.", len(pools))
	return v
}
