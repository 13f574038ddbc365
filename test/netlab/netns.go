package netlab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vishvananda/netns"
)

// Prefix starts the name of every namespace netlab creates. Names read
// pp-<pid>-<seq>-<host>, so that Sweep can tell a live run from a stale one.
const Prefix = "pp-"

const (
	netnsRunDir = "/var/run/netns"
	netnsEtcDir = "/etc/netns"
)

// Netns is one named network namespace (a "host" of the lab).
type Netns struct {
	// Name is the namespace's name under /var/run/netns.
	Name string
}

// addNetns creates the namespace name and brings its loopback up.
func addNetns(ctx context.Context, name string) (*Netns, error) {
	if err := run(ctx, "ip", "netns", "add", name); err != nil {
		return nil, err
	}
	n := &Netns{Name: name}
	if err := n.IP(ctx, "link", "set", "lo", "up"); err != nil {
		return n, err
	}
	return n, nil
}

// IP runs `ip -n <name> args...`.
func (n *Netns) IP(ctx context.Context, args ...string) error {
	return run(ctx, "ip", append([]string{"-n", n.Name}, args...)...)
}

// Sysctl sets a sysctl (e.g. net.ipv4.ip_forward) inside the namespace.
func (n *Netns) Sysctl(ctx context.Context, key, value string) error {
	return run(ctx, "ip", "netns", "exec", n.Name, "sysctl", "-q", "-w", key+"="+value)
}

// Command returns a command that runs inside the namespace through
// `ip netns exec`, which also gives the process a private mount namespace
// in which /etc/netns/<name>/* is bind-mounted over /etc (see SetEtc).
func (n *Netns) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", n.Name, name}, args...)...)
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// killGroup kills the process group cmd leads.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// SetEtc makes dir the /etc overlay of the namespace: every entry of dir is
// bind-mounted over the same name in /etc for processes started with
// Command (ip netns exec reads /etc/netns/<name>, which becomes a symlink
// to dir).
func (n *Netns) SetEtc(dir string) error {
	if err := os.MkdirAll(netnsEtcDir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", netnsEtcDir, err)
	}
	link := filepath.Join(netnsEtcDir, n.Name)
	_ = os.Remove(link)
	if err := os.Symlink(dir, link); err != nil {
		return fmt.Errorf("linking %s: %w", link, err)
	}
	return nil
}

// Do runs fn on an OS thread switched into the namespace, then switches the
// thread back. If it cannot switch back, the thread stays locked and the
// runtime throws it away, so no other goroutine ever runs in the namespace
// by accident. Sockets created by fn stay in the namespace.
func (n *Netns) Do(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			errc <- fmt.Errorf("opening current netns: %w", err)
			return
		}
		defer orig.Close()
		h, err := netns.GetFromName(n.Name)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("opening netns %s: %w", n.Name, err)
			return
		}
		defer h.Close()
		if err := netns.Set(h); err != nil {
			errc <- fmt.Errorf("entering netns %s: %w", n.Name, err)
			return
		}
		err = fn()
		if netns.Set(orig) == nil {
			runtime.UnlockOSThread()
		}
		errc <- err
	}()
	return <-errc
}

// Listen opens a stream listener inside the namespace.
func (n *Netns) Listen(network, address string) (net.Listener, error) {
	var ln net.Listener
	err := n.Do(func() error {
		var err error
		ln, err = net.Listen(network, address)
		return err
	})
	return ln, err
}

// ListenPacket opens a packet listener inside the namespace.
func (n *Netns) ListenPacket(network, address string) (net.PacketConn, error) {
	var pc net.PacketConn
	err := n.Do(func() error {
		var err error
		pc, err = net.ListenPacket(network, address)
		return err
	})
	return pc, err
}

// DialContext dials from inside the namespace.
func (n *Netns) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	var c net.Conn
	err := n.Do(func() error {
		var d net.Dialer
		var err error
		c, err = d.DialContext(ctx, network, address)
		return err
	})
	return c, err
}

// Pids lists the processes running in the namespace.
func (n *Netns) Pids(ctx context.Context) ([]int, error) {
	out, err := output(ctx, "ip", "netns", "pids", n.Name)
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(out) {
		if p, err := strconv.Atoi(f); err == nil {
			pids = append(pids, p)
		}
	}
	return pids, nil
}

// Delete kills every process left in the namespace, removes its /etc
// overlay link and deletes it.
func (n *Netns) Delete(ctx context.Context) error {
	return deleteNetns(ctx, n.Name)
}

func deleteNetns(ctx context.Context, name string) error {
	n := &Netns{Name: name}
	var errs []error
	if pids, err := n.Pids(ctx); err == nil {
		for _, p := range pids {
			if p == os.Getpid() {
				continue
			}
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
	if err := os.Remove(filepath.Join(netnsEtcDir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	if _, err := os.Stat(filepath.Join(netnsRunDir, name)); err == nil {
		if err := run(ctx, "ip", "netns", "del", name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// run runs a command and returns its combined output in the error.
func run(ctx context.Context, name string, args ...string) error {
	_, err := output(ctx, name, args...)
	return err
}

func output(ctx context.Context, name string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("running %s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
