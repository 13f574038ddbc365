package runtimecfg

//go:generate go run ../../hack/containerdkeys -o pluginkeys_gen.go

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Plugins whose tables the plugin-key lint reads, besides the two CRI
// registry plugins (containerd.go).
const (
	pluginRuntimeV3  = "io.containerd.cri.v1.runtime"
	pluginTransferV1 = "io.containerd.transfer.v1.local"
)

// pluginKeyRelease is the release of pluginKeys whose tables describe rt,
// or "" when none does. A table describes the releases up to its own
// within its major version: an older release knows at most its keys, so
// the lint can miss a key that release does not know but never calls a
// known key unknown. A newer minor (1.7, 2.3 and later) may know keys the
// table lacks, and a runtime of unknown minor may be one: no lint then.
func pluginKeyRelease(rt Runtime) string {
	switch {
	case rt.major == 1 && rt.minor >= 0 && rt.minor <= 6:
		return "1.6.20"
	case rt.major == 2 && rt.minor >= 0 && rt.minor <= 2:
		return "2.2.9"
	}
	return ""
}

// keyNode is one table of a plugin's configuration: its keys, or the
// element of a map of tables ("*") or an array of tables ("[]").
type keyNode struct {
	children map[string]*keyNode
	elem     *keyNode
	array    bool
}

func keyTree(paths []string) *keyNode {
	root := &keyNode{}
	for _, p := range paths {
		n := root
		for _, part := range strings.Split(p, ".") {
			switch part {
			case "*", "[]":
				if n.elem == nil {
					n.elem = &keyNode{}
				}
				n.array = part == "[]"
				n = n.elem
			default:
				if n.children == nil {
					n.children = map[string]*keyNode{}
				}
				c, ok := n.children[part]
				if !ok {
					c = &keyNode{}
					n.children[part] = c
				}
				n = c
			}
		}
	}
	return root
}

var anyType = reflect.TypeFor[any]()

// goType is the Go type go-toml decodes the node's table into: a struct
// with one field per key (tagged with the key), a map or slice of the
// element's type, and any for a leaf (every value, table or not).
func (n *keyNode) goType() reflect.Type {
	switch {
	case n.elem != nil && n.array:
		return reflect.SliceOf(n.elem.goType())
	case n.elem != nil:
		return reflect.MapOf(reflect.TypeFor[string](), n.elem.goType())
	case len(n.children) == 0:
		return anyType
	}
	names := sortedKeys(n.children)
	fields := make([]reflect.StructField, 0, len(names))
	for i, k := range names {
		fields = append(fields, reflect.StructField{
			Name: fmt.Sprintf("F%d", i),
			Type: n.children[k].goType(),
			Tag:  reflect.StructTag(fmt.Sprintf("toml:%q", k)),
		})
	}
	return reflect.StructOf(fields)
}

// unknownPluginKeys returns the keys of one merged plugin table that the
// plugin's configuration struct of release does not declare, as go-toml
// finds them decoding the table the way containerd 2.x's Config.Decode
// does (cmd/containerd/server/config: the table re-encoded, then decoded
// with DisallowUnknownFields; each key a StrictMissingError). A table
// that does not decode for another reason (a type error) yields nothing:
// the plugin's own decode reports that.
func unknownPluginKeys(release, plugin string, table any) [][]string {
	paths, ok := pluginKeys[release][plugin]
	if !ok || table == nil {
		return nil
	}
	b, err := toml.Marshal(table)
	if err != nil {
		return nil
	}
	out := reflect.New(keyTree(paths).goType())
	err = toml.NewDecoder(bytes.NewReader(b)).DisallowUnknownFields().Decode(out.Interface())
	var se *toml.StrictMissingError
	if !errors.As(err, &se) {
		return nil
	}
	var keys [][]string
	for _, e := range se.Errors {
		keys = append(keys, e.Key())
	}
	return keys
}

