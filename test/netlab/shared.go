package netlab

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
)

// Helpers shared with other namespace tiers (test/nodelab), so that
// there is one way to build a namespace.

// AddNetns creates the network namespace name (under /var/run/netns) and
// brings its loopback up. The caller names it; Sweep and SweepPrefix find
// names of the form <prefix><pid>-... .
func AddNetns(ctx context.Context, name string) (*Netns, error) {
	return addNetns(ctx, name)
}

// Run runs a command and returns its combined output in the error.
func Run(ctx context.Context, name string, args ...string) error {
	return run(ctx, name, args...)
}

// Output runs a command and returns its standard output; the error holds
// its standard error.
func Output(ctx context.Context, name string, args ...string) (string, error) {
	return output(ctx, name, args...)
}

// Path returns the namespace's file under /var/run/netns, for nsenter
// --net=PATH.
func (n *Netns) Path() string { return netnsRunDir + "/" + n.Name }

// KillGroup kills the process group cmd leads (a command started with
// Setpgid).
func KillGroup(cmd *exec.Cmd) error { return killGroup(cmd) }

// SweepPrefix is Sweep for another tier's prefix: it removes the
// namespaces, /etc/netns links and temporary directories named
// <prefix><pid>-... whose pid is no longer alive.
func SweepPrefix(ctx context.Context, prefix string) error {
	return sweep(ctx, prefix)
}

// Tail returns the last n bytes of a file (a log), for error messages.
func Tail(path string, n int) string { return tail(path, n) }

// Owners says which namespace holds an address (nil: none). Its Listen and
// ListenPacket open a listener inside that namespace: the embedded lab's
// Options.Listen and Options.ListenPacket hooks of every namespace tier.
type Owners func(netip.Addr) *Netns

// Listen opens a stream listener inside the namespace that holds the
// address's host. A host that is no lab address is an error.
func (o Owners) Listen(network, address string) (net.Listener, error) {
	ns, err := o.of(address)
	if err != nil {
		return nil, err
	}
	return ns.Listen(network, address)
}

// ListenPacket opens a packet listener inside the namespace that holds the
// address's host.
func (o Owners) ListenPacket(network, address string) (net.PacketConn, error) {
	ns, err := o.of(address)
	if err != nil {
		return nil, err
	}
	return ns.ListenPacket(network, address)
}

func (o Owners) of(address string) (*Netns, error) {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return nil, fmt.Errorf("listening in the lab: %q is not an ip:port: %w", address, err)
	}
	ns := o(ap.Addr())
	if ns == nil {
		return nil, fmt.Errorf("listening in the lab: no lab host has address %s", ap.Addr())
	}
	return ns, nil
}

// TailString returns the last n bytes of s, for error messages.
func TailString(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
