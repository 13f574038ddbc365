package runtimecfg

import (
	"context"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/nodeview"
)

// windowsRoot is a copy of a Windows node's C: drive: containerd's
// certs.d under C:\ProgramData\containerd, one registry directory named
// the Windows way (no colon) and one the Linux way.
func windowsRoot(t *testing.T) string {
	return writeRoot(t, map[string]string{
		"ProgramData/containerd/certs.d/registry.lab5000/hosts.toml": "server = \"https://registry.lab:5000\"\n[host.\"https://mirror.lab\"]\n  capabilities = [\"pull\", \"resolve\"]\n",
		"ProgramData/containerd/certs.d/other.lab:6000/hosts.toml":   "server = \"https://other.lab:6000\"\n[host.\"https://mirror.lab\"]\n",
		"ProgramData/containerd/certs.d/both.lab_7000_/hosts.toml":   "[host.\"https://mirror.lab\"]\n",
	})
}

type windowsRow struct {
	nodeOS, registry string
	// golden: the plan's endpoints with their sources, then the
	// warnings' codes and messages.
	golden string
}

func planText(p *Plan) string {
	var b strings.Builder
	for _, e := range p.Endpoints {
		b.WriteString(string(e.Role) + " " + e.Scheme + "://" + e.Host + e.Path + " from " + e.Source + "\n")
	}
	for _, w := range p.Warnings {
		b.WriteString(w.Code + ": " + w.Message + "\n")
	}
	return b.String()
}

// TestWindowsHostDirs: the same certs.d on a Windows node and on a Linux
// node. On Windows containerd reads registry.lab5000 for
// registry.lab:5000 and never other.lab:6000; on Linux the reverse; both
// read both.lab_7000_. The directory the node's containerd skips is a
// config.hosts-dir-os warning.
func TestWindowsHostDirs(t *testing.T) {
	t.Log("tier windows: not live (no Windows node or containerd on this machine): a copy of a Windows node's C: drive, read with Windows rules")
	const certsd = `C:\ProgramData\containerd\certs.d`
	root := windowsRoot(t)
	for _, row := range []windowsRow{
		{nodeview.OSWindows, "registry.lab:5000",
			"mirror https://mirror.lab/v2 from C:\\ProgramData\\containerd\\certs.d\\registry.lab5000\\hosts.toml\n" +
				"registry https://registry.lab:5000/v2 from C:\\ProgramData\\containerd\\certs.d\\registry.lab5000\\hosts.toml\n"},
		{"linux", "registry.lab:5000",
			"registry https://registry.lab:5000/v2 from default\n" +
				"config.hosts-dir-os: /ProgramData/containerd/certs.d/registry.lab5000 is named for containerd on windows: on this linux node containerd looks for registry.lab_5000_, then registry.lab:5000, then _default under /ProgramData/containerd/certs.d and never reads it\n"},
		{nodeview.OSWindows, "other.lab:6000",
			"registry https://other.lab:6000/v2 from default\n" +
				"config.hosts-dir-os: C:\\ProgramData\\containerd\\certs.d\\other.lab:6000 is named for containerd on linux: on this windows node containerd looks for other.lab_6000_, then other.lab6000, then _default under C:\\ProgramData\\containerd\\certs.d and never reads it\n"},
		{"linux", "other.lab:6000",
			"mirror https://mirror.lab/v2 from /ProgramData/containerd/certs.d/other.lab:6000/hosts.toml\n" +
				"registry https://other.lab:6000/v2 from /ProgramData/containerd/certs.d/other.lab:6000/hosts.toml\n"},
		{nodeview.OSWindows, "both.lab:7000",
			"mirror https://mirror.lab/v2 from C:\\ProgramData\\containerd\\certs.d\\both.lab_7000_\\hosts.toml\n" +
				"registry https://both.lab:7000/v2 from C:\\ProgramData\\containerd\\certs.d\\both.lab_7000_\\hosts.toml\n"},
	} {
		dir := certsd
		if row.nodeOS == "linux" {
			dir = "/ProgramData/containerd/certs.d"
		}
		c, err := Load(root, ctd20, Options{HostsDir: dir, NodeOS: row.nodeOS})
		if err != nil {
			t.Fatal(err)
		}
		view, _ := nodeview.Load(root)
		p, err := c.Plan(context.Background(), view, row.registry, false)
		if err != nil {
			t.Fatalf("%s %s: %v", row.nodeOS, row.registry, err)
		}
		if got := planText(p); got != row.golden {
			t.Errorf("%s node, %s:\n got:\n%s\nwant:\n%s", row.nodeOS, row.registry, got, row.golden)
		}
	}
}

// TestWindowsConfigPath: on Windows containerd 2.x sets no default
// config_path (plugins/cri/images/plugin.go sets it on Linux only) and
// splits a config_path list on ";".
func TestWindowsConfigPath(t *testing.T) {
	root := windowsRoot(t)
	c, err := Load(root, ctd20, Options{NodeOS: nodeview.OSWindows})
	if err != nil {
		t.Fatal(err)
	}
	if c.Mode != ModeLegacy || len(c.HostsDirs) != 0 {
		t.Errorf("windows, no config_path: mode %s dirs %q, want legacy", c.Mode, c.HostsDirs)
	}
	c, _ = Load(root, ctd20, Options{NodeOS: "linux"})
	if c.Mode != ModeConfigPath || len(c.HostsDirs) != 2 {
		t.Errorf("linux, no config_path: mode %s dirs %q, want the certs.d pair", c.Mode, c.HostsDirs)
	}
	c, _ = Load(root, ctd20, Options{NodeOS: nodeview.OSWindows, HostsDir: `C:\ProgramData\containerd\certs.d;D:\certs.d`})
	if want := []string{`C:\ProgramData\containerd\certs.d`, `D:\certs.d`}; strings.Join(c.HostsDirs, "|") != strings.Join(want, "|") {
		t.Errorf("windows list: %q, want %q", c.HostsDirs, want)
	}
}