// pluginKeyLints lists, as lint messages, the keys of the plugin tables
// of pluginKeys that the node's containerd does not know.
//
// containerd 2.x decodes each plugin's table when it loads the plugin
// (cmd/containerd/server/server.go New, and `containerd config dump`'s
// outputConfig) with Config.Decode, which logs at warning level "Ignoring
// unknown key in TOML for plugin" with the fields plugin (the URI) and key
// (the key path joined with spaces), and no file or row: the table is the
// merged one, after the plugins' own migration of a version 2
// configuration (migrateV2Plugins). containerd 1.6's Config.Decode
// (services/server/config) unmarshals the table with go-toml v1, which
// drops unknown keys without a word.
//
// The registry tables are left to the registry lint (config.go registry),
// which words their keys itself; a disabled plugin's table is not decoded.
func (l *loaded) pluginKeyLints(rt Runtime) []string {
	release := pluginKeyRelease(rt)
	if release == "" {
		return nil
	}
	plugins := l.plugins
	if rt.major >= 2 {
		plugins = deepCopyTable(l.raw)
		if l.rawVersion < 3 {
			migrateV2Plugins(plugins)
		}
	}
	var out []string
	for _, plugin := range sortedKeys(pluginKeys[release]) {
		if slices.Contains(l.disabled, plugin) {
			continue
		}
		keys := unknownPluginKeys(release, plugin, plugins[plugin])
		sort.Slice(keys, func(i, j int) bool { return slices.Compare(keys[i], keys[j]) < 0 })
		for _, k := range keys {
			if k[0] == "registry" {
				continue
			}
			where := l.pluginKeyOrigin(rt, plugin, k)
			how := "says nothing (its go-toml v1 decode drops unknown keys)"
			if rt.major >= 2 {
				how = fmt.Sprintf("logs \"Ignoring unknown key in TOML for plugin\" plugin=%s key=%q", plugin, strings.Join(k, " "))
			}
			out = append(out, fmt.Sprintf("%s: %s ignores the unknown key %s of plugin %s and %s: the setting has no effect", where, rtLabel(rt), strings.Join(k, "."), plugin, how))
		}
	}
	return out
}

// pluginKeyOrigin is where a file set a plugin key: the key under its
// plugin, else (a version 2 file migrated by containerd 2.x) under the cri
// plugin it came from.
func (l *loaded) pluginKeyOrigin(rt Runtime, plugin string, key []string) string {
	try := [][]string{append([]string{plugin}, key...)}
	if rt.major >= 2 && plugin == pluginImagesV3 && key[0] == "runtime_platform" {
		// made by the images plugin's migration from a runtime's "snapshot"
		names := []string{}
		if len(key) > 1 {
			names = append(names, key[1])
		} else if rts, ok := l.rawLookup(pluginCRIv2, "containerd", "runtimes"); ok {
			if m, ok := rts.(map[string]any); ok {
				names = sortedKeys(m)
			}
		}
		for _, n := range names {
			try = append(try, []string{pluginCRIv2, "containerd", "runtimes", n, "snapshot"})
		}
	}
	if rt.major >= 2 && plugin != pluginCRIv2 {
		try = append(try, append([]string{pluginCRIv2}, key...), append([]string{pluginCRIv2, "containerd"}, key...))
	}
	for _, t := range try {
		if o, ok := l.origin[joinKey(t...)]; ok {
			return o
		}
	}
	for _, t := range try {
		if o := l.originOf(t...); o != "" {
			return o
		}
	}
	return "the containerd configuration"
}

// rawLookup returns the value at a key path of the raw merged plugins.
func (l *loaded) rawLookup(parts ...string) (any, bool) { return lookupIn(l.raw, parts) }

