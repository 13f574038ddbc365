package verdict

// The path-MTU and minimum-progress causes. They live in
// their own file so the main catalogue stays as it is.
//
// route.mtu is one cause for every step where a path-MTU black hole shows
// (the TLS handshake, a manifest, a blob): the fault is on the path, not in
// the certificate or the transfer, so its layer is route and its owner the
// network, whichever step revealed it. The failing step is named in the
// detail and in the trace (the "mtu" step of the endpoint). There is no
// tls.mtu.
func init() {
	register(
		Cause{Code: "route.mtu", Layer: LayerRoute, Owner: OwnerNetwork,
			Summary: "Large packets to or from {role} {endpoint} are lost on the path while small ones pass (a path-MTU black hole): a hop such as a VPN tunnel has a smaller MTU and the ICMP fragmentation-needed messages that would tell the sender are probably filtered. A redial with a small TCP MSS got through where the default one stalled.",
			Next: []string{
				"Clamp the TCP MSS on the VPN gateway or appliance toward the registry network (e.g. `iptables -t mangle -A FORWARD -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --clamp-mss-to-pmtu`, or the appliance's MSS-clamping setting; 1360 or less for IPsec).",
				"Check the tunnel's MTU and the MTU of every hop between the node and the registry (node NIC, overlay, VPN, firewall).",
				"Allow ICMP type 3 code 4 (fragmentation needed) and ICMPv6 type 2 (packet too big) from the path back to the registry and the node, so path-MTU discovery works.",
				credsIrrelevant}},
		Cause{Code: "transfer.stall", Layer: LayerTransfer,
			Summary: "{role} {endpoint} started an answer but sends it too slowly to finish (a trickle below the minimum progress, or past the time a manifest or token may take).",
			Next: []string{
				"Check the path to that host for a congested or throttled link, a proxy or appliance that holds the response, and the host's own load.",
				"The runtime would wait on such a transfer until the kubelet's deadline; " + everyHost}},
	)
}
