package runtimecfg

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/verdict"
)

// DefaultConfig is containerd's configuration file when its unit passes no
// --config.
const DefaultConfig = "/etc/containerd/config.toml"

// Plugin IDs that hold the CRI registry configuration.
const (
	pluginCRIv2    = "io.containerd.grpc.v1.cri"   // config version 1 ("cri") and 2; containerd 1.x always
	pluginImagesV3 = "io.containerd.cri.v1.images" // config version 3 on containerd 2.x
)

// ConfigFile is one containerd configuration file read, in containerd's
// load order (the main file, then each import breadth first).
type ConfigFile struct {
	Path       string `json:"path"`
	Version    int    `json:"version"`
	ImportedBy string `json:"imported_by,omitempty"`
	Missing    bool   `json:"missing,omitempty"`
}

// Setting is one setting that shapes the pull, with where its value came
// from: "file:line", or "default (containerd X)" when no file sets it.
type Setting struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// keyPath is a TOML key path joined with keySep.
const keySep = "\x1f"

func joinKey(parts ...string) string { return strings.Join(parts, keySep) }

// rawFile is the part of a containerd configuration file that matters here,
// decoded with containerd's go-toml.
type rawFile struct {
	Version  int            `toml:"version"`
	Imports  []string       `toml:"imports"`
	Plugins  map[string]any `toml:"plugins"`
	Disabled []string       `toml:"disabled_plugins"`
}

// loaded is the merged configuration with the origin of every key.
type loaded struct {
	files   []ConfigFile
	plugins map[string]any
	origin  map[string]string // key path under plugins → "file:line"
	// versionIgnored lists files whose plugin tables this containerd does
	// not read (a version 3 file on containerd 1.x).
	versionIgnored []string
	// unknown are lint messages for keys outside the plugin tables that
	// containerd does not know (unknownServerKeys).
	unknown []string
	// raw is, on containerd 2.x, the plugin tables merged as containerd
	// 2.x's LoadConfig merges them (version 1 plugin names renamed, no
	// other migration), and rawVersion the merged configuration's version:
	// 3 (the default), then each file's own when it is 2 or more (mergo's
	// override; a version 0 or 1 file is first migrated to the version
	// so far). The plugins' migration of a version 2 configuration runs
	// on these (pluginkeys.go).
	raw        map[string]any
	rawVersion int
	// disabled are the disabled_plugins of every file.
	disabled []string
}

// loadContainerd reads the main configuration file and its imports from
// under root, the way containerd rt does: every file decoded alone,
// migrated to the runtime's configuration version, then merged in load
// order. A file containerd cannot decode stops it from starting: that is
// the returned config.containerd error, naming the file and line.
func loadContainerd(root, mainPath string, rt Runtime) (*loaded, error) {
	l := &loaded{plugins: map[string]any{}, origin: map[string]string{}, raw: map[string]any{}, rawVersion: 3}
	pending := []ConfigFile{{Path: mainPath}}
	seen := map[string]bool{}
	for len(pending) > 0 {
		cf := pending[0]
		pending = pending[1:]
		if seen[cf.Path] {
			continue
		}
		seen[cf.Path] = true
		data, _, err := nodeview.ReadInRoot(root, cf.Path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				if cf.ImportedBy == "" {
					// No config.toml: containerd runs on its defaults.
					cf.Missing = true
					l.files = append(l.files, cf)
					return l, nil
				}
				// containerd fails to start on an import that does not exist.
				return l, verdict.Errorf(verdict.CodeConfigContainerd, verdict.RoleNone, "",
					"%s imports %s, which does not exist: containerd refuses to start (\"failed to load TOML\")", cf.ImportedBy, cf.Path)
			}
			return l, verdict.Wrap(verdict.CodeConfigContainerd, verdict.RoleNone, "", fmt.Errorf("reading %s: %w", cf.Path, err))
		}
		var rf rawFile
		if err := toml.Unmarshal(data, &rf); err != nil {
			return l, decodeError(cf.Path, err)
		}
		l.unknown = append(l.unknown, unknownServerKeys(cf.Path, data, rt)...)
		cf.Version = rf.Version
		if cf.Version == 0 {
			cf.Version = 1
		}
		l.disabled = append(l.disabled, rf.Disabled...)
		if rt.major >= 2 {
			raw := deepCopyTable(rf.Plugins)
			if cf.Version <= 1 {
				for short, long := range v1PluginNames {
					if v, ok := raw[short]; ok {
						raw[long] = v
						delete(raw, short)
					}
				}
			} else {
				l.rawVersion = cf.Version
			}
			mergeMaps(l.raw, raw)
		}
		l.files = append(l.files, cf)
		lines := keyLines(data)
		origin := map[string]string{}
		for k, line := range lines {
			origin[k] = fmt.Sprintf("%s:%d", cf.Path, line)
		}
		plugins, origin := migrate(rf.Plugins, origin, cf.Version, rt)
		if cf.Version >= 3 && rt.major == 1 {
			if _, ok := plugins[pluginImagesV3]; ok {
				l.versionIgnored = append(l.versionIgnored, cf.Path)
			}
		}
		merge(l, plugins, origin, rt)
		imports, err := resolveImports(root, cf.Path, rf.Imports)
		if err != nil {
			return l, verdict.Wrap(verdict.CodeConfigContainerd, verdict.RoleNone, "", fmt.Errorf("imports of %s: %w", cf.Path, err))
		}
		for _, im := range imports {
			pending = append(pending, ConfigFile{Path: im, ImportedBy: cf.Path})
		}
	}
	if rt.major >= 2 {
		// containerd 2.x merges the files first and migrates the merged
		// plugin tables once, when the merged version is below 3
		// (cmd/containerd/server/server.go New: each plugin's
		// ConfigMigration): a version 2 main file with a version 3
		// drop-in is not migrated at all, and its cri registry table is
		// ignored (measured with containerd 2.2.9's config dump).
		merged := deepCopyTable(l.raw)
		if l.rawVersion < 3 {
			migrateV2Plugins(merged)
		}
		l.plugins = merged
	}
	l.unknown = append(l.unknown, l.pluginKeyLints(rt)...)
	return l, nil
}

