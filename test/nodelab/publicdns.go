package nodelab

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/miekg/dns"
)

// PublicView is a DNS server on PublicDNS:53 (UDP and TCP, inside the DNS
// namespace) for a network that is not linked to the lab's private zone, as
// an AKS node's VNet not linked to a private DNS zone: the zone's names do
// not exist there, so every question gets NXDOMAIN from a recursive
// resolver (RA set, not authoritative). A node whose resolv.conf names it
// cannot resolve the registry.
type PublicView struct {
	servers []*dns.Server
}

// ServePublicView starts the public view. Close stops it.
func (n *Net) ServePublicView() (*PublicView, error) {
	servers, err := n.serveDNS(netip.AddrPortFrom(PublicDNS, 53), dns.HandlerFunc(nxdomain))
	if err != nil {
		return nil, err
	}
	return &PublicView{servers: servers}, nil
}

// serveDNS serves h on addr over UDP and TCP, inside the namespace that
// holds the address, and returns once both servers run.
func (n *Net) serveDNS(ap netip.AddrPort, h dns.Handler) ([]*dns.Server, error) {
	addr := ap.String()
	pc, err := n.ListenPacket("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s udp: %w", addr, err)
	}
	ln, err := n.Listen("tcp", addr)
	if err != nil {
		_ = pc.Close()
		return nil, fmt.Errorf("listening on %s tcp: %w", addr, err)
	}
	var servers []*dns.Server
	fail := func(err error) ([]*dns.Server, error) {
		shutdown(servers)
		_ = pc.Close()
		_ = ln.Close()
		return nil, err
	}
	for _, srv := range []*dns.Server{{PacketConn: pc, Handler: h}, {Listener: ln, Handler: h, ReadTimeout: 5 * time.Second}} {
		started := make(chan struct{})
		srv.NotifyStartedFunc = func() { close(started) }
		done := make(chan error, 1)
		go func() { done <- srv.ActivateAndServe() }()
		select {
		case <-started:
			servers = append(servers, srv)
		case err := <-done:
			return fail(fmt.Errorf("serving DNS on %s: %w", addr, err))
		case <-time.After(10 * time.Second):
			return fail(fmt.Errorf("serving DNS on %s: not started after 10s", addr))
		}
	}
	return servers, nil
}

// nxdomain answers every question with NXDOMAIN: the public view knows no
// name of the lab (the node tier's other names come from /etc/hosts or are
// addresses).
func nxdomain(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetRcode(req, dns.RcodeNameError)
	m.RecursionAvailable = true
	_ = w.WriteMsg(m)
}

// Close stops the servers.
func (pv *PublicView) Close() error { return shutdown(pv.servers) }

func shutdown(servers []*dns.Server) error {
	var errs []error
	for _, s := range servers {
		if err := s.Shutdown(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
