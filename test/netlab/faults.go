package netlab

import (
	"context"
	"net/netip"
)

// Fault is a change to a Net's routing that breaks part of the pull path.
type Fault func(ctx context.Context, n *Net) error

// NoRoute removes the router's route to p: the router answers with ICMP
// network unreachable, so a connect fails at once ("network is
// unreachable").
func NoRoute(p netip.Prefix) Fault {
	return func(ctx context.Context, n *Net) error {
		return n.Router.IP(ctx, "route", "del", p.String())
	}
}

// NoReturnRoute removes the route from the namespace holding a back to p
// (typically: the registry network has no route to the node subnet). SYNs
// arrive, answers are never sent, connects time out (a route one way is not a route).
func NoReturnRoute(a netip.Addr, p netip.Prefix) Fault {
	return func(ctx context.Context, n *Net) error {
		return n.Owner(a).IP(ctx, "route", "del", p.String())
	}
}

// Drop makes the router silently discard everything it forwards to a (a
// blackhole route: no ICMP answer, connects time out).
func Drop(a netip.Addr) Fault {
	return func(ctx context.Context, n *Net) error {
		return n.Router.IP(ctx, "route", "add", "blackhole", netip.PrefixFrom(a, 32).String())
	}
}

// Unreachable makes the router answer packets to a with ICMP host
// unreachable ("no route to host").
func Unreachable(a netip.Addr) Fault {
	return func(ctx context.Context, n *Net) error {
		return n.Router.IP(ctx, "route", "add", "unreachable", netip.PrefixFrom(a, 32).String())
	}
}

// Apply applies faults in order.
func (n *Net) Apply(ctx context.Context, faults ...Fault) error {
	for _, f := range faults {
		if err := f(ctx, n); err != nil {
			return err
		}
	}
	return nil
}