// decodeError words a TOML error as containerd's loadConfigFile does
// ("failed to unmarshal TOML at row R column C"), naming the file.
func decodeError(file string, err error) *verdict.Error {
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		return verdict.Errorf(verdict.CodeConfigContainerd, verdict.RoleNone, "",
			"%s:%d: column %d: %s: containerd refuses to start (\"failed to unmarshal TOML at row %d column %d\")", file, row, col, strings.TrimPrefix(de.Error(), "toml: "), row, col)
	}
	return verdict.Wrap(verdict.CodeConfigContainerd, verdict.RoleNone, "", fmt.Errorf("%s: %w: containerd refuses to start", file, err))
}

// resolveImports expands a file's imports as containerd's resolveImports
// does: relative paths are relative to the file's directory; a path with
// "*" is a glob (matched under root, sorted as filepath.Glob sorts).
func resolveImports(root, parent string, imports []string) ([]string, error) {
	var out []string
	for _, p := range imports {
		p = path.Clean(filepath.ToSlash(p))
		if !path.IsAbs(p) {
			p = path.Join(path.Dir(parent), p)
		}
		if !strings.Contains(p, "*") {
			out = append(out, p)
			continue
		}
		dir, pattern := path.Split(p)
		if strings.Contains(dir, "*") {
			return nil, fmt.Errorf("import %s: a glob in a directory name is not read by pullpath", p)
		}
		if _, err := path.Match(pattern, ""); err != nil {
			return nil, fmt.Errorf("import %s: %w", p, err)
		}
		hd, err := nodeview.InRoot(root, dir)
		if err != nil {
			continue
		}
		ents, err := readDirNames(hd)
		if err != nil {
			continue
		}
		for _, name := range ents {
			if ok, _ := path.Match(pattern, name); ok {
				out = append(out, path.Join(dir, name))
			}
		}
	}
	return out, nil
}

// keyLines maps every key path written in a TOML document to its line:
// table headers and keys, with the table's path as prefix.
func keyLines(data []byte) map[string]int {
	out := map[string]int{}
	walkTOML(data, func(e tomlEntry) {
		if len(e.Path) == 0 || e.Path[0] != "plugins" {
			return
		}
		k := joinKey(e.Path[1:]...)
		if e.Table {
			if _, ok := out[k]; !ok {
				out[k] = e.Line
			}
			return
		}
		if len(e.Path) > 1 {
			out[k] = e.Line
		}
	})
	return out
}

// v1PluginNames are containerd's short plugin names of configuration
// version 1 (containerd's v1MigratePluginName).
var v1PluginNames = map[string]string{"cri": pluginCRIv2}

