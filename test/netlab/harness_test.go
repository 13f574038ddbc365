package netlab_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/pullpath/pullpath/internal/cri"
	"github.com/pullpath/pullpath/internal/tiers"
	"github.com/pullpath/pullpath/test/netlab"
	"github.com/pullpath/pullpath/test/netlab/minireg"
)

// newNet builds a Net for t, skipping when the lab cannot run here, and
// removes it when t ends.
func newNet(t *testing.T) *netlab.Net {
	t.Helper()
	tiers.Require(t, tiers.Netlab)
	ctx := context.Background()
	n, err := netlab.New(ctx)
	if err != nil {
		t.Fatalf("netlab.New: %v", err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Errorf("closing net: %v", err)
		}
	})
	return n
}

// serveZone serves records (name → A) on addr:53 inside the lab, answering
// NXDOMAIN for anything else.
func serveZone(t *testing.T, n *netlab.Net, addr string, records map[string]string) {
	t.Helper()
	pc, err := n.ListenPacket("udp", addr+":53")
	if err != nil {
		t.Fatalf("listening for DNS: %v", err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		q := r.Question[0]
		ip, ok := records[strings.ToLower(q.Name)]
		switch {
		case !ok:
			m.Rcode = dns.RcodeNameError
		case q.Qtype == dns.TypeA:
			rr, _ := dns.NewRR(q.Name + " 30 IN A " + ip)
			m.Answer = append(m.Answer, rr)
		}
		w.WriteMsg(m)
	})}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
}

func TestSweepLeavesLiveNets(t *testing.T) {
	n := newNet(t)
	if err := netlab.Sweep(context.Background()); err != nil {
		t.Fatalf("Sweep: %v", err)
	}
	for _, ns := range n.Namespaces() {
		if _, err := os.Stat(filepath.Join("/var/run/netns", ns.Name)); err != nil {
			t.Errorf("Sweep removed live namespace %s: %v", ns.Name, err)
		}
	}
}

func TestNetIsolatedAndRouted(t *testing.T) {
	n := newNet(t)
	ctx := context.Background()
	ln, err := n.Listen("tcp", n.Addrs.Registry.String()+":443")
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	// node → router → registry works.
	c, err := n.Node.DialContext(dctx, "tcp", n.Addrs.Registry.String()+":443")
	if err != nil {
		t.Fatalf("dialing registry from node: %v", err)
	}
	c.Close()
	// The root namespace has no path into this lab: none of its addresses
	// and no link whose peer is in one of its namespaces. (Only this lab's
	// own addresses and links count: a shared machine may hold others.)
	if out, err := exec.Command("ip", "-o", "addr").Output(); err != nil {
		t.Fatal(err)
	} else {
		a := n.Addrs
		for _, addr := range []netip.Addr{a.Node, a.Node2, a.Registry, a.Auth, a.Blob, a.Mirror, a.Dead, a.DNS, a.DNS2, a.DeadDNS, a.Public} {
			if strings.Contains(string(out), " inet "+addr.String()+"/") {
				t.Errorf("the root namespace holds the lab address %s; the lab must not be linked to it:\n%s", addr, out)
			}
		}
	}
	if out, err := exec.Command("ip", "-o", "link").Output(); err != nil {
		t.Fatal(err)
	} else {
		for _, ns := range n.Namespaces() {
			if strings.Contains(string(out), "link-netns "+ns.Name+" ") || strings.HasSuffix(strings.TrimSpace(string(out)), "link-netns "+ns.Name) {
				t.Errorf("a root-namespace link has its peer in the lab namespace %s:\n%s", ns.Name, out)
			}
		}
	}
	// Without the router's route, the node gets "network is unreachable".
	if err := n.Apply(ctx, netlab.NoRoute(netlab.RegistrySubnet)); err != nil {
		t.Fatal(err)
	}
	_, err = n.Node.DialContext(dctx, "tcp", n.Addrs.Registry.String()+":443")
	if err == nil || !strings.Contains(err.Error(), "network is unreachable") {
		t.Errorf("dial after NoRoute = %v, want network is unreachable", err)
	}
}

// miniWorld is a Net with a small registry (registry.netlab.test on the
// registry address, trusted through the node's trust store), a DNS server
// for the zone on the DNS address and containerd in the node namespace.
type miniWorld struct {
	n    *netlab.Net
	cd   *netlab.Containerd
	cri  *cri.Client
	host string
}

