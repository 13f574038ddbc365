package runtimecfg

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/verdict"
)

// pluginKeyRoots are node roots whose plugin tables hold keys containerd
// knows and keys it does not (file → content; imports are relative, so
// that the real containerd reads the same files).
var pluginKeyRoots = map[string]map[string]string{
	// A version 2 file: containerd 2.x migrates the cri table into the
	// runtime and images plugins before decoding them.
	"v2": {DefaultConfig: `version = 2
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10"
  enable_selinux = false
  bogus_top = 1
  stream_server_address = "127.0.0.1"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    no_such = true
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      runtime_typo = "x"
      snapshot = "native"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/opt/cni/bin"
    conf_dir = "/etc/cni/net.d"
    confdir = "/x"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "/etc/containerd/certs.d"
[plugins."io.containerd.transfer.v1.local"]
  max_concurrent_downloads = 3
  max_concurent_downloads = 2
`},
	// A version 3 file: each plugin's own table, no migration.
	"v3": {DefaultConfig: `version = 3
[plugins."io.containerd.cri.v1.runtime"]
  enable_cdi = true
  enable_cdl = true
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      sandbox_mode = "podsandbox"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        SystemdCgroup = true
[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  use_local_image_pull = false
  pull_timeout = "5m"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "registry.k8s.io/pause:3.10"
  [plugins."io.containerd.cri.v1.images".registry]
    config_path = "/etc/containerd/certs.d"
[plugins."io.containerd.grpc.v1.cri"]
  stream_server_port = "0"
  sandbox_image = "registry.k8s.io/pause:3.10"
[plugins."io.containerd.transfer.v1.local"]
  config_path = "/etc/containerd/certs.d"
  [[plugins."io.containerd.transfer.v1.local".unpack_config]]
    platform = "linux/amd64"
    snapshotter = "overlayfs"
    snapshoter = "native"
`},
	// A version 3 file that imports a version 2 drop-in: the merged
	// configuration is version 2, and containerd 2.x migrates it all.
	"v3 importing v2": {
		DefaultConfig:                        "version = 3\nimports = [\"conf.d/*.toml\"]\n[plugins.\"io.containerd.cri.v1.runtime\"]\n  enable_selinux = false\n  selinux_typo = 1\n",
		"/etc/containerd/conf.d/10-cri.toml": "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  max_container_log_line_size = 16384\n  max_container_log_lines = 1\n",
	},
	// A disabled plugin's table is never decoded.
	"disabled": {DefaultConfig: "version = 3\ndisabled_plugins = [\"io.containerd.transfer.v1.local\"]\n[plugins.\"io.containerd.transfer.v1.local\"]\n  max_concurent_downloads = 2\n[plugins.\"io.containerd.cri.v1.images\"]\n  snapshoter = \"native\"\n"},
	// A version 1 file: "cri" is renamed, and 2.x, which migrates a
	// version 1 file to version 3 when it loads it, never moves its keys.
	"v1": {DefaultConfig: "[plugins.cri]\n  enable_selinux = false\n  selinux_typo = 1\n  [plugins.cri.containerd]\n    snapshotter = \"overlayfs\"\n"},
}

var pluginLintRe = regexp.MustCompile(`^(\S+:\d+): .* ignores the unknown key (\S+) of plugin (\S+) and`)

// pluginLints are Load's plugin-key warnings as "plugin key" and
// "file:line plugin key".
func pluginLints(t *testing.T, root string, rb nodeview.RuntimeBinary, o Options) (keys, where []string) {
	t.Helper()
	c, _ := Load(root, rb, o)
	for _, w := range c.Warnings {
		if w.Code != verdict.CodeConfigUnknownKey {
			continue
		}
		if m := pluginLintRe.FindStringSubmatch(w.Message); m != nil {
			keys = append(keys, m[3]+" "+m[2])
			where = append(where, m[1]+" "+m[3]+" "+m[2])
		}
	}
	slices.Sort(keys)
	slices.Sort(where)
	return keys, where
}

func rb16() nodeview.RuntimeBinary {
	return nodeview.RuntimeBinary{Path: "/usr/bin/containerd", ModulePath: "github.com/containerd/containerd", ModuleVersion: "v1.6.20"}
}

func rb229() nodeview.RuntimeBinary {
	return nodeview.RuntimeBinary{Path: "/usr/bin/containerd", ModulePath: "github.com/containerd/containerd/v2", ModuleVersion: "v2.2.9"}
}