// criMigratedKeys are the keys containerd 2.x's CRI images plugin moves
// from io.containerd.grpc.v1.cri to io.containerd.cri.v1.images when it
// migrates a version 1 or 2 file (plugins/cri/images configMigration).
var criMigratedKeys = []string{"registry", "image_decryption", "max_concurrent_downloads", "image_pull_progress_timeout", "image_pull_with_sync_fs", "stats_collect_period"}

// criMigratedContainerdKeys are moved from the cri plugin's containerd table.
var criMigratedContainerdKeys = []string{"snapshotter", "disable_snapshot_annotations", "discard_unpacked_layers"}

// migrate brings one file's plugin tables to the configuration version the
// runtime reads, moving origins along with the keys.
func migrate(plugins map[string]any, origin map[string]string, ver int, rt Runtime) (map[string]any, map[string]string) {
	if plugins == nil {
		plugins = map[string]any{}
	}
	move := func(from, to []string) {
		f, t := joinKey(from...), joinKey(to...)
		for k, v := range origin {
			if k == f || strings.HasPrefix(k, f+keySep) {
				origin[t+strings.TrimPrefix(k, f)] = v
			}
		}
	}
	if ver <= 1 {
		for short, long := range v1PluginNames {
			if v, ok := plugins[short]; ok {
				plugins[long] = v
				delete(plugins, short)
				move([]string{short}, []string{long})
			}
		}
	}
	// containerd 2.x moves a version 2 file's CRI settings; a version 1
	// file's plugin names are renamed but its registry is not moved, so
	// it is ignored (measured with containerd 2.2.9's config dump).
	if rt.major >= 2 && ver == 2 {
		src, ok := plugins[pluginCRIv2].(map[string]any)
		if ok {
			dst, _ := plugins[pluginImagesV3].(map[string]any)
			if dst == nil {
				dst = map[string]any{}
			}
			for _, k := range criMigratedKeys {
				if v, ok := src[k]; ok {
					dst[k] = v
					move([]string{pluginCRIv2, k}, []string{pluginImagesV3, k})
				}
			}
			// plugins/cri/images/plugin.go migrateConfig copies these
			// only when the containerd table has runtimes (measured
			// with containerd 2.2.9's config dump).
			if c, ok := src["containerd"].(map[string]any); ok && c["runtimes"] != nil {
				for _, k := range criMigratedContainerdKeys {
					if v, ok := c[k]; ok {
						dst[k] = v
						move([]string{pluginCRIv2, "containerd", k}, []string{pluginImagesV3, k})
					}
				}
			}
			plugins[pluginImagesV3] = dst
		}
	}
	return plugins, origin
}

// merge folds one file's plugin tables into l. containerd 1.x replaces a
// plugin's whole table with the later file's (measured with Debian's
// containerd 1.6 `config dump`: a drop-in that sets one CRI key drops every
// other CRI key of config.toml); containerd 2.x merges tables key by key
// (measured with containerd 2.2.9's config dump).
func merge(l *loaded, plugins map[string]any, origin map[string]string, rt Runtime) {
	for id, v := range plugins {
		if rt.major < 2 {
			l.plugins[id] = v
			for k := range l.origin {
				if k == id || strings.HasPrefix(k, id+keySep) {
					delete(l.origin, k)
				}
			}
		} else {
			if dm, ok := l.plugins[id].(map[string]any); ok {
				if sm, ok := v.(map[string]any); ok {
					mergeMaps(dm, sm)
					continue
				}
			}
			l.plugins[id] = v
		}
	}
	for k, o := range origin {
		id, _, _ := strings.Cut(k, keySep)
		if _, ok := plugins[id]; ok {
			l.origin[k] = o
		}
	}
}

// mergeMaps merges src into dst: tables key by key, any other value
// replaced by src's.
func mergeMaps(dst, src map[string]any) {
	for k, sv := range src {
		if dm, ok := dst[k].(map[string]any); ok {
			if sm, ok := sv.(map[string]any); ok {
				mergeMaps(dm, sm)
				continue
			}
		}
		dst[k] = sv
	}
}

// lookup returns the value at a key path of the merged plugins.
func (l *loaded) lookup(parts ...string) (any, bool) { return lookupIn(l.plugins, parts) }

// lookupIn returns the value at a key path of a decoded TOML tree.
func lookupIn(tree map[string]any, parts []string) (any, bool) {
	var cur any = tree
	for _, p := range parts {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// originOf returns where a key path was set: the key itself, else the
// nearest table above it that a file wrote.
func (l *loaded) originOf(parts ...string) string {
	for i := len(parts); i > 0; i-- {
		if o, ok := l.origin[joinKey(parts[:i]...)]; ok {
			return o
		}
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
