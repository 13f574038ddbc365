package runtimecfg

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/verdict"
)

// TestRefusalAgreesWithDaemon starts each real containerd (no network: a
// temporary root, state and socket) on configurations whose registry table
// it may refuse, and checks that Load refuses exactly those (the
// config.containerd verdict) that make the daemon fail to load its CRI
// plugin. It runs where the network lab runs (root, PULLPATH_NETLAB=1).
func TestRefusalAgreesWithDaemon(t *testing.T) {
	if os.Getenv("PULLPATH_NETLAB") != "1" || os.Geteuid() != 0 {
		t.Skip("starts real containerd daemons: needs root and PULLPATH_NETLAB=1")
	}
	bins := realContainerds(t)
	rows := []struct{ name, registry string }{
		{"mirrors with config_path", "[plugins.\"io.containerd.grpc.v1.cri\".registry]\n  config_path = \"/etc/containerd/certs.d\"\n[plugins.\"io.containerd.grpc.v1.cri\".registry.mirrors.\"docker.io\"]\n  endpoint = [\"https://m.example\"]\n"},
		{"configs.tls with config_path", "[plugins.\"io.containerd.grpc.v1.cri\".registry]\n  config_path = \"/etc/containerd/certs.d\"\n[plugins.\"io.containerd.grpc.v1.cri\".registry.configs.\"m.example\".tls]\n  insecure_skip_verify = true\n"},
		{"configs.auth with config_path", "[plugins.\"io.containerd.grpc.v1.cri\".registry]\n  config_path = \"/etc/containerd/certs.d\"\n[plugins.\"io.containerd.grpc.v1.cri\".registry.configs.\"m.example\".auth]\n  username = \"u\"\n"},
		{"mirrors alone", "[plugins.\"io.containerd.grpc.v1.cri\".registry.mirrors.\"docker.io\"]\n  endpoint = [\"https://m.example\"]\n"},
	}
	for kind, bin := range bins {
		rb := binaryInfo(t, bin)
		for _, row := range rows {
			t.Run(kind+"/"+row.name, func(t *testing.T) {
				dir := t.TempDir()
				cfg := filepath.Join(dir, "config.toml")
				text := fmt.Sprintf("version = 2\nroot = %q\nstate = %q\ndisabled_plugins = [\"io.containerd.snapshotter.v1.aufs\", \"io.containerd.snapshotter.v1.btrfs\", \"io.containerd.snapshotter.v1.devmapper\", \"io.containerd.snapshotter.v1.zfs\", \"io.containerd.internal.v1.tracing\", \"io.containerd.tracing.processor.v1.otlp\"]\n[grpc]\n  address = %q\n[ttrpc]\n  address = %q\n[plugins.\"io.containerd.internal.v1.opt\"]\n  path = %q\n",
					filepath.Join(dir, "root"), filepath.Join(dir, "state"), filepath.Join(dir, "c.sock"), filepath.Join(dir, "c.sock.ttrpc"), filepath.Join(dir, "opt")) + row.registry
				if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				refused, logText := daemonRefusesCRI(t, bin, cfg)
				rb.ConfigFlag = cfg
				_, err := Load("/", rb, Options{})
				ve, isVerdict := verdict.AsError(err)
				got := isVerdict && ve.Cause == "config.containerd"
				t.Logf("%s: daemon refused CRI=%v; Load: %v", bin, refused, err)
				if got != refused {
					t.Errorf("Load refused=%v (%v), containerd %s refused=%v\n%s", got, err, bin, refused, logText)
				}
			})
		}
	}
}

// daemonRefusesCRI runs containerd until its CRI plugin loaded or failed
// to, and reports which, with the log lines that say so.
func daemonRefusesCRI(t *testing.T, bin, cfg string) (bool, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	logf := filepath.Join(filepath.Dir(cfg), "containerd.log")
	f, err := os.Create(logf)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(bin, "--config", cfg)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	for ctx.Err() == nil {
		b, _ := os.ReadFile(logf)
		s := string(b)
		for _, line := range strings.Split(s, "\n") {
			if strings.Contains(line, "failed to load plugin") && (strings.Contains(line, "cri") || strings.Contains(line, "images")) && strings.Contains(line, "config") {
				return true, line
			}
		}
		if strings.Contains(s, "containerd successfully booted") {
			return false, ""
		}
		time.Sleep(200 * time.Millisecond)
	}
	b, _ := os.ReadFile(logf)
	t.Fatalf("containerd %s neither booted nor refused its CRI plugin in 90 s:\n%s", bin, b)
	return false, ""
}
