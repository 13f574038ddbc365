package netlab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/cri"
)

// Containerd is a containerd daemon running inside a lab namespace with its
// own root, state and socket under Dir. It reads its registry host
// configuration from /etc/containerd/certs.d as the namespace sees it (the
// node root's etc/containerd/certs.d) and trusts what the node's
// /etc/ssl/certs trusts, as containerd on a node does.
type Containerd struct {
	// Dir holds config.toml, root/, state/, the socket and containerd.log.
	Dir string
	// Socket is the CRI (and containerd API) socket.
	Socket string
	// Version is the daemon's version as `containerd --version` prints it
	// (e.g. 1.6.20~ds1).
	Version string
	// Log is the daemon's log file.
	Log string

	cmd  *exec.Cmd
	done chan struct{}
}

// ContainerdConfig returns the config.toml netlab runs containerd with: the
// schema of containerd 1.x (version = 2, as Debian 12 ships 1.6), CRI with
// config_path = /etc/containerd/certs.d, everything else local to dir.
func ContainerdConfig(dir string) string {
	return fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
disabled_plugins = [
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing",
]

[grpc]
  address = %[3]q

[ttrpc]
  address = %[4]q

[debug]
  level = "info"

[plugins."io.containerd.internal.v1.opt"]
  path = %[5]q

[plugins."io.containerd.grpc.v1.cri"]
  disable_tcp_service = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[6]q
    conf_dir = %[6]q
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "/etc/containerd/certs.d"
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), filepath.Join(dir, "containerd.sock"),
		filepath.Join(dir, "containerd.sock.ttrpc"), filepath.Join(dir, "opt"), filepath.Join(dir, "cni"))
}

// ContainerdVersion returns the version of the containerd binary on PATH.
func ContainerdVersion(ctx context.Context) (string, error) {
	out, err := output(ctx, "containerd", "--version")
	if err != nil {
		return "", err
	}
	// containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+deb12u3
	f := strings.Fields(out)
	if len(f) < 3 {
		return "", fmt.Errorf("reading containerd version from %q", strings.TrimSpace(out))
	}
	return f[2], nil
}

// StartContainerd starts containerd inside ns with its state under dir and
// waits until its CRI image service answers. Stop ends it.
//
// env is the service environment systemd would give containerd (e.g. the
// node's HTTPS_PROXY and NO_PROXY); proxy variables of this process's own
// environment are never passed on, so the lab does not depend on them.
func StartContainerd(ctx context.Context, ns *Netns, dir string, env ...string) (*Containerd, error) {
	if err := os.MkdirAll(filepath.Join(dir, "cni"), 0o755); err != nil {
		return nil, fmt.Errorf("creating containerd directory: %w", err)
	}
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte(ContainerdConfig(dir)), 0o644); err != nil {
		return nil, fmt.Errorf("writing containerd config: %w", err)
	}
	return StartContainerdWith(ctx, ns, dir, "containerd", cfg, env...)
}

// StartContainerdWith starts the containerd binary bin (a path, or a name on
// PATH) inside ns with the configuration file cfg, which must put root,
// state and the socket (dir/containerd.sock) under dir (see
// ContainerdConfig), and waits until its CRI image service answers.
func StartContainerdWith(ctx context.Context, ns *Netns, dir, bin, cfg string, env ...string) (*Containerd, error) {
	KeepFDsFromDaemons()
	out, err := output(ctx, bin, "--version")
	if err != nil {
		return nil, err
	}
	// containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+deb12u3
	f := strings.Fields(out)
	if len(f) < 3 {
		return nil, fmt.Errorf("reading containerd version from %q", strings.TrimSpace(out))
	}
	version := f[2]
	if err := os.MkdirAll(filepath.Join(dir, "cni"), 0o755); err != nil {
		return nil, fmt.Errorf("creating containerd directory: %w", err)
	}
	c := &Containerd{
		Dir:     dir,
		Socket:  filepath.Join(dir, "containerd.sock"),
		Version: version,
		Log:     filepath.Join(dir, "containerd.log"),
		done:    make(chan struct{}),
	}
	logf, err := os.Create(c.Log)
	if err != nil {
		return nil, fmt.Errorf("creating containerd log: %w", err)
	}
	// The daemon outlives ctx (which only bounds the start); Stop ends it.
	c.cmd = ns.Command(context.Background(), bin, "--config", cfg)
	c.cmd.Env = append(withoutProxy(os.Environ()), env...)
	c.cmd.Stdout, c.cmd.Stderr = logf, logf
	if err := c.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting containerd in %s: %w", ns.Name, err)
	}
	go func() {
		c.cmd.Wait()
		logf.Close()
		close(c.done)
	}()
	if err := c.waitReady(ctx); err != nil {
		c.Stop()
		return nil, fmt.Errorf("waiting for containerd in %s: %w (log: %s)", ns.Name, err, tail(c.Log, 2000))
	}
	return c, nil
}

func (c *Containerd) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		select {
		case <-c.done:
			return errors.New("containerd exited")
		default:
		}
		if _, err := os.Stat(c.Socket); err == nil {
			cl, err := cri.Dial(ctx, c.Socket, cri.WithDialTimeout(time.Second))
			if err == nil {
				cl.Close()
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Stop ends the daemon (SIGTERM, then SIGKILL after 5 s) and waits for it.
func (c *Containerd) Stop() {
	if c.cmd == nil || c.cmd.Process == nil {
		return
	}
	select {
	case <-c.done:
		return
	default:
	}
	_ = c.cmd.Process.Signal(os.Interrupt)
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		_ = killGroup(c.cmd)
		<-c.done
	}
}

// tail returns the last n bytes of a file, for error messages.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// withoutProxy drops the proxy variables from an environment.
func withoutProxy(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY":
			continue
		}
		out = append(out, kv)
	}
	return out
}
