package runtimecfg

import (
	"fmt"
	"net/url"
	"runtime"
	"strings"

	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Registry models.
const (
	ModeConfigPath = "config_path" // certs.d roots with hosts.toml
	ModeLegacy     = "legacy"      // inline mirrors/configs, no certs.d
)

// Pull paths of containerd 2.1+.
const (
	PullTransfer = "transfer" // the transfer service (containerd 2.1+ default)
	PullLocal    = "local"    // the CRI plugin's own pull
)

// Config is what the node's runtime reads to pull: the runtime, the files
// read in order, the registry model and every setting that shapes the plan
// with its source.
type Config struct {
	Runtime Runtime `json:"runtime"`
	// Layout names the on-disk layout recognised ("containerd": the
	// distribution's own files).
	Layout string       `json:"layout"`
	Files  []ConfigFile `json:"files"`
	// Mode is config_path or legacy; HostsDirs the config_path roots in
	// lookup order (node paths).
	Mode      string   `json:"registry_mode"`
	HostsDirs []string `json:"hosts_dirs,omitempty"`
	// PullPath is transfer or local on containerd 2.1+, local before;
	// PullPathReason says which setting decided it.
	PullPath       string    `json:"pull_path,omitempty"`
	PullPathReason string    `json:"pull_path_reason,omitempty"`
	Settings       []Setting `json:"settings"`
	// Warnings are the lints: settings the runtime ignores or that
	// mislead (catalogue codes config.*).
	Warnings []verdict.Warning `json:"-"`

	root    string
	reg     criRegistry
	regFrom map[string]string // legacy mirror host → "file:line"
	tlsFrom map[string]string
	fatal   *verdict.Error
	nodeOS  string // GOOS of the node (Options.NodeOS, else this machine's)
	// rangeChunk is the chunk of containerd 2.1+'s parallel Range layer
	// fetch, 0 when it fetches each layer with one request (layerFetch).
	rangeChunk int
	crio       *crioState // CRI-O's files (crio.go); nil for containerd
}

// Options override what Load finds.
type Options struct {
	// HostsDir, when set, is config_path as given on the command line
	// (probe --hosts-dir): it replaces what the configuration says.
	HostsDir string
	// RuntimeVersion is the runtime's version as the node's status
	// reports it ("containerd://1.7.27-k3s1", probe --runtime-version);
	// CRIVersion the running runtime's answer to the CRI Version call on
	// CRISocket. Either beats the files (applyVersionSources).
	RuntimeVersion, CRIVersion, CRISocket string
	// Namespace is the pod's namespace (the CRI sandbox config's, probe
	// --pod-namespace): CRI-O reads per-namespace auth and policy files
	// with it (crio_namespace.go). Empty when unknown.
	Namespace string
	// NodeOS is the node's operating system as a GOOS ("linux",
	// "windows") when the root is a copy of another system's files
	// (probe --node-os); "" is this machine's, the probe's own on the node.
	// On Windows containerd names host directories without colons, splits config_path on ";"
	// and has no default config_path (nodeview.HostDirCandidates).
	NodeOS string
}

// Load reads the node's runtime configuration under root. rb is the
// runtime binary nodeview found (its build information and unit).
//
// It always returns a usable *Config. The error is a config-layer
// *verdict.Error when the runtime refuses the configuration (a file it
// cannot decode, a CRI registry table it rejects): the runtime pulls
// nothing then, and the error names the file and line.
func Load(root string, rb nodeview.RuntimeBinary, o Options) (*Config, error) {
	if root == "" {
		root = "/"
	}
	c := &Config{root: root, Layout: "containerd", Settings: []Setting{}, regFrom: map[string]string{}, tlsFrom: map[string]string{}, nodeOS: o.NodeOS}
	if c.nodeOS == "" {
		c.nodeOS = runtime.GOOS
	}
	if c.nodeOS != runtime.GOOS {
		c.Settings = append(c.Settings, Setting{Key: "node OS", Value: c.nodeOS, Source: "given (probe --node-os), not this machine's " + runtime.GOOS})
	}
	lay := detectLayout(root)
	if lay != nil {
		c.Layout = lay.name
		if rb.ConfigFlag == "" {
			rb.ConfigFlag = lay.config
		}
		if erb, ok := embeddedContainerd(root, lay); ok && rb.ModuleVersion == "" {
			erb.ConfigFlag = rb.ConfigFlag
			rb = erb
		}
	}
	c.Runtime = detectContainerd(root, rb)
	if lay == nil {
		if name, why := recogniseDistro(root); name != "" {
			c.Layout = name
			c.Settings = append(c.Settings, Setting{Key: "layout", Value: name, Source: why})
		}
	}
	if rb.Path == "" && lay == nil {
		if f := crioFile(root); f != "" {
			// A CRI-O node: crio.conf, registries.conf and certs.d
			// (crio.go, registries.go, crio_plan.go).
			c.Runtime = detectCRIO(root, f)
			c.Settings = append(c.Settings, Setting{Key: "runtime", Value: CRIO, Source: f + " is on the node and no containerd is"})
			c.applyVersionSources(o)
			err := c.loadCRIO(root)
			c.crio.namespace = o.Namespace
			return c, err
		}
	}
	c.applyVersionSources(o)
	if c.Runtime.major < 0 {
		// No containerd binary with a version under the root (a copy of
		// /etc, a test root): read the files with containerd 2.0's rules,
		// whose default config_path is the certs.d pair, and say so.
		c.Runtime.major, c.Runtime.minor, c.Runtime.Assumed = 2, 0, true
		c.Settings = append(c.Settings, Setting{Key: "runtime version", Value: "unknown", Source: "no containerd binary with a version under the root: containerd 2.0's rules assumed"})
	}
	main := DefaultConfig
	mainSource := "default"
	if rb.ConfigFlag != "" {
		main, mainSource = rb.ConfigFlag, "--config of "+rb.Path+"'s unit"
		if lay != nil && rb.ConfigFlag == lay.config {
			mainSource = "the " + lay.name + " layout (found on disk)"
		}
	}
	c.Settings = append(c.Settings, Setting{Key: "config file", Value: main, Source: mainSource})
	if c.Runtime.Version != "" && !c.Runtime.Assumed {
		c.Settings = append(c.Settings, Setting{Key: "runtime version", Value: c.Runtime.Version, Source: c.Runtime.VersionSource})
	}
	l, err := loadContainerd(root, main, c.Runtime)
	c.Files = l.files
	for _, msg := range l.unknown {
		c.warn(verdict.CodeConfigUnknownKey, msg)
	}
	if err != nil {
		c.fatal, _ = verdict.AsError(err)
		c.Mode = ModeConfigPath
		return c, err
	}
	c.registry(l, o)
	if lay != nil && lay.registries != "" && c.fatal == nil {
		c.compareRegistries(lay)
	}
	if c.fatal != nil {
		return c, c.fatal
	}
	return c, nil
}

// rtName is "containerd 1.6.20" or "containerd 2.x" for messages.
func (c *Config) rtName() string {
	if c.Runtime.Assumed {
		return "containerd (version unknown, 2.0 assumed)"
	}
	if c.Runtime.Version == "" {
		return "containerd (version unknown)"
	}
	return "containerd " + c.Runtime.Version
}

// registry decides the registry model and the pull path from the merged
// configuration, with the rules of the runtime's version (rules.go).
func (c *Config) registry(l *loaded, o Options) {
	plugin := registryPlugin(c.Runtime)
	for _, f := range l.versionIgnored {
		c.warn(verdict.CodeConfigVersionIgnored, fmt.Sprintf("%s is a version 3 configuration: %s reads its CRI registry from [plugins.%q.registry] only and ignores [plugins.%q] without a word; the registry settings in that file are not applied", f, c.rtName(), pluginCRIv2, pluginImagesV3))
	}
	// containerd 2.x warns about (and ignores) a registry table left in the
	// cri plugin of a version 3 file.
	if c.Runtime.major >= 2 {
		if _, ok := l.lookup(pluginCRIv2, "registry"); ok {
			c.warn(verdict.CodeConfigLegacyIgnored, fmt.Sprintf("%s: [plugins.%q.registry] in a version 3 configuration is not read by %s, which reads [plugins.%q.registry]", l.originOf(pluginCRIv2, "registry"), pluginCRIv2, c.rtName(), pluginImagesV3))
		}
	}
	unknown, err := l.decodeTable(&c.reg, plugin, "registry")
	if err != nil {
		c.fatal = l.typeError(plugin, err, plugin, "registry")
		return
	}
	for _, k := range unknown {
		if c.Runtime.major >= 2 && strings.HasPrefix(k, "configs.") && strings.Contains(k, ".tls") {
			continue // reported below as legacy-ignored
		}
		c.warn(verdict.CodeConfigUnknownKey, fmt.Sprintf("%s: %s ignores the unknown key registry.%s", l.originOf(plugin, "registry"), c.rtName(), k))
	}
	for h := range c.reg.Mirrors {
		c.regFrom[h] = l.originOf(plugin, "registry", "mirrors", h)
	}
	for h, cfg := range c.reg.Configs {
		if cfg.TLS != nil {
			c.tlsFrom[h] = l.originOf(plugin, "registry", "configs", h, "tls")
		}
	}
	cpFrom := l.originOf(plugin, "registry", "config_path")
	if _, set := l.lookup(plugin, "registry", "config_path"); !set {
		cpFrom = ""
	}

	cp := c.reg.ConfigPath
	switch {
	case o.HostsDir != "":
		cp, cpFrom = o.HostsDir, "--hosts-dir"
	case cpFrom == "" && c.Runtime.major >= 2 && len(c.reg.Mirrors) == 0 && c.nodeOS != nodeview.OSWindows:
		cp = strings.Join(nodeview.DefaultHostsDirs, ":")
		cpFrom = "default of containerd 2.x (no config_path and no mirrors set)"
	case cpFrom == "":
		cpFrom = "default of containerd 1.x (empty: certs.d is not read)"
		if c.Runtime.major >= 2 {
			cpFrom = "empty: containerd 2.x leaves config_path empty when mirrors are set"
			if c.nodeOS == nodeview.OSWindows {
				// plugins/cri/images/plugin.go: the default is set
				// when runtime.GOOS == "linux" only.
				cpFrom = "empty: containerd 2.x sets no default config_path on Windows (certs.d is not read)"
			}
		}
	}
	c.Settings = append(c.Settings, Setting{Key: "registry.config_path", Value: cp, Source: cpFrom})
	if cp != "" {
		c.Mode, c.HostsDirs = ModeConfigPath, splitConfigPath(c.nodeOS, cp)
	} else {
		c.Mode = ModeLegacy
	}
	for _, h := range sortedKeys(c.reg.Mirrors) {
		c.Settings = append(c.Settings, Setting{Key: "registry.mirrors." + h, Value: strings.Join(c.reg.Mirrors[h].Endpoints, ", "), Source: c.regFrom[h]})
	}

	// Legacy keys next to config_path.
	if cp != "" && o.HostsDir == "" {
		if len(c.reg.Mirrors) > 0 {
			// containerd 1.5+ and 2.x: ValidatePluginConfig /
			// ValidateImageConfig refuse the combination.
			c.fatal = verdict.Errorf(verdict.CodeConfigContainerd, verdict.RoleNone, "",
				"%s: registry.mirrors is set together with config_path (%s): %s refuses the CRI configuration (\"`mirrors` cannot be set when `config_path` is provided\") and the kubelet can pull nothing; move the mirrors to hosts.toml files under config_path",
				c.regFrom[sortedKeys(c.reg.Mirrors)[0]], cpFrom, c.rtName())
			return
		}
		if c.Runtime.major == 1 {
			for _, h := range sortedKeys(c.reg.Configs) {
				if c.reg.Configs[h].TLS != nil {
					c.fatal = verdict.Errorf(verdict.CodeConfigContainerd, verdict.RoleNone, "",
						"%s: registry.configs.%q.tls is set together with config_path: %s refuses the CRI configuration (\"`configs.tls` cannot be set when `config_path` is provided\"); put ca/client/skip_verify in hosts.toml",
						c.tlsFrom[h], h, c.rtName())
					return
				}
			}
		}
		// k3s and RKE2 write mirror credentials there by design.
		if (len(c.reg.Configs) > 0 || len(c.reg.Auths) > 0) && c.Layout != "k3s" && c.Layout != "rke2" {
			c.warn(verdict.CodeConfigLegacyWithConfigPath, fmt.Sprintf("registry.configs/auths are set together with config_path: %s reads only their auth, and only when the pull has no credentials of its own; hosts.toml never sees them", c.rtName()))
		}
	}
	if c.Runtime.major >= 2 {
		for _, h := range sortedKeys(c.reg.Configs) {
			if c.reg.Configs[h].TLS != nil {
				c.warn(verdict.CodeConfigLegacyIgnored, fmt.Sprintf("%s: registry.configs.%q.tls is not read by %s (removed in 2.0): its CA, client certificate and insecure_skip_verify are not applied; use hosts.toml", c.tlsFrom[h], h, c.rtName()))
			}
		}
	}
	for ep := range c.reg.Auths {
		if _, err := url.Parse(ep); err != nil {
			c.fatal = verdict.Errorf(verdict.CodeConfigContainerd, verdict.RoleNone, "", "registry.auths key %q is not a URL: %s refuses the CRI configuration", ep, c.rtName())
			return
		}
	}
	c.pullPath(l)
	c.layerFetch(l)
	// containerd 2.1+'s transfer service hands config_path to its
	// registry as one directory, so a colon list (the 2.x default among
	// them) finds no host directory at all: containerd#12415 (fixes
	// proposed in #12829, #13086, #12661), seen with the real 2.2.9.
	if c.PullPath == PullTransfer && len(c.HostsDirs) > 1 {
		c.warn(verdict.CodeConfigTransferPathList, fmt.Sprintf("config_path %q is a list: %s pulls through the transfer service, which takes the whole value as one directory (containerd#12415), so no hosts.toml under %s is read; set a single directory, or force the local pull (use_local_image_pull = true)", cp, c.rtName(), strings.Join(c.HostsDirs, " or ")))
		c.HostsDirs = []string{cp}
	}
}

// pullPath decides between the transfer service and the local pull, as
// containerd 2.1+'s CheckLocalImagePullConfigs does (the list as of
// containerd 2.4.2, internal/cri/config).
func (c *Config) pullPath(l *loaded) {
	if !c.Runtime.AtLeast(2, 1) {
		c.PullPath, c.PullPathReason = PullLocal, c.rtName()+" has no transfer-service pull for the CRI"
		return
	}
	var ic imagesConfig
	if _, err := l.decodeTable(&ic, pluginImagesV3); err != nil {
		c.fatal = l.typeError(pluginImagesV3, err, pluginImagesV3)
		return
	}
	at := func(key string) string { return l.originOf(pluginImagesV3, key) }
	reason := ""
	switch {
	case ic.UseLocalImagePull != nil && *ic.UseLocalImagePull:
		reason = at("use_local_image_pull") + ": use_local_image_pull = true"
	case ic.DisableSnapshotAnnotations != nil && !*ic.DisableSnapshotAnnotations:
		reason = at("disable_snapshot_annotations") + ": disable_snapshot_annotations = false"
	case ic.DiscardUnpackedLayers:
		reason = at("discard_unpacked_layers") + ": discard_unpacked_layers = true"
	case len(c.reg.Mirrors) > 0:
		reason = "registry.mirrors is set"
	case len(c.reg.Configs) > 0:
		reason = "registry.configs is set"
	case len(c.reg.Auths) > 0:
		reason = "registry.auths is set"
	case ic.MaxConcurrentDownloads != nil && *ic.MaxConcurrentDownloads != 3:
		reason = at("max_concurrent_downloads") + fmt.Sprintf(": max_concurrent_downloads = %d", *ic.MaxConcurrentDownloads)
	case ic.ImagePullWithSyncFs:
		reason = at("image_pull_with_sync_fs") + ": image_pull_with_sync_fs = true"
	}
	if reason != "" {
		c.PullPath, c.PullPathReason = PullLocal, reason+" makes "+c.rtName()+" pull with the CRI plugin's local pull, not the transfer service"
	} else {
		c.PullPath, c.PullPathReason = PullTransfer, c.rtName()+" pulls through the transfer service (no setting forces the local pull)"
	}
	c.Settings = append(c.Settings, Setting{Key: "pull path", Value: c.PullPath, Source: c.PullPathReason})
}

func (c *Config) warn(code, msg string) {
	c.Warnings = append(c.Warnings, verdict.Warning{Code: code, Message: msg})
}

// Err is the configuration the runtime refuses, or nil.
func (c *Config) Err() *verdict.Error { return c.fatal }
