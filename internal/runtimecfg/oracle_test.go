package runtimecfg

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/pullpath/pullpath/internal/nodeview"
)

// realContainerds are the containerd binaries this machine can run as
// ground truth: Debian's 1.6 and the pinned 2.x of tools/containerd2.
func realContainerds(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	if _, err := os.Stat("/usr/bin/containerd"); err == nil {
		out["1.x"] = "/usr/bin/containerd"
	} else {
		t.Log("Debian's containerd is not installed (/usr/bin/containerd): the 1.x ground truth is not run")
	}
	if p := os.Getenv("PULLPATH_CONTAINERD2"); p != "" {
		out["2.x"] = p
	} else {
		t.Log("PULLPATH_CONTAINERD2 is not set (tools/containerd2/build.sh): the 2.x ground truth is not run")
	}
	if len(out) == 0 {
		t.Skip("no real containerd on this machine")
	}
	return out
}

// binaryInfo reads a containerd binary as nodeview does.
func binaryInfo(t *testing.T, path string) nodeview.RuntimeBinary {
	t.Helper()
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rb := nodeview.RuntimeBinary{Path: path, GoVersion: bi.GoVersion, ModulePath: bi.Main.Path, ModuleVersion: bi.Main.Version}
	if rb.ModulePath == "" {
		rb.ModulePath = bi.Path
	}
	return rb
}

// dumpRegistry runs `containerd --config main config dump` and returns the
// CRI registry's config_path and mirror endpoints as that containerd merged
// them.
func dumpRegistry(t *testing.T, bin, main string, major int) (string, map[string][]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--config", main, "config", "dump")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s config dump: %v\n%s", bin, err, stderr.String())
	}
	var d struct {
		Plugins map[string]struct {
			Registry struct {
				ConfigPath string `toml:"config_path"`
				Mirrors    map[string]struct {
					Endpoint []string `toml:"endpoint"`
				} `toml:"mirrors"`
			} `toml:"registry"`
		} `toml:"plugins"`
	}
	if err := toml.Unmarshal(stdout.Bytes(), &d); err != nil {
		t.Fatalf("decoding the dump: %v", err)
	}
	id := pluginCRIv2
	if major >= 2 {
		id = pluginImagesV3
	}
	r := d.Plugins[id].Registry
	m := map[string][]string{}
	for h, e := range r.Mirrors {
		m[h] = e.Endpoint
	}
	return r.ConfigPath, m
}

// TestLoadAgreesWithContainerdConfigDump writes configuration layouts
// (version 1, 2 and 3, imports, globs, drop-ins overriding the CRI table)
// and checks that Load merges them to the registry settings each real
// containerd's own `config dump` prints.
func TestLoadAgreesWithContainerdConfigDump(t *testing.T) {
	bins := realContainerds(t)
	type layout struct {
		name  string
		files map[string]string // relative path → content; imports use {D} for the directory
	}
	layouts := []layout{
		{"v2-config-path", map[string]string{"config.toml": "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".registry]\nconfig_path = \"/k3s/certs.d\"\n"}},
		{"v2-mirrors", map[string]string{"config.toml": "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".registry.mirrors.\"docker.io\"]\nendpoint = [\"https://mirror.gcr.io\", \"https://registry-1.docker.io\"]\n"}},
		{"v1-short-name", map[string]string{"config.toml": "[plugins.cri.registry.mirrors.\"quay.io\"]\nendpoint = [\"https://m.example\"]\n"}},
		{"v3-images", map[string]string{"config.toml": "version = 3\n[plugins.\"io.containerd.cri.v1.images\".registry]\nconfig_path = \"/v3/certs.d\"\n"}},
		{"dropin-replaces-cri", map[string]string{
			"config.toml":      "version = 2\nimports = [\"{D}/conf.d/*.toml\"]\n[plugins.\"io.containerd.grpc.v1.cri\".registry]\nconfig_path = \"/main/certs.d\"\n",
			"conf.d/10.toml":   "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\nsandbox_image = \"pause:3\"\n",
			"conf.d/20-x.toml": "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".registry.mirrors.\"quay.io\"]\nendpoint = [\"https://q.example\"]\n",
		}},
		{"dropin-sets-config-path", map[string]string{
			"config.toml":     "version = 2\nimports = [\"conf.d/eks.toml\"]\n[plugins.\"io.containerd.grpc.v1.cri\".containerd]\nsnapshotter = \"overlayfs\"\n",
			"conf.d/eks.toml": "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".registry]\nconfig_path = \"/etc/containerd/certs.d:/etc/docker/certs.d\"\n",
		}},
		{"v3-main-v2-import", map[string]string{
			"config.toml": "version = 3\nimports = [\"{D}/old.toml\"]\n[plugins.\"io.containerd.cri.v1.images\".registry]\nconfig_path = \"/new/certs.d\"\n",
			"old.toml":    "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".registry]\nconfig_path = \"/old/certs.d\"\n",
		}},
		{"no-registry", map[string]string{"config.toml": "version = 2\n"}},
	}
	for kind, bin := range bins {
		rb := binaryInfo(t, bin)
		rt := detectContainerd("/", rb)
		for _, lay := range layouts {
			t.Run(kind+"/"+lay.name, func(t *testing.T) {
				dir := t.TempDir()
				for name, content := range lay.files {
					p := filepath.Join(dir, name)
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, []byte(strings.ReplaceAll(content, "{D}", dir)), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				main := filepath.Join(dir, "config.toml")
				wantCP, wantMirrors := dumpRegistry(t, bin, main, rt.major)
				rb.ConfigFlag = main
				c, err := Load("/", rb, Options{})
				if err != nil && !strings.Contains(err.Error(), "cannot be set when") {
					t.Fatalf("Load: %v", err)
				}
				gotCP := c.reg.ConfigPath
				if gotCP != wantCP {
					t.Errorf("config_path: pullpath merged %q, %s (%s) merged %q", gotCP, bin, rt.Version, wantCP)
				}
				gotMirrors := map[string][]string{}
				for h, m := range c.reg.Mirrors {
					gotMirrors[h] = m.Endpoints
				}
				if len(gotMirrors) != len(wantMirrors) {
					t.Errorf("mirrors: pullpath %v, containerd %v", gotMirrors, wantMirrors)
				}
				for h, e := range wantMirrors {
					if !slices.Equal(gotMirrors[h], e) {
						t.Errorf("mirrors[%s]: pullpath %v, containerd %v", h, gotMirrors[h], e)
					}
				}
				t.Logf("%s %s: config_path %q, mirrors %v; files %v", bin, rt.Version, wantCP, wantMirrors, c.Files)
			})
		}
	}
}
