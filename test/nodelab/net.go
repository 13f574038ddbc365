package nodelab

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/pullpath/pullpath/test/netlab"
)

// Prefix starts the name of every namespace and directory nodelab creates:
// ppn-<pid>-<seq>-<host>. netlab's is "pp-", so the tiers never touch each
// other's namespaces.
const Prefix = "ppn-"

// The subnets of a Net. Nodes get one /24 each from NodeSubnets.
var (
	RegistrySubnet = netip.MustParsePrefix("198.18.10.0/24")
	DNSSubnet      = netip.MustParsePrefix("198.18.20.0/24")
	ControlSubnet  = netip.MustParsePrefix("198.18.30.0/24")
	MCRSubnet      = netip.MustParsePrefix("198.18.40.0/24")
	// LabRange covers every lab address; hosts route it through the router.
	LabRange = netip.MustParsePrefix("198.18.0.0/15")
)

// Fixed addresses.
var (
	Registry = netip.MustParseAddr("198.18.10.10")
	Auth     = netip.MustParseAddr("198.18.10.11")
	Blob     = netip.MustParseAddr("198.18.10.12")
	Mirror   = netip.MustParseAddr("198.18.10.13")
	Dead     = netip.MustParseAddr("198.18.10.14")
	DNS      = netip.MustParseAddr("198.18.20.53")
	DNS2     = netip.MustParseAddr("198.18.20.54")
	DeadDNS  = netip.MustParseAddr("198.18.20.55")
	// PublicDNS is the resolver of a network not linked to the lab's
	// private zone (ServePublicView).
	PublicDNS = netip.MustParseAddr("198.18.20.56")
	APIServer = netip.MustParseAddr("198.18.30.10")
	MCR       = netip.MustParseAddr("198.18.40.10")
	// Public stands for the public answer of a resolver that cannot see the
	// private zone; nothing routes it.
	Public = netip.MustParseAddr("198.19.0.10")
)

var seq atomic.Int64

// Net is the lab's network: a router and, on one veth each, the registry,
// DNS, control-plane and MCR namespaces, plus one namespace per node added
// with AddHost.
type Net struct {
	// ID is ppn-<pid>-<seq>; every namespace name starts with it.
	ID string
	// Dir is a temporary directory owned by the Net.
	Dir string

	Router, Registry, DNS, Control, MCR *netlab.Netns

	mu     sync.Mutex
	owner  map[netip.Addr]*netlab.Netns
	all    []*netlab.Netns
	nextIf int
}

// NewNet builds the network. Close removes it; NewNet removes what it built
// when it fails.
func NewNet(ctx context.Context) (n *Net, err error) {
	netlab.KeepFDsFromDaemons()
	id := fmt.Sprintf("%s%d-%d", Prefix, os.Getpid(), seq.Add(1))
	dir, err := os.MkdirTemp("", id+"-")
	if err != nil {
		return nil, fmt.Errorf("creating lab directory: %w", err)
	}
	n = &Net{ID: id, Dir: dir, owner: map[netip.Addr]*netlab.Netns{}}
	defer func() {
		if err != nil {
			n.Close()
			n = nil
		}
	}()
	if n.Router, err = n.add(ctx, "router"); err != nil {
		return nil, err
	}
	if err := n.Router.Sysctl(ctx, "net.ipv4.ip_forward", "1"); err != nil {
		return nil, err
	}
	for _, h := range []struct {
		p      **netlab.Netns
		name   string
		subnet netip.Prefix
		addrs  []netip.Addr
	}{
		{&n.Registry, "registry", RegistrySubnet, []netip.Addr{Registry, Auth, Blob, Mirror, Dead}},
		{&n.DNS, "dns", DNSSubnet, []netip.Addr{DNS, DNS2, DeadDNS, PublicDNS, ClusterDNSAddr}},
		{&n.Control, "control", ControlSubnet, []netip.Addr{APIServer}},
		{&n.MCR, "mcr", MCRSubnet, []netip.Addr{MCR}},
	} {
		ns, err := n.AddHost(ctx, h.name, h.subnet, h.addrs...)
		if err != nil {
			return nil, err
		}
		*h.p = ns
	}
	return n, nil
}

