package runtimecfg

import (
	"errors"
	"os"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/verdict"
)

// criRegistry is the CRI plugin's registry table, in the shape containerd
// decodes it (internal/cri/config Registry; 1.x adds configs.tls).
type criRegistry struct {
	ConfigPath string                       `toml:"config_path"`
	Mirrors    map[string]criMirror         `toml:"mirrors"`
	Configs    map[string]criRegistryConfig `toml:"configs"`
	Auths      map[string]map[string]any    `toml:"auths"`
	Headers    map[string][]string          `toml:"headers"`
}

type criMirror struct {
	Endpoints []string `toml:"endpoint"`
}

type criRegistryConfig struct {
	Auth map[string]any `toml:"auth"`
	TLS  *criTLS        `toml:"tls"`
}

type criTLS struct {
	InsecureSkipVerify bool   `toml:"insecure_skip_verify"`
	CAFile             string `toml:"ca_file"`
	CertFile           string `toml:"cert_file"`
	KeyFile            string `toml:"key_file"`
}

// imagesConfig is the part of the CRI images configuration that decides
// between the transfer service and the local pull (containerd 2.1+).
type imagesConfig struct {
	UseLocalImagePull          *bool `toml:"use_local_image_pull"`
	DisableSnapshotAnnotations *bool `toml:"disable_snapshot_annotations"`
	DiscardUnpackedLayers      bool  `toml:"discard_unpacked_layers"`
	MaxConcurrentDownloads     *int  `toml:"max_concurrent_downloads"`
	ImagePullWithSyncFs        bool  `toml:"image_pull_with_sync_fs"`
}

// registryPlugin is the plugin whose registry table the runtime reads.
func registryPlugin(rt Runtime) string {
	if rt.major >= 2 {
		return pluginImagesV3
	}
	return pluginCRIv2
}

// decodeTable decodes the merged table at parts into out, as containerd's
// Config.Decode does (re-encoded, then decoded; unknown keys ignored with a
// warning). A type error makes containerd fail to load the CRI plugin.
func (l *loaded) decodeTable(out any, parts ...string) (unknown []string, err error) {
	v, ok := l.lookup(parts...)
	if !ok {
		return nil, nil
	}
	b, err := toml.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := toml.NewDecoder(strings.NewReader(string(b))).DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		var se *toml.StrictMissingError
		if !errors.As(err, &se) {
			return nil, err
		}
		for _, e := range se.Errors {
			unknown = append(unknown, strings.Join(e.Key(), "."))
		}
		if err := toml.Unmarshal(b, out); err != nil {
			return unknown, err
		}
	}
	return unknown, nil
}

// typeError words a decode error of a plugin table: containerd fails to
// load the plugin, and the CRI with it.
func (l *loaded) typeError(plugin string, err error, parts ...string) *verdict.Error {
	where := l.originOf(parts...)
	var de *toml.DecodeError
	if errors.As(err, &de) && len(de.Key()) > 0 {
		where = l.originOf(append(append([]string{}, parts...), de.Key()...)...)
	}
	if where == "" {
		where = "the containerd configuration"
	}
	msg := strings.TrimPrefix(err.Error(), "toml: ")
	return verdict.Errorf(verdict.CodeConfigContainerd, verdict.RoleNone, "",
		"%s: %s: containerd fails to load the CRI plugin %s (\"failed to load plugin\"), so the kubelet can pull nothing", where, msg, plugin)
}

func readDirNames(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out, nil
}

// splitConfigPath splits config_path as containerd does (filepath.SplitList
// of the node's OS: ":" on Linux, ";" on Windows; empty elements are kept
// by SplitList and then find nothing).
func splitConfigPath(goos, s string) []string {
	sep := ":"
	if goos == nodeview.OSWindows {
		sep = ";"
	}
	if s == "" {
		return nil
	}
	var out []string
	for _, d := range strings.Split(s, sep) {
		if d != "" {
			out = append(out, d)
		}
	}
	return out
}