// TestPluginKeyLints: the unknown keys of plugin tables, per containerd
// release, with the file and line that set them (after 2.x's migration
// of a version 2 configuration, the line in the cri table).
func TestPluginKeyLints(t *testing.T) {
	const cfg = DefaultConfig
	for _, tc := range []struct {
		root string
		rb   nodeview.RuntimeBinary
		want []string
	}{
		{"v2", rb229(), []string{
			cfg + ":14 io.containerd.cri.v1.images runtime_platform",
			cfg + ":14 io.containerd.cri.v1.images runtime_platform.runc",
			cfg + ":14 io.containerd.cri.v1.images runtime_platform.runc.platform",
			cfg + ":14 io.containerd.cri.v1.runtime containerd.runtimes.runc.snapshot",
			cfg + ":13 io.containerd.cri.v1.runtime containerd.runtimes.runc.runtime_typo",
			cfg + ":10 io.containerd.cri.v1.runtime containerd.no_such",
			cfg + ":20 io.containerd.cri.v1.runtime cni.confdir",
			cfg + ":5 io.containerd.cri.v1.runtime bogus_top",
			cfg + ":25 io.containerd.transfer.v1.local max_concurent_downloads",
		}},
		{"v2", rb16(), []string{
			cfg + ":10 io.containerd.grpc.v1.cri containerd.no_such",
			cfg + ":13 io.containerd.grpc.v1.cri containerd.runtimes.runc.runtime_typo",
			cfg + ":14 io.containerd.grpc.v1.cri containerd.runtimes.runc.snapshot",
			cfg + ":20 io.containerd.grpc.v1.cri cni.confdir",
			cfg + ":5 io.containerd.grpc.v1.cri bogus_top",
		}},
		{"v3", rb229(), []string{
			cfg + ":9 io.containerd.cri.v1.runtime containerd.runtimes.runc.sandbox_mode",
			cfg + ":15 io.containerd.cri.v1.images pull_timeout",
			cfg + ":22 io.containerd.grpc.v1.cri sandbox_image",
			cfg + ":28 io.containerd.transfer.v1.local unpack_config.snapshoter",
			cfg + ":4 io.containerd.cri.v1.runtime enable_cdl",
		}},
		{"v3 importing v2", rb229(), []string{
			"/etc/containerd/conf.d/10-cri.toml:4 io.containerd.cri.v1.runtime max_container_log_lines",
			cfg + ":5 io.containerd.cri.v1.runtime selinux_typo",
		}},
		{"disabled", rb229(), []string{cfg + ":6 io.containerd.cri.v1.images snapshoter"}},
		{"v1", rb229(), []string{
			cfg + ":2 io.containerd.grpc.v1.cri enable_selinux",
			cfg + ":3 io.containerd.grpc.v1.cri selinux_typo",
			cfg + ":4 io.containerd.grpc.v1.cri containerd",
		}},
		{"v1", rb16(), []string{cfg + ":3 io.containerd.grpc.v1.cri selinux_typo"}},
		// 2.3 and later, and a 1.x of unknown minor, may know keys the
		// tables lack: no lint.
		{"v3", nodeview.RuntimeBinary{Path: "/usr/bin/containerd", ModulePath: "github.com/containerd/containerd/v2", ModuleVersion: "v2.3.0"}, nil},
		{"v2", nodeview.RuntimeBinary{Path: "/usr/bin/containerd", ModulePath: "github.com/containerd/containerd"}, nil},
	} {
		_, got := pluginLints(t, writeRoot(t, pluginKeyRoots[tc.root]), tc.rb, Options{})
		want := slices.Clone(tc.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s on %s %s:\n got %q\nwant %q", tc.root, tc.rb.ModulePath, tc.rb.ModuleVersion, got, want)
		}
	}
}