// migrateV2Plugins moves a merged version 2 configuration's CRI tables
// as containerd 2.2.9's plugins do before decoding them (each plugin's
// ConfigMigration, in plugin graph order: the images and runtime plugins,
// then the cri plugin that requires them):
//   - plugins/cri/images/plugin.go migrateConfig: sandbox_image becomes
//     pinned_images.sandbox; registry, image_decryption,
//     max_concurrent_downloads, image_pull_progress_timeout,
//     image_pull_with_sync_fs and stats_collect_period are copied; a
//     runtime's "snapshot" (sic) becomes runtime_platform (sic, a key
//     ImageConfig does not have) and containerd.snapshotter,
//     disable_snapshot_annotations and discard_unpacked_layers are
//     copied, both only when the containerd table has runtimes;
//   - plugins/cri/runtime/plugin.go migrateConfig: every other key of the
//     cri table that the runtime table does not set (unknown keys too),
//     cni with bin_dir as bin_dirs, containerd without the three image
//     keys, each runtime's sandbox_mode as sandboxer;
//   - plugins/cri/cri.go configMigration: the cri table keeps only the
//     six streaming-server keys.
func migrateV2Plugins(plugins map[string]any) {
	src, ok := plugins[pluginCRIv2].(map[string]any)
	if !ok {
		return
	}
	// images
	img, _ := plugins[pluginImagesV3].(map[string]any)
	if img == nil {
		img = map[string]any{}
	}
	pinned, _ := img["pinned_images"].(map[string]any)
	if pinned == nil {
		pinned = map[string]any{}
	}
	if v, ok := src["sandbox_image"]; ok {
		pinned["sandbox"] = v
	}
	if len(pinned) > 0 {
		img["pinned_images"] = pinned
	}
	for _, k := range criMigratedKeys {
		if v, ok := src[k]; ok {
			img[k] = v
		}
	}
	if cc, ok := src["containerd"].(map[string]any); ok {
		if rts, ok := cc["runtimes"].(map[string]any); ok {
			rp, _ := img["runtime_platform"].(map[string]any)
			if rp == nil {
				rp = map[string]any{}
			}
			for name, v := range rts {
				if r, ok := v.(map[string]any); ok {
					if s, ok := r["snapshot"]; ok && s != "" {
						// platform is platforms.DefaultStrict(), a
						// matcher whose fields are unexported: it
						// encodes as an empty table.
						rp[name] = map[string]any{"platform": map[string]any{}, "snapshotter": s}
					}
				}
			}
			if len(rp) > 0 {
				img["runtime_platform"] = rp
			}
			for _, k := range criMigratedContainerdKeys {
				if v, ok := cc[k]; ok {
					img[k] = v
				}
			}
		}
	}
	plugins[pluginImagesV3] = img

	// runtime
	rtm, _ := plugins[pluginRuntimeV3].(map[string]any)
	if rtm == nil {
		rtm = map[string]any{}
	}
	for k, v := range src {
		switch {
		case k == "cni" || k == "containerd" || k == "sandbox_image" || slices.Contains(criMigratedKeys, k) || slices.Contains(criServerKeys, k):
		default:
			if _, ok := rtm[k]; !ok {
				rtm[k] = v
			}
		}
	}
	if cni, ok := src["cni"].(map[string]any); ok {
		dst, _ := rtm["cni"].(map[string]any)
		if dst == nil {
			dst = map[string]any{}
		}
		for k, v := range cni {
			if k == "bin_dir" {
				if _, set := dst["bin_dirs"]; !set {
					dst["bin_dirs"] = []any{v}
				}
				continue
			}
			if _, ok := dst[k]; !ok {
				dst[k] = v
			}
		}
		rtm["cni"] = dst
	}
	if cc, ok := src["containerd"].(map[string]any); ok {
		dst, _ := rtm["containerd"].(map[string]any)
		if dst == nil {
			dst = map[string]any{}
		}
		for k, v := range cc {
			if slices.Contains(criMigratedContainerdKeys, k) {
				continue
			}
			if _, ok := dst[k]; !ok {
				dst[k] = v
			}
		}
		rtm["containerd"] = dst
		if rts, ok := dst["runtimes"].(map[string]any); ok {
			for _, v := range rts {
				if r, ok := v.(map[string]any); ok {
					if m, ok := r["sandbox_mode"]; ok {
						if _, ok := r["sandboxer"]; !ok {
							r["sandboxer"] = m
							delete(r, "sandbox_mode")
						}
					}
				}
			}
		}
	}
	plugins[pluginRuntimeV3] = rtm

	// cri
	dst := map[string]any{}
	for _, k := range criServerKeys {
		if v, ok := src[k]; ok {
			dst[k] = v
		}
	}
	plugins[pluginCRIv2] = dst
}

// criServerKeys stay in the cri plugin's table in containerd 2.x
// (plugins/cri/cri.go configMigration).
var criServerKeys = []string{"disable_tcp_service", "stream_server_address", "stream_server_port", "stream_idle_timeout", "enable_tls_streaming", "x509_key_pair_streaming"}

// deepCopyTable copies a decoded TOML table: nested tables and arrays are
// copied, leaves shared.
func deepCopyTable(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = deepCopyValue(v)
	}
	return out
}

func deepCopyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return deepCopyTable(t)
	case []any:
		c := make([]any, len(t))
		for i, e := range t {
			c[i] = deepCopyValue(e)
		}
		return c
	}
	return v
}
