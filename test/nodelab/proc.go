package nodelab

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/pullpath/pullpath/test/netlab"
)

// Bind is a bind mount made in a process's private mount namespace:
// Source (a file or directory on this machine) over Target.
type Bind struct{ Source, Target string }

// Spec is a process to run inside a lab namespace.
type Spec struct {
	// NS is the network namespace, entered with nsenter --net.
	NS *netlab.Netns
	// PrivateRun covers /run with a tmpfs before the binds are made.
	PrivateRun bool
	// Binds are made in order in the private mount namespace.
	Binds []Bind
	// Args is the command.
	Args []string
	// Env is the whole environment (nothing is inherited).
	Env []string
	// Log receives stdout and stderr.
	Log string
}

// Proc is a running Spec.
type Proc struct {
	Spec Spec
	cmd  *exec.Cmd
	done chan struct{}
}

// shellQuote quotes s for /bin/sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// script is the mount setup run by /bin/sh in the new mount namespace
// before it execs the command.
func (s Spec) script() string {
	var b strings.Builder
	b.WriteString("set -e\n")
	if s.PrivateRun {
		b.WriteString("mount -t tmpfs -o mode=0755 tmpfs /run\n")
	}
	for _, m := range s.Binds {
		fmt.Fprintf(&b, "mount --bind %s %s\n", shellQuote(m.Source), shellQuote(m.Target))
	}
	b.WriteString(`exec "$@"` + "\n")
	return b.String()
}

// Start runs the Spec: nsenter --net into the namespace, unshare --mount
// with private propagation, the binds, then the command. The process
// outlives ctx; Stop ends it.
func Start(ctx context.Context, s Spec) (*Proc, error) {
	netlab.KeepFDsFromDaemons()
	logf, err := os.OpenFile(s.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating log: %w", err)
	}
	args := append([]string{"--net=" + s.NS.Path(), "--", "unshare", "--mount", "--propagation", "private", "--",
		"/bin/sh", "-c", s.script(), "sh"}, s.Args...)
	cmd := exec.Command("nsenter", args...)
	cmd.Env = s.Env
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting %s in %s: %w", s.Args[0], s.NS.Name, err)
	}
	p := &Proc{Spec: s, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p, nil
}

// Exited reports whether the process has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop sends SIGTERM to the process group, then SIGKILL after grace, and
// waits for the process.
func (p *Proc) Stop(grace time.Duration) {
	if p == nil || p.cmd.Process == nil || p.Exited() {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = netlab.KillGroup(p.cmd)
		<-p.done
	}
}

// Tail returns the last n bytes of the process's log.
func (p *Proc) Tail(n int) string { return tail(p.Spec.Log, n) }

func tail(path string, n int) string { return netlab.Tail(path, n) }

// baseEnv is the environment of every lab process: no proxy, no CA
// override, nothing of this process's own.
func baseEnv() []string {
	return []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root"}
}

// waitFor polls cond every interval until it returns true, ctx ends or p
// exits.
func waitFor(ctx context.Context, p *Proc, interval time.Duration, cond func() bool) error {
	for {
		if cond() {
			return nil
		}
		if p != nil && p.Exited() {
			return fmt.Errorf("%s exited: %s", p.Spec.Args[0], p.Tail(3000))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}

// Wait waits for the process to end and returns its exit code (-1 when it
// was killed by a signal).
func (p *Proc) Wait() int {
	<-p.done
	if p.cmd.ProcessState == nil {
		return -1
	}
	return p.cmd.ProcessState.ExitCode()
}

// Signal sends sig to the process group (Ctrl-C is syscall.SIGINT).
func (p *Proc) Signal(sig syscall.Signal) error {
	if p.cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-p.cmd.Process.Pid, sig)
}
