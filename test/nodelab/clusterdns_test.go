package nodelab_test

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/pullpath/pullpath/internal/tiers"
	"github.com/pullpath/pullpath/test/nodelab"
)

// TestClusterDNSForwardsTheZone asks the cluster DNS from the control-plane
// namespace: a name under the zone is forwarded to the upstream (a DNS
// server on the lab's DNS address answering the registry's private
// address), a cluster.local search name gets NXDOMAIN without reaching it,
// and the public view answers NXDOMAIN for the registry. Of the node
// tier's prerequisites it uses only root and ip, but it runs (and says so,
// or why not) with the tier.
func TestClusterDNSForwardsTheZone(t *testing.T) {
	tiers.Require(t, tiers.Nodelab)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := nodelab.NewNet(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	pc, err := n.ListenPacket("udp", netip.AddrPortFrom(nodelab.DNS, 53).String())
	if err != nil {
		t.Fatal(err)
	}
	asked := make(chan string, 8)
	upstream := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, req *dns.Msg) {
		asked <- req.Question[0].Name
		m := new(dns.Msg)
		m.SetReply(req)
		m.Authoritative = true
		m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: req.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: net.IP(nodelab.Registry.AsSlice())})
		_ = w.WriteMsg(m)
	})}
	go func() { _ = upstream.ActivateAndServe() }()
	defer upstream.Shutdown()
	cd, err := n.ServeClusterDNS("lab.test", netip.AddrPortFrom(nodelab.DNS, 53))
	if err != nil {
		t.Fatal(err)
	}
	defer cd.Close()
	pv, err := n.ServePublicView()
	if err != nil {
		t.Fatal(err)
	}
	defer pv.Close()
	ask := func(server netip.Addr, name string) *dns.Msg {
		t.Helper()
		conn, err := n.Control.DialContext(ctx, "udp", netip.AddrPortFrom(server, 53).String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		co := &dns.Conn{Conn: conn}
		q := new(dns.Msg)
		q.SetQuestion(name, dns.TypeA)
		if err := co.WriteMsg(q); err != nil {
			t.Fatal(err)
		}
		r, err := co.ReadMsg()
		if err != nil {
			t.Fatalf("asking %s for %s: %v", server, name, err)
		}
		return r
	}
	r := ask(nodelab.ClusterDNSAddr, "registry.lab.test.")
	if r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 || r.Answer[0].(*dns.A).A.String() != nodelab.Registry.String() {
		t.Errorf("cluster DNS, registry.lab.test: %v", r)
	}
	if got := <-asked; got != "registry.lab.test." {
		t.Errorf("upstream asked %q", got)
	}
	if r := ask(nodelab.ClusterDNSAddr, "registry.lab.test.shop.svc.cluster.local."); r.Rcode != dns.RcodeNameError {
		t.Errorf("cluster DNS, a cluster.local search name: rcode %s, want NXDOMAIN", dns.RcodeToString[r.Rcode])
	}
	select {
	case q := <-asked:
		t.Errorf("the upstream was asked %q, outside the forward zone", q)
	default:
	}
	if r := ask(nodelab.PublicDNS, "registry.lab.test."); r.Rcode != dns.RcodeNameError {
		t.Errorf("public view: rcode %s, want NXDOMAIN", dns.RcodeToString[r.Rcode])
	}
}