// TestPluginKeysAgreeWithContainerd runs each real containerd's `config
// dump` (it decodes every plugin's table as the daemon does, and starts
// nothing) on the roots above. containerd 2.x must log "Ignoring unknown
// key in TOML for plugin" for exactly the plugin keys Load warns about
// (the registry tables aside: the registry lint words those). containerd
// 1.6 must log nothing, and its dump must have dropped exactly the keys
// Load warns about: every other key the file sets in the cri table is in
// the dump.
func TestPluginKeysAgreeWithContainerd(t *testing.T) {
	bins := realContainerds(t)
	logRe := regexp.MustCompile(`msg="Ignoring unknown key in TOML for plugin".*`)
	fieldRe := regexp.MustCompile(`\b(key|plugin)=("(?:[^"\\]|\\.)*"|\S+)`)
	for name, files := range pluginKeyRoots {
		root := writeRoot(t, files)
		file := filepath.Join(root, DefaultConfig)
		for ver, bin := range bins {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			cmd := exec.CommandContext(ctx, bin, "--config", file, "config", "dump")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			cancel()
			if err != nil {
				t.Fatalf("%s config dump of %s: %v\n%s", bin, name, err, stderr.String())
			}
			// The version as the node reports it (containerd --version is
			// what the CRI Version call answers): Debian's binary has no
			// module version in its build information.
			got, _ := pluginLints(t, root, binaryInfo(t, bin), Options{RuntimeVersion: "containerd://" + binaryVersion(t, bin)})
			if ver == "1.x" {
				if strings.Contains(stderr.String(), "unknown key") {
					t.Errorf("%s: containerd 1.x logged about unknown keys; the warning says it says nothing:\n%s", name, stderr.String())
				}
				dropped := droppedCRIKeys(t, files, stdout.Bytes())
				if !slices.Equal(got, dropped) {
					t.Errorf("%s: Load warns about %q, containerd %s's dump dropped %q", name, got, ver, dropped)
				}
				t.Logf("%s on containerd 1.x: dropped %q", name, dropped)
				continue
			}
			var logged []string
			for _, line := range logRe.FindAllString(stderr.String(), -1) {
				f := map[string]string{}
				for _, m := range fieldRe.FindAllStringSubmatch(line, -1) {
					f[m[1]] = strings.Trim(m[2], `"`)
				}
				key := strings.ReplaceAll(f["key"], " ", ".")
				if strings.HasPrefix(key, "registry.") {
					continue
				}
				logged = append(logged, f["plugin"]+" "+key)
			}
			slices.Sort(logged)
			if len(logged) == 0 && len(got) > 0 {
				t.Errorf("%s: containerd %s logged no unknown plugin key:\n%s", name, ver, stderr.String())
			}
			if !slices.Equal(got, logged) {
				t.Errorf("%s: Load warns about %q, containerd %s logged %q", name, got, ver, logged)
			}
			t.Logf("%s on containerd %s: logged %q", name, ver, logged)
		}
	}
}

// droppedCRIKeys are the leaf keys the root's files set in the cri
// plugin's table (registry aside) that containerd 1.6's config dump does
// not have, as "plugin key".
func droppedCRIKeys(t *testing.T, files map[string]string, dump []byte) []string {
	t.Helper()
	var d struct {
		Plugins map[string]any `toml:"plugins"`
	}
	if err := toml.Unmarshal(dump, &d); err != nil {
		t.Fatalf("config dump: %v", err)
	}
	var out []string
	for _, content := range files {
		var f struct {
			Plugins map[string]any `toml:"plugins"`
		}
		if err := toml.Unmarshal([]byte(content), &f); err != nil {
			t.Fatal(err)
		}
		table := f.Plugins[pluginCRIv2]
		if table == nil {
			table = f.Plugins["cri"]
		}
		for _, k := range leafKeys(table, nil) {
			if k[0] == "registry" || (len(k) > 4 && k[0] == "containerd" && k[1] == "runtimes" && k[3] == "options") {
				continue
			}
			var cur any = d.Plugins[pluginCRIv2]
			for _, p := range k {
				m, _ := cur.(map[string]any)
				cur = m[p]
			}
			if cur == nil {
				out = append(out, pluginCRIv2+" "+strings.Join(k, "."))
			}
		}
	}
	slices.Sort(out)
	return out
}

func leafKeys(v any, prefix []string) [][]string {
	m, ok := v.(map[string]any)
	if !ok {
		if prefix == nil {
			return nil
		}
		return [][]string{slices.Clone(prefix)}
	}
	var out [][]string
	for _, k := range sortedKeys(m) {
		out = append(out, leafKeys(m[k], append(prefix, k))...)
	}
	return out
}

// binaryVersion is the version `containerd --version` prints
// ("containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+b1").
func binaryVersion(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", bin, err)
	}
	f := strings.Fields(string(out))
	if len(f) < 3 {
		t.Fatalf("%s --version: %q", bin, out)
	}
	return strings.TrimPrefix(f[2], "v")
}

// containerdTableFiles set an image key in a version 2 file's
// cri.containerd table, with and without runtimes.
var containerdTableFiles = map[string]string{
	"without runtimes": "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n  discard_unpacked_layers = true\n",
	"with runtimes":    "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n  discard_unpacked_layers = true\n  [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\n    runtime_type = \"io.containerd.runc.v2\"\n",
}

