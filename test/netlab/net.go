package netlab

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
)

// Addrs are the addresses of one Net. Every one lies in 198.18.0.0/15.
type Addrs struct {
	// Node and Node2 are the two nodes (each on its own subnet behind the
	// router).
	Node, Node2 netip.Addr
	// Registry, Auth, Blob and Mirror are the registry API host, its token
	// realm host, the host layer downloads are redirected to and a mirror,
	// all on the registry network.
	Registry, Auth, Blob, Mirror netip.Addr
	// Dead is an address on the registry network where nothing listens.
	Dead netip.Addr
	// DNS and DNS2 are two resolvers on the DNS host; DeadDNS is an address
	// on the DNS host where nothing listens.
	DNS, DNS2, DeadDNS netip.Addr
	// Public is an address routed nowhere, standing for the public answer a
	// resolver gives when it cannot see the private zone (198.19.0.0/16,
	// inside the lab's range, never a real public address).
	Public netip.Addr
}

// The subnets of a Net.
var (
	NodeSubnet     = netip.MustParsePrefix("198.18.1.0/24")
	Node2Subnet    = netip.MustParsePrefix("198.18.2.0/24")
	RegistrySubnet = netip.MustParsePrefix("198.18.10.0/24")
	DNSSubnet      = netip.MustParsePrefix("198.18.20.0/24")
	PublicSubnet   = netip.MustParsePrefix("198.19.0.0/16")
)

// DefaultAddrs are the addresses every Net uses (namespaces make them
// private to each Net, so parallel Nets do not collide).
var DefaultAddrs = Addrs{
	Node:     netip.MustParseAddr("198.18.1.10"),
	Node2:    netip.MustParseAddr("198.18.2.10"),
	Registry: netip.MustParseAddr("198.18.10.10"),
	Auth:     netip.MustParseAddr("198.18.10.11"),
	Blob:     netip.MustParseAddr("198.18.10.12"),
	Mirror:   netip.MustParseAddr("198.18.10.13"),
	Dead:     netip.MustParseAddr("198.18.10.14"),
	DNS:      netip.MustParseAddr("198.18.20.53"),
	DNS2:     netip.MustParseAddr("198.18.20.54"),
	DeadDNS:  netip.MustParseAddr("198.18.20.55"),
	Public:   netip.MustParseAddr("198.19.0.10"),
}

// gateway is the router's address on a subnet (.1).
func gateway(p netip.Prefix) netip.Addr {
	a := p.Addr().As4()
	a[3] = 1
	return netip.AddrFrom4(a)
}

var seq atomic.Int64

// Net is one lab network:
//
//	node  (198.18.1.10)  ─┐                 ┌─ registry (198.18.10.10-.14)
//	node2 (198.18.2.10)  ─┼─ router (.1s) ──┤
//	                      │                 └─ dns (198.18.20.53-.55)
//
// Each line is a veth pair; the router forwards between all four subnets.
// Node, Node2, Registry and DNS route the other subnets through the router
// with one route per subnet, so that a fault can remove one of them.
type Net struct {
	// ID is pp-<pid>-<seq>; every namespace name starts with it.
	ID string
	// Dir is a temporary directory owned by the Net (node roots, logs).
	Dir   string
	Addrs Addrs

	Node, Node2, Router, Registry, DNS *Netns

	owner map[netip.Addr]*Netns
	all   []*Netns
}

