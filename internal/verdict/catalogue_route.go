package verdict

// The route layer's causes and warnings.
var routeEntries = []Cause{
	Cause{Code: "route.timeout", Layer: LayerRoute,
		Summary: "Connecting to {role} {endpoint} timed out: packets are silently dropped on the forward or the return path.",
		Next:    []string{"Check the effective routes of the node's subnet/NIC toward the registry network, gateway transit through the intended VPN gateway or appliance, and the RETURN route from the registry side to the node subnet (a route one way is not a route).", "Check security rules at both ends (NSG/security groups, firewalls) for TCP to that port.", credsIrrelevant}},
	Cause{Code: "route.refused", Layer: LayerRoute,
		Summary: "{role} {endpoint} refused the connection: the address is reachable but nothing accepts on that port.",
		Next:    []string{"Check that the address the node resolves is the registry's (not a stale record) and that the service listens on that port; check proxies or firewalls that answer with a reset.", credsIrrelevant}},
	Cause{Code: "route.unreachable", Layer: LayerRoute,
		Summary: "The node has no route to {role} {endpoint} (network or host unreachable).",
		Next:    []string{"Check the node's routing table and the subnet's effective routes toward the registry network; add a route through the intended gateway.", credsIrrelevant}},
	Cause{Code: "route.reset", Layer: LayerRoute,
		Summary: "The connection to {role} {endpoint} was reset during connect: a firewall or proxy on the path is cutting it.",
		Next:    []string{"Check firewalls, TLS inspection appliances and egress rules on the path for the registry host names.", credsIrrelevant}},
	Cause{Code: "route.connect", Layer: LayerRoute,
		Summary: "Connecting to {role} {endpoint} failed (an operating-system error other than timeout, refusal, unreachable or reset).",
		Next:    []string{"Read the error in the evidence; check routes, firewalls and security rules between the node and that address.", credsIrrelevant}},
	Cause{Code: "route.proxy", Layer: LayerRoute,
		Summary: "The HTTPS proxy the runtime is configured with ({endpoint}) cannot be reached or refused the tunnel to the registry host.",
		Next:    []string{"Check HTTPS_PROXY/NO_PROXY in containerd's environment (systemctl show containerd -p Environment) and the proxy's reachability and allowlist.", credsIrrelevant}},

	// Found by `pullpath azure` in Azure's configuration (the control
	// plane) rather than on the wire. Each names the setting to change; the
	// verdict's summary carries the exact resource and value.
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

	// route.mtu is one cause for every step where a path-MTU black hole
	// shows (the TLS handshake, a manifest, a blob): the fault is on the
	// path, not in the certificate or the transfer, so its layer is route and
	// its owner the network, whichever step revealed it. The failing step is
	// named in the detail and in the trace (the "mtu" step of the endpoint).
	// There is no tls.mtu.
	Cause{Code: "route.mtu", Layer: LayerRoute, Owner: OwnerNetwork,
		Summary: "Large packets to or from {role} {endpoint} are lost on the path while small ones pass (a path-MTU black hole): a hop such as a VPN tunnel has a smaller MTU and the ICMP fragmentation-needed messages that would tell the sender are probably filtered. A redial with a small TCP MSS got through where the default one stalled.",
		Next: []string{
			"Clamp the TCP MSS on the VPN gateway or appliance toward the registry network (e.g. `iptables -t mangle -A FORWARD -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --clamp-mss-to-pmtu`, or the appliance's MSS-clamping setting; 1360 or less for IPsec).",
			"Check the tunnel's MTU and the MTU of every hop between the node and the registry (node NIC, overlay, VPN, firewall).",
			"Allow ICMP type 3 code 4 (fragmentation needed) and ICMPv6 type 2 (packet too big) from the path back to the registry and the node, so path-MTU discovery works.",
			credsIrrelevant}},

	// Warnings: what works today but will break or mislead.
	warning("mirror.unreachable", LayerRoute, OwnerNetwork,
		"A mirror from hosts.toml failed and the pull fell back to the next host: it works, but every pull pays the mirror's failure first, and a mirror that comes back half-working can break pulls.",
		"Fix the mirror's path (the cause in the message) or remove it from the node's hosts.toml."),
}
