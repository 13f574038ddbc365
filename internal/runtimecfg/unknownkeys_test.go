package runtimecfg

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/verdict"
)

// unknownKeyFiles have keys outside the plugin tables that containerd does
// not know, and keys it does.
var unknownKeyFiles = map[string]string{
	"typos":      "version = 2\noom_scor = 1\n[grpc]\n  adress = \"/x.sock\"\n  max_recv_message_size = 1\n[debug]\n  level = \"info\"\n  colour = true\n",
	"plugin_dir": "version = 2\nplugin_dir = \"/opt/containerd/plugins\"\n[plugins.\"io.containerd.grpc.v1.cri\".registry]\n  config_path = \"/etc/containerd/certs.d\"\n",
	"clean":      "version = 2\nroot = \"/var/lib/containerd\"\n[metrics]\n  address = \"127.0.0.1:1338\"\n[timeouts]\n  \"io.containerd.timeout.shim.cleanup\" = \"5s\"\n[proxy_plugins.x]\n  type = \"snapshot\"\n  address = \"/run/x.sock\"\n",
}

// lintedKeys are the "file:row key" pairs of Load's config.unknown-key
// warnings outside the registry table.
func lintedKeys(t *testing.T, root string, rb nodeview.RuntimeBinary) []string {
	t.Helper()
	c, _ := Load(root, rb, Options{})
	var out []string
	re := regexp.MustCompile(`^(\S+:\d+): .* does not know the key (\S+) `)
	for _, w := range c.Warnings {
		if w.Code != verdict.CodeConfigUnknownKey {
			continue
		}
		if m := re.FindStringSubmatch(w.Message); m != nil {
			out = append(out, m[1]+" "+m[2])
		}
	}
	slices.Sort(out)
	return out
}

// TestUnknownServerKeys: keys outside the plugin tables that containerd
// does not know are config.unknown-key warnings naming file and line;
// plugin_dir is known to 1.x only.
func TestUnknownServerKeys(t *testing.T) {
	for name, want := range map[string]map[int][]string{
		"typos":      {1: {"/etc/containerd/config.toml:2 oom_scor", "/etc/containerd/config.toml:4 grpc.adress", "/etc/containerd/config.toml:8 debug.colour"}, 2: {"/etc/containerd/config.toml:2 oom_scor", "/etc/containerd/config.toml:4 grpc.adress", "/etc/containerd/config.toml:8 debug.colour"}},
		"plugin_dir": {1: nil, 2: {"/etc/containerd/config.toml:2 plugin_dir"}},
		"clean":      {1: nil, 2: nil},
	} {
		root := writeRoot(t, map[string]string{DefaultConfig: unknownKeyFiles[name]})
		for major, keys := range want {
			rb := nodeview.RuntimeBinary{Path: "/usr/bin/containerd", ModulePath: "github.com/containerd/containerd", ModuleVersion: "v1.6.20"}
			if major == 2 {
				rb.ModulePath, rb.ModuleVersion = "github.com/containerd/containerd/v2", "v2.2.9"
			}
			if got := lintedKeys(t, root, rb); !slices.Equal(got, keys) {
				t.Errorf("%s on %d.x: unknown keys %q, want %q", name, major, got, keys)
			}
		}
	}
}

// TestUnknownServerKeysAgreeWithContainerd: the real containerd 2.x logs
// "Ignoring unknown key in TOML" for exactly the keys and rows Load
// warns about; the real 1.6 logs nothing for them (it ignores them without
// a word, as the warning says).
func TestUnknownServerKeysAgreeWithContainerd(t *testing.T) {
	bins := realContainerds(t)
	re := regexp.MustCompile(`msg="Ignoring unknown key in TOML".* key=("[^"]*"|\S+) row=(\d+)`)
	for name, content := range unknownKeyFiles {
		root := writeRoot(t, map[string]string{DefaultConfig: content})
		file := filepath.Join(root, DefaultConfig)
		for ver, bin := range bins {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			cmd := exec.CommandContext(ctx, bin, "--config", file, "config", "dump")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			cancel()
			if err != nil {
				t.Fatalf("%s config dump of %s: %v\n%s", bin, name, err, stderr.String())
			}
			var logged []string
			for _, m := range re.FindAllStringSubmatch(stderr.String(), -1) {
				logged = append(logged, DefaultConfig+":"+m[2]+" "+strings.ReplaceAll(strings.Trim(m[1], `"`), " ", "."))
			}
			slices.Sort(logged)
			got := lintedKeys(t, root, binaryInfo(t, bin))
			if ver == "1.x" {
				if len(logged) != 0 {
					t.Errorf("%s: containerd 1.x logged %q; the warning says it ignores them without a word", name, logged)
				}
				// 1.x: Load lints the keys 2.x would log, but plugin_dir.
				continue
			}
			if !slices.Equal(got, logged) {
				t.Errorf("%s: Load warns about %q, containerd %s logged %q", name, got, ver, logged)
			}
			t.Logf("%s on containerd %s: %q", name, ver, logged)
		}
	}
}