func startMiniWorld(t *testing.T, ctx context.Context, resolver string) *miniWorld {
	t.Helper()
	n := newNet(t)
	const host = "registry.netlab.test"
	ca, err := minireg.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.Issue(host)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := n.Listen("tcp", n.Addrs.Registry.String()+":443")
	if err != nil {
		t.Fatal(err)
	}
	srv := minireg.Serve(ln, cert)
	t.Cleanup(func() { srv.Close() })
	serveZone(t, n, n.Addrs.DNS.String(), map[string]string{host + ".": n.Addrs.Registry.String()})

	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		return n.Registry.DialContext(ctx, network, n.Addrs.Registry.String()+":443")
	}
	if _, err := minireg.PushRandom(ctx, host+"/team/app:1", 2, 1024, dial, ca.Pool()); err != nil {
		t.Fatal(err)
	}
	root, err := n.RootFor(n.Node)
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, root, map[string]string{
		"etc/resolv.conf":                   "nameserver " + resolver + "\n",
		"etc/hosts":                         "127.0.0.1 localhost\n",
		"etc/ssl/certs/ca-certificates.crt": string(ca.PEM),
		"etc/containerd/certs.d/.keep":      "",
	})
	cd, err := netlab.StartContainerd(ctx, n.Node, filepath.Join(n.Dir, "containerd-node"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cd.Stop)
	c, err := cri.Dial(ctx, cd.Socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &miniWorld{n: n, cd: cd, cri: c, host: host}
}

func TestContainerdPullsThroughLab(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	w := startMiniWorld(t, ctx, netlab.DefaultAddrs.DNS.String())
	ref, err := w.cri.Pull(ctx, w.host+"/team/app:1", nil)
	if err != nil {
		t.Fatalf("Pull: %v\ncontainerd log:\n%s", err, readTail(w.cd.Log))
	}
	img, err := w.cri.ImageStatus(ctx, ref)
	if err != nil || img == nil {
		t.Fatalf("ImageStatus(%s) = %v, %v; want the pulled image", ref, img, err)
	}
}

// TestNetworkFaults checks that each fault of the harness shows up in
// containerd's own error the way the same fault shows on a node.
func TestNetworkFaults(t *testing.T) {
	a := netlab.DefaultAddrs
	tests := []struct {
		name     string
		resolver netip.Addr
		image    string
		faults   []netlab.Fault
		want     string // a piece of containerd's error text
	}{
		{"no route", a.DNS, "registry.netlab.test/team/app:1",
			[]netlab.Fault{netlab.NoRoute(netlab.RegistrySubnet)},
			"dial tcp 198.18.10.10:443: connect: network is unreachable"},
		{"host unreachable", a.DNS, "registry.netlab.test/team/app:1",
			[]netlab.Fault{netlab.Unreachable(a.Registry)},
			"dial tcp 198.18.10.10:443: connect: no route to host"},
		{"no return route", a.DNS, "registry.netlab.test/team/app:1",
			[]netlab.Fault{netlab.NoReturnRoute(a.Registry, netlab.NodeSubnet)},
			"dial tcp 198.18.10.10:443: i/o timeout"},
		{"silent drop", a.DNS, "registry.netlab.test/team/app:1",
			[]netlab.Fault{netlab.Drop(a.Registry)},
			"dial tcp 198.18.10.10:443: i/o timeout"},
		{"nxdomain", a.DNS, "missing.netlab.test/team/app:1", nil,
			"dial tcp: lookup missing.netlab.test on 198.18.20.53:53: no such host"},
		{"resolver refused", a.DeadDNS, "registry.netlab.test/team/app:1", nil,
			"lookup registry.netlab.test on 198.18.20.55:53"},
		{"resolver dropped", a.DNS, "registry.netlab.test/team/app:1",
			[]netlab.Fault{netlab.Drop(a.DNS)},
			"lookup registry.netlab.test on 198.18.20.53:53"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			w := startMiniWorld(t, ctx, tt.resolver.String())
			if err := w.n.Apply(ctx, tt.faults...); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err := w.cri.Pull(ctx, tt.image, nil)
			var pe *cri.PullError
			if !errors.As(err, &pe) {
				t.Fatalf("Pull(%s) = %v, want a *cri.PullError", tt.image, err)
			}
			t.Logf("after %v: %s", time.Since(start).Round(time.Millisecond), pe.Text)
			if !strings.Contains(pe.Text, tt.want) {
				t.Errorf("Pull(%s) error = %q, want it to contain %q", tt.image, pe.Text, tt.want)
			}
		})
	}
}
