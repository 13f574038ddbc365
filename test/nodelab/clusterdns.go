package nodelab

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// ClusterDNSAddr is the address of the pods' cluster DNS (ServeClusterDNS),
// in the DNS namespace: the kubelets' clusterDNS, as kube-dns's ClusterIP
// is on a real cluster.
var ClusterDNSAddr = netip.MustParseAddr("198.18.20.57")

// PodSubnet is the CNI bridge range of the node with the given Index.
func PodSubnet(index int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 244, byte(index), 0}), 24)
}

// PodRange covers every node's PodSubnet.
var PodRange = netip.MustParsePrefix("10.244.0.0/16")

// ClusterDNS is the pods' resolver: a forward zone, as a CoreDNS Corefile
// with `forward <zone> <upstream>` has, sends every name under Zone to
// Upstream (the lab's private zone); every other name, the cluster's own
// service names included (the tier runs no Service behind them), gets
// NXDOMAIN. A node whose own resolver is the public view resolves the
// registry publicly while its pods resolve it privately: the node's path
// and the pod's part at dns, as diagnose --pod-view shows.
type ClusterDNS struct {
	Zone     string
	Upstream netip.AddrPort
	n        *Net
	servers  []*dns.Server
}

// ServeClusterDNS starts the cluster DNS on ClusterDNSAddr:53 forwarding
// zone to upstream. Close stops it.
func (n *Net) ServeClusterDNS(zone string, upstream netip.AddrPort) (*ClusterDNS, error) {
	c := &ClusterDNS{Zone: dns.Fqdn(zone), Upstream: upstream, n: n}
	servers, err := n.serveDNS(netip.AddrPortFrom(ClusterDNSAddr, 53), dns.HandlerFunc(c.serve))
	if err != nil {
		return nil, err
	}
	c.servers = servers
	return c, nil
}

func (c *ClusterDNS) serve(w dns.ResponseWriter, req *dns.Msg) {
	if len(req.Question) != 1 || !dns.IsSubDomain(c.Zone, strings.ToLower(req.Question[0].Name)) {
		nxdomain(w, req)
		return
	}
	resp, err := c.forward(req)
	if err != nil {
		m := new(dns.Msg)
		m.SetRcode(req, dns.RcodeServerFailure)
		_ = w.WriteMsg(m)
		return
	}
	resp.Id = req.Id
	resp.RecursionAvailable = true
	_ = w.WriteMsg(resp)
}

// forward asks the upstream over UDP from inside the DNS namespace, with
// a deadline.
func (c *ClusterDNS) forward(req *dns.Msg) (*dns.Msg, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	conn, err := c.n.DNS.DialContext(ctx, "udp", c.Upstream.String())
	if err != nil {
		return nil, fmt.Errorf("dialing %s: %w", c.Upstream, err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(3 * time.Second))
	co := &dns.Conn{Conn: conn}
	q := req.Copy()
	if err := co.WriteMsg(q); err != nil {
		return nil, err
	}
	return co.ReadMsg()
}

// Close stops the servers.
func (c *ClusterDNS) Close() error { return shutdown(c.servers) }

// RoutePods lets the node's pods reach the lab's registry and DNS
// namespaces and be answered, as a cluster's pod network is routed: the
// router sends the node's PodSubnet to the node, and the registry and DNS
// namespaces send PodRange back through the router, and the node's
// namespace forwards (as the CNI bridge plugin with isGateway sets it).
// Only lab namespaces change.
func (n *Net) RoutePods(ctx context.Context, nd *Node) error {
	if err := nd.NS.Sysctl(ctx, "net.ipv4.ip_forward", "1"); err != nil {
		return fmt.Errorf("forwarding on %s: %w", nd.Spec.Name, err)
	}
	if err := n.Router.IP(ctx, "route", "replace", PodSubnet(nd.Spec.Index).String(), "via", nd.Addr.String()); err != nil {
		return fmt.Errorf("routing %s's pods: %w", nd.Spec.Name, err)
	}
	for _, h := range []struct {
		ns     string
		subnet netip.Prefix
	}{{"registry", RegistrySubnet}, {"dns", DNSSubnet}} {
		ns := n.Registry
		if h.ns == "dns" {
			ns = n.DNS
		}
		if err := ns.IP(ctx, "route", "replace", PodRange.String(), "via", gateway(h.subnet).String()); err != nil {
			return fmt.Errorf("routing pods back from %s: %w", h.ns, err)
		}
	}
	return nil
}