// New builds a Net. Close removes it; New removes what it built when it
// fails.
func New(ctx context.Context) (n *Net, err error) {
	KeepFDsFromDaemons()
	id := fmt.Sprintf("%s%d-%d", Prefix, os.Getpid(), seq.Add(1))
	dir, err := os.MkdirTemp("", id+"-")
	if err != nil {
		return nil, fmt.Errorf("creating lab directory: %w", err)
	}
	n = &Net{ID: id, Dir: dir, Addrs: DefaultAddrs, owner: map[netip.Addr]*Netns{}}
	defer func() {
		if err != nil {
			n.Close()
			n = nil
		}
	}()
	for _, h := range []struct {
		p    **Netns
		name string
	}{{&n.Node, "node"}, {&n.Node2, "node2"}, {&n.Router, "router"}, {&n.Registry, "registry"}, {&n.DNS, "dns"}} {
		ns, err := addNetns(ctx, id+"-"+h.name)
		if ns != nil {
			n.all = append(n.all, ns)
		}
		if err != nil {
			return nil, err
		}
		*h.p = ns
	}
	a := n.Addrs
	links := []struct {
		host   *Netns
		subnet netip.Prefix
		addrs  []netip.Addr
		dev    string // router side
	}{
		{n.Node, NodeSubnet, []netip.Addr{a.Node}, "to-node"},
		{n.Node2, Node2Subnet, []netip.Addr{a.Node2}, "to-node2"},
		{n.Registry, RegistrySubnet, []netip.Addr{a.Registry, a.Auth, a.Blob, a.Mirror, a.Dead}, "to-registry"},
		{n.DNS, DNSSubnet, []netip.Addr{a.DNS, a.DNS2, a.DeadDNS}, "to-dns"},
	}
	subnets := []netip.Prefix{NodeSubnet, Node2Subnet, RegistrySubnet, DNSSubnet, PublicSubnet}
	for _, l := range links {
		gw := gateway(l.subnet)
		bits := strconv.Itoa(l.subnet.Bits())
		if err := n.Router.IP(ctx, "link", "add", l.dev, "type", "veth", "peer", "name", "eth0", "netns", l.host.Name); err != nil {
			return nil, err
		}
		if err := n.Router.IP(ctx, "addr", "add", gw.String()+"/"+bits, "dev", l.dev); err != nil {
			return nil, err
		}
		if err := n.Router.IP(ctx, "link", "set", l.dev, "up"); err != nil {
			return nil, err
		}
		for _, ad := range l.addrs {
			if err := l.host.IP(ctx, "addr", "add", ad.String()+"/"+bits, "dev", "eth0"); err != nil {
				return nil, err
			}
			n.owner[ad] = l.host
		}
		if err := l.host.IP(ctx, "link", "set", "eth0", "up"); err != nil {
			return nil, err
		}
		for _, s := range subnets {
			if s == l.subnet {
				continue
			}
			if err := l.host.IP(ctx, "route", "add", s.String(), "via", gw.String()); err != nil {
				return nil, err
			}
		}
	}
	if err := n.Router.Sysctl(ctx, "net.ipv4.ip_forward", "1"); err != nil {
		return nil, err
	}
	return n, nil
}

// Namespaces lists every namespace of the Net.
func (n *Net) Namespaces() []*Netns { return n.all }

// Owner returns the namespace that holds address a, or nil.
func (n *Net) Owner(a netip.Addr) *Netns { return n.owner[a.Unmap()] }

// Listen opens a stream listener inside the namespace that holds the
// address's host (the lab's Options.Listen hook).
func (n *Net) Listen(network, address string) (net.Listener, error) {
	return Owners(n.Owner).Listen(network, address)
}

// ListenPacket opens a packet listener inside the namespace that holds the
// address's host (the lab's Options.ListenPacket hook).
func (n *Net) ListenPacket(network, address string) (net.PacketConn, error) {
	return Owners(n.Owner).ListenPacket(network, address)
}

// Close deletes every namespace (killing what runs in them) and the Net's
// directory.
func (n *Net) Close() error {
	ctx := context.Background()
	var errs []error
	for i := len(n.all) - 1; i >= 0; i-- {
		if err := n.all[i].Delete(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if n.Dir != "" {
		if err := os.RemoveAll(n.Dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// RootFor creates (once) and returns the root directory of a node's files:
// <Dir>/<host>/ with an etc/ that becomes the namespace's /etc overlay.
// pullpath probe --root takes this directory.
func (n *Net) RootFor(ns *Netns) (string, error) {
	root := filepath.Join(n.Dir, ns.Name[len(n.ID)+1:])
	etc := filepath.Join(root, "etc")
	if err := os.MkdirAll(etc, 0o755); err != nil {
		return "", fmt.Errorf("creating node root: %w", err)
	}
	if err := ns.SetEtc(etc); err != nil {
		return "", err
	}
	return root, nil
}