// TestContainerdTableMigration: containerd 2.x's images plugin moves
// discard_unpacked_layers (and snapshotter, disable_snapshot_annotations)
// out of a version 2 file's cri.containerd table only when that table has
// runtimes; without, the key is dropped and the pull stays on the
// transfer service. Checked against the real 2.x's config dump when
// PULLPATH_CONTAINERD2 is set.
func TestContainerdTableMigration(t *testing.T) {
	bin := ""
	if bins := realContainerdsOptional(); bins["2.x"] != "" {
		bin = bins["2.x"]
	} else {
		t.Log("PULLPATH_CONTAINERD2 is not set: the real 2.x dump is not compared")
	}
	for name, content := range containerdTableFiles {
		root := writeRoot(t, map[string]string{DefaultConfig: content})
		c, err := Load(root, rb229(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := name == "with runtimes"
		if got := c.PullPath == PullLocal; got != want {
			t.Errorf("%s: pull path %s (%s), want local=%v", name, c.PullPath, c.PullPathReason, want)
		}
		if bin == "" {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		out, err := exec.CommandContext(ctx, bin, "--config", filepath.Join(root, DefaultConfig), "config", "dump").Output()
		cancel()
		if err != nil {
			t.Fatalf("%s config dump: %v", bin, err)
		}
		var d struct {
			Plugins map[string]struct {
				Discard bool `toml:"discard_unpacked_layers"`
			} `toml:"plugins"`
		}
		if err := toml.Unmarshal(out, &d); err != nil {
			t.Fatal(err)
		}
		if got := d.Plugins[pluginImagesV3].Discard; got != want {
			t.Errorf("%s: containerd 2.x's dump has discard_unpacked_layers = %v, want %v", name, got, want)
		}
	}
}

// realContainerdsOptional is realContainerds without the skip.
func realContainerdsOptional() map[string]string {
	out := map[string]string{}
	if p := os.Getenv("PULLPATH_CONTAINERD2"); p != "" {
		out["2.x"] = p
	}
	return out
}

// mergedVersionRoots: containerd 2.x migrates the merged configuration
// once, when its version (the last file's of 2 or more) is below 3.
var mergedVersionRoots = map[string]map[string]string{
	// migrated: the cri registry table is read (moved to the images plugin)
	"v2 alone": {DefaultConfig: "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".registry]\n  config_path = \"/x/certs.d\"\n"},
	// not migrated: the v3 drop-in makes the merged version 3, and the
	// cri registry table is ignored
	"v2 main, v3 drop-in": {
		DefaultConfig:                    "version = 2\nimports = [\"conf.d/*.toml\"]\n[plugins.\"io.containerd.grpc.v1.cri\".registry]\n  config_path = \"/x/certs.d\"\n",
		"/etc/containerd/conf.d/10.toml": "version = 3\n[plugins.\"io.containerd.cri.v1.runtime\"]\n  enable_selinux = false\n",
	},
}

// TestMergedVersionMigration: Load reads the registry table containerd
// 2.x reads after its merge-then-migrate, and warns config.legacy-ignored
// exactly when the cri registry table is left unread; compared with the
// real 2.x's config dump when PULLPATH_CONTAINERD2 is set.
func TestMergedVersionMigration(t *testing.T) {
	bin := realContainerdsOptional()["2.x"]
	if bin == "" {
		t.Log("PULLPATH_CONTAINERD2 is not set: the real 2.x dump is not compared")
	}
	for name, files := range mergedVersionRoots {
		root := writeRoot(t, files)
		c, err := Load(root, rb229(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		read := name == "v2 alone"
		ignored := false
		for _, w := range c.Warnings {
			ignored = ignored || w.Code == verdict.CodeConfigLegacyIgnored
		}
		if ignored == read || (c.reg.ConfigPath == "/x/certs.d") != read {
			t.Errorf("%s: config_path %q, legacy-ignored warning %v; want the cri registry read=%v", name, c.reg.ConfigPath, ignored, read)
		}
		if bin == "" {
			continue
		}
		cp, _ := dumpRegistry(t, bin, filepath.Join(root, DefaultConfig), 2)
		if (cp == "/x/certs.d") != read {
			t.Errorf("%s: containerd 2.x's dump has config_path %q, want read=%v", name, cp, read)
		}
	}
}
