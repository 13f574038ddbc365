package netlab

import (
	"context"
	"os/exec"
)

// Helpers shared with other namespace tiers (internal/nodelab), so that
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
