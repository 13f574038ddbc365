package verdict

// Causes that `pullpath azure` finds in Azure's configuration (the control
// plane) rather than on the wire. Each names the setting to change; the
// verdict's summary carries the exact resource and value.
func init() {
	register(
		Cause{Code: "dns.zone-not-linked", Layer: LayerDNS,
			Summary: "The private DNS zone that holds {endpoint} is not linked to the VNet whose resolver the nodes use, so the name resolves to the registry's public address.",
			Next:    []string{"Link the zone (privatelink.azurecr.io) to that VNet: `az network private-dns link vnet create -g <zone-rg> -z privatelink.azurecr.io -n <link> -v <vnet-id> -e false`.", credsIrrelevant}},
		Cause{Code: "dns.custom-forwarder", Layer: LayerDNS,
			Summary: "The node VNet uses custom DNS servers: whether they forward the registry's zone to Azure DNS (168.63.129.16) cannot be seen from Azure's configuration, and without that forwarder {endpoint} resolves to its public address.",
			Next:    []string{"On each custom DNS server, check for a conditional forwarder for azurecr.io (or privatelink.azurecr.io) to 168.63.129.16, from a server inside a VNet linked to the zone (or an Azure DNS Private Resolver inbound endpoint).", "Check from a node: `dig <registry>.azurecr.io` must answer a CNAME to <registry>.privatelink.azurecr.io and a private A record.", credsIrrelevant}},
		Cause{Code: "dns.missing-record", Layer: LayerDNS,
			Summary: "The private DNS zone has no A record for {endpoint}, so the node resolves it to a public address.",
			Next:    []string{"Add an A record for every FQDN of the private endpoint's DNS configuration (the login server and each <reg>.<region>.data endpoint, one per geo-replica), or attach a private DNS zone group to the endpoint so Azure keeps them.", credsIrrelevant}},
		Cause{Code: "dns.wrong-record", Layer: LayerDNS,
			Summary: "The private DNS zone's A record for {endpoint} does not hold the private endpoint's address (a stale record from a deleted or recreated endpoint).",
			Next:    []string{"Set the A record to the IP in the private endpoint's DNS configuration (`az network private-endpoint show ... --query customDnsConfigs`).", credsIrrelevant}},
		Cause{Code: "dns.no-endpoint-ip", Layer: LayerDNS, Owner: OwnerRegistry,
			Summary: "The registry serves {endpoint} but its private endpoint has no address for it (a replica or data endpoint added after the endpoint was created).",
			Next:    []string{"Recreate or update the private endpoint so its DNS configuration lists every data endpoint (<reg>.<region>.data.azurecr.io for each replica), then add the matching A records.", credsIrrelevant}},
		Cause{Code: "route.blackhole", Layer: LayerRoute,
			Summary: "A route on the node NIC sends {endpoint} to next hop None: Azure drops the packets, which the node sees as a connect timeout.",
			Next:    []string{"Change the named route (next hop VirtualNetworkGateway or the approved appliance) or remove it, in the route table associated with the node subnet.", credsIrrelevant}},
		Cause{Code: "route.no-route", Layer: LayerRoute,
			Summary: "No route on the node NIC leads toward {endpoint}: only Azure's default system route matches, which drops (None) or sends to the Internet a private address.",
			Next:    []string{"Give the node subnet a path to the registry network: a VNet peering, gateway transit through the hub's VPN gateway, or a user route to the approved appliance.", credsIrrelevant}},
		Cause{Code: "route.peering", Layer: LayerRoute,
			Summary: "The VNet peering toward {endpoint} does not carry traffic both ways (not connected, or the other side lacks its peering or VNet access).",
			Next:    []string{"Create or repair the peering on both sides until each reads peeringState Connected with allowVirtualNetworkAccess true (a route one way is not a route).", credsIrrelevant}},
		Cause{Code: "route.gateway-transit", Layer: LayerRoute,
			Summary: "The node VNet reaches the VPN gateway only through a peering without gateway transit, so it learns no route toward {endpoint}.",
			Next:    []string{"Set allowGatewayTransit on the hub's peering to the node VNet and useRemoteGateways on the node VNet's peering to the hub (both sides are needed), or route the node subnet through an approved appliance.", credsIrrelevant}},
		Cause{Code: "route.propagation-disabled", Layer: LayerRoute,
			Summary: "The node subnet's route table disables gateway route propagation (disableBgpRoutePropagation), so the routes the VPN or ExpressRoute gateway learns never reach the nodes, and no user route leads toward {endpoint}.",
			Next:    []string{"Set disableBgpRoutePropagation to false on the node subnet's route table (`az network route-table update -g <rg> -n <table> --disable-bgp-route-propagation false`), or add a user route for the registry's network with next hop VirtualNetworkGateway or the approved appliance.", credsIrrelevant}},
		Cause{Code: "route.nsg-deny", Layer: LayerRoute,
			Summary: "A network security rule on the node NIC or subnet denies TCP 443 from the node to {endpoint}.",
			Next:    []string{"Add an outbound allow rule for TCP 443 to the endpoint's address with a lower priority number than the named deny rule, in the named network security group.", credsIrrelevant}},
		Cause{Code: "route.return-path", Layer: LayerRoute,
			Summary: "The subnet of {endpoint} has no working return route to the node subnet, so replies never reach the node.",
			Next:    []string{"Fix the named route in the endpoint subnet's route table (it must reach the node subnet the way the request came), and check the return path of any appliance or on-premises router in between.", credsIrrelevant}},
	)
}