func (n *Net) add(ctx context.Context, host string) (*netlab.Netns, error) {
	ns, err := netlab.AddNetns(ctx, n.ID+"-"+host)
	if ns != nil {
		n.mu.Lock()
		n.all = append(n.all, ns)
		n.mu.Unlock()
	}
	return ns, err
}

// AddHost creates the namespace <ID>-<host>, links it to the router on
// subnet (the router takes .1) with addrs on its eth0, and routes the lab
// range through the router.
func (n *Net) AddHost(ctx context.Context, host string, subnet netip.Prefix, addrs ...netip.Addr) (*netlab.Netns, error) {
	ns, err := n.add(ctx, host)
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	n.nextIf++
	dev := "h" + strconv.Itoa(n.nextIf)
	n.mu.Unlock()
	gw := gateway(subnet)
	bits := strconv.Itoa(subnet.Bits())
	steps := [][]string{
		{"link", "add", dev, "type", "veth", "peer", "name", "eth0", "netns", ns.Name},
		{"addr", "add", gw.String() + "/" + bits, "dev", dev},
		{"link", "set", dev, "up"},
	}
	for _, s := range steps {
		if err := n.Router.IP(ctx, s...); err != nil {
			return ns, err
		}
	}
	for _, a := range addrs {
		if err := ns.IP(ctx, "addr", "add", a.String()+"/"+bits, "dev", "eth0"); err != nil {
			return ns, err
		}
		n.mu.Lock()
		n.owner[a] = ns
		n.mu.Unlock()
	}
	if err := ns.IP(ctx, "link", "set", "eth0", "up"); err != nil {
		return ns, err
	}
	if err := ns.IP(ctx, "route", "add", LabRange.String(), "via", gw.String()); err != nil {
		return ns, err
	}
	return ns, nil
}

// gateway is the router's address on a subnet (.1).
func gateway(p netip.Prefix) netip.Addr {
	a := p.Addr().As4()
	a[3] = 1
	return netip.AddrFrom4(a)
}

// Owner returns the namespace that holds address a, or nil.
func (n *Net) Owner(a netip.Addr) *netlab.Netns {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.owner[a.Unmap()]
}

// Listen opens a stream listener inside the namespace that holds the
// address's host (the lab's Options.Listen hook).
func (n *Net) Listen(network, address string) (net.Listener, error) {
	return netlab.Owners(n.Owner).Listen(network, address)
}

// ListenPacket opens a packet listener inside the namespace that holds the
// address's host (the lab's Options.ListenPacket hook).
func (n *Net) ListenPacket(network, address string) (net.PacketConn, error) {
	return netlab.Owners(n.Owner).ListenPacket(network, address)
}

// DialContext dials a lab address from inside the registry namespace, so
// that no connection of the lab's own ever leaves from the root namespace.
// An address outside the lab range is refused.
func (n *Net) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !LabRange.Contains(ap.Addr().Unmap()) {
		return nil, fmt.Errorf("dialing %s: not a lab address", address)
	}
	return n.Registry.DialContext(ctx, network, address)
}

// Close deletes every namespace (killing what runs in them) and the Net's
// directory.
func (n *Net) Close() error {
	ctx := context.Background()
	var errs []error
	n.mu.Lock()
	all := append([]*netlab.Netns(nil), n.all...)
	n.mu.Unlock()
	for i := len(all) - 1; i >= 0; i-- {
		if err := all[i].Delete(ctx); err != nil {
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

// Sweep removes what an earlier, killed run of the tier left behind.
func Sweep(ctx context.Context) error { return netlab.SweepPrefix(ctx, Prefix) }
