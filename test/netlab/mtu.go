package netlab

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// mtuTable is the policy-routing table the router uses for the answers of
// a host behind an MTU-locked hop.
const mtuTable = "1280"

// MTUBlackHole makes the router a path-MTU black hole for the hosts as: the
// router's routes toward them and toward the node subnets for their answers
// (policy routing by source) are locked at mtu, so it drops every packet
// larger than mtu that has DF set (all of TCP's), and nftables in the
// router drops the ICMP fragmentation-needed / packet-too-big messages it
// would send back, so path-MTU discovery never learns. The nodes' own
// interfaces stay at 1500; TCP connects and small packets pass.
func MTUBlackHole(mtu int, as ...netip.Addr) Fault {
	return func(ctx context.Context, n *Net) error {
		m := strconv.Itoa(mtu)
		for i, a := range as {
			if err := n.Router.IP(ctx, "route", "replace", netip.PrefixFrom(a, 32).String(), "dev", "to-registry", "mtu", "lock", m); err != nil {
				return err
			}
			if err := n.Router.IP(ctx, "rule", "add", "from", a.String(), "lookup", mtuTable, "priority", strconv.Itoa(100+i)); err != nil {
				return err
			}
		}
		for _, r := range []struct {
			p   netip.Prefix
			dev string
		}{{NodeSubnet, "to-node"}, {Node2Subnet, "to-node2"}} {
			if err := n.Router.IP(ctx, "route", "replace", r.p.String(), "dev", r.dev, "mtu", "lock", m, "table", mtuTable); err != nil {
				return err
			}
		}
		return n.Router.NFT(ctx, `table inet pp_mtu {
	chain output_drop { type filter hook output priority 0; icmp type destination-unreachable icmp code frag-needed drop; icmpv6 type packet-too-big drop; }
	chain forward_drop { type filter hook forward priority 0; icmp type destination-unreachable icmp code frag-needed drop; icmpv6 type packet-too-big drop; }
}`)
	}
}

// DropAfterConnect makes the router drop every TCP packet from a except
// the SYN-ACK: connects succeed, and nothing the host sends after that
// arrives, whatever its size (a black hole that is not MTU).
func DropAfterConnect(a netip.Addr) Fault {
	return func(ctx context.Context, n *Net) error {
		return n.Router.NFT(ctx, fmt.Sprintf(`table inet pp_drop {
	chain forward_drop { type filter hook forward priority 0; ip saddr %s tcp flags & syn == 0 drop; }
}`, a))
	}
}

// NFT loads an nftables ruleset into the namespace (nft -f -).
func (n *Netns) NFT(ctx context.Context, ruleset string) error {
	cmd := n.Command(ctx, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(ruleset + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nft in %s: %v: %s", n.Name, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// LinkMTU returns the MTU of dev inside the namespace.
func (n *Netns) LinkMTU(ctx context.Context, dev string) (int, error) {
	out, err := output(ctx, "ip", "-n", n.Name, "-o", "link", "show", "dev", dev)
	if err != nil {
		return 0, err
	}
	f := strings.Fields(out)
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "mtu" {
			return strconv.Atoi(f[i+1])
		}
	}
	return 0, fmt.Errorf("no mtu in %q", out)
}
