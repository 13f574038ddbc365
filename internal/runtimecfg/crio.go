package runtimecfg

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/verdict"
)

// CRI-O's configuration files (crio.conf(5)): the main file, then every
// file of the drop-in directory in lexical order, each overriding the
// keys it sets.
const (
	CRIOConfig    = "/etc/crio/crio.conf"
	CRIOConfigDir = "/etc/crio/crio.conf.d"
	// ModeRegistriesConf is the registry model of CRI-O (and every
	// containers/image user): registries.conf and registries.conf.d.
	ModeRegistriesConf = "registries.conf"
)

// crioImage is the part of crio.conf's [crio.image] table that shapes a
// pull, with CRI-O's names.
type crioImage struct {
	GlobalAuthFile     string   `toml:"global_auth_file"`
	NamespacedAuthDir  string   `toml:"namespaced_auth_dir"`
	SignaturePolicy    string   `toml:"signature_policy"`
	SignaturePolicyDir string   `toml:"signature_policy_dir"`
	InsecureRegistries []string `toml:"insecure_registries"`
	Registries         []string `toml:"registries"`
	ShortNameMode      string   `toml:"short_name_mode"`
}

// crioImageKeys are the other keys [crio.image] may hold (crio.conf(5)):
// they do not shape the pull's path, and are not unknown.
var crioImageKeys = []string{"default_transport", "pause_image", "pause_image_auth_file", "pause_command",
	"pinned_images", "image_volumes", "big_files_temporary_dir", "auto_reload_registries", "pull_progress_timeout",
	"short_name_mode", "oci_artifact_mount_support", "separate_pull_cgroup", "additional_artifact_stores",
	"global_auth_file", "namespaced_auth_dir", "signature_policy", "signature_policy_dir", "insecure_registries", "registries"}

// crioState is what CRI-O's own files say, with each value's source.
type crioState struct {
	image crioImage
	from  map[string]string // [crio.image] key → "file:line"
	reg   *registriesConf
	// namespace is the pod's namespace (Options.Namespace), "" when
	// unknown: it selects the per-namespace files (crio_namespace.go).
	namespace string
}

// loadCRIO reads crio.conf and crio.conf.d/*.conf under root as CRI-O
// does (later files override the keys they set), then registries.conf.
// A file CRI-O cannot decode is a config verdict: CRI-O refuses to start.
func (c *Config) loadCRIO(root string) error {
	c.Layout = "cri-o"
	c.Mode = ModeRegistriesConf
	st := &crioState{from: map[string]string{}}
	c.crio = st
	// CRI-O walks the drop-in directory with filepath.Walk (lexical,
	// recursive) and reads every regular file, whatever its name
	// (pkg/config UpdateFromPath).
	files := append([]string{CRIOConfig}, dropIns(root, CRIOConfigDir, "", true)...)
	for i, f := range files {
		data, _, err := nodeview.ReadInRoot(root, f)
		if err != nil {
			// No crio.conf: CRI-O runs on its built-in defaults.
			c.Files = append(c.Files, ConfigFile{Path: f, Missing: true})
			continue
		}
		cf := ConfigFile{Path: f}
		if i > 0 {
			cf.ImportedBy = CRIOConfig + " (drop-in, lexical walk)"
		}
		c.Files = append(c.Files, cf)
		if err := st.decode(c, f, data); err != nil {
			c.fatal = err
			return err
		}
	}
	c.crioSettings()
	reg, err := loadRegistriesConf(root)
	st.reg = reg
	c.Files = append(c.Files, reg.files...)
	c.Settings = append(c.Settings, reg.settings...)
	c.Warnings = append(c.Warnings, reg.warnings...)
	if err != nil {
		c.fatal, _ = verdict.AsError(err)
		return err
	}
	return nil
}

// decode applies one crio.conf file's [crio.image] keys.
func (st *crioState) decode(c *Config, file string, data []byte) *verdict.Error {
	var doc struct {
		Crio struct {
			Image map[string]toml.Primitive `toml:"image"`
		} `toml:"crio"`
	}
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		return crioDecodeError(file, err)
	}
	lines := tomlLines(data)
	for k, prim := range doc.Crio.Image {
		from := fmt.Sprintf("%s:%d", file, lines["crio.image."+k])
		var err error
		switch k {
		case "global_auth_file":
			err = md.PrimitiveDecode(prim, &st.image.GlobalAuthFile)
		case "namespaced_auth_dir":
			err = md.PrimitiveDecode(prim, &st.image.NamespacedAuthDir)
		case "signature_policy":
			err = md.PrimitiveDecode(prim, &st.image.SignaturePolicy)
		case "signature_policy_dir":
			err = md.PrimitiveDecode(prim, &st.image.SignaturePolicyDir)
		case "insecure_registries":
			err = md.PrimitiveDecode(prim, &st.image.InsecureRegistries)
		case "registries":
			err = md.PrimitiveDecode(prim, &st.image.Registries)
		case "short_name_mode":
			// CRI-O's Validate (pkg/config/config.go) takes "enforcing",
			// "disabled" or empty and refuses to start on anything else.
			if err = md.PrimitiveDecode(prim, &st.image.ShortNameMode); err == nil && !slices.Contains([]string{"enforcing", "disabled", ""}, st.image.ShortNameMode) {
				err = fmt.Errorf("invalid short name mode %q", st.image.ShortNameMode)
			}
		default:
			if !slices.Contains(crioImageKeys, k) {
				c.warn(verdict.CodeConfigUnknownKey, fmt.Sprintf("%s: CRI-O ignores the unknown key crio.image.%s", from, k))
			}
			continue
		}
		if err != nil {
			return verdict.Errorf(verdict.CodeConfigCrio, verdict.RoleNone, "", "%s: crio.image.%s: %v: CRI-O refuses to start (it cannot decode its configuration)", from, k, err)
		}
		st.from[k] = from
	}
	return nil
}

// crioDecodeError names the file and line of a TOML error: CRI-O decodes
// its configuration with the same TOML library at start and refuses to
// start when it cannot.
func crioDecodeError(file string, err error) *verdict.Error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return verdict.Errorf(verdict.CodeConfigCrio, verdict.RoleNone, "", "%s:%d: column %d: %s: CRI-O refuses to start (it cannot decode its configuration)", file, pe.Position.Line, pe.Position.Col, pe.Message)
	}
	return verdict.Errorf(verdict.CodeConfigCrio, verdict.RoleNone, "", "%s: %v: CRI-O refuses to start (it cannot decode its configuration)", file, err)
}

// crioSettings lists the [crio.image] settings that shape the pull.
func (c *Config) crioSettings() {
	st := c.crio
	set := func(key, val, def string) {
		if src, ok := st.from[key]; ok {
			c.Settings = append(c.Settings, Setting{Key: "crio.image." + key, Value: val, Source: src})
		} else {
			c.Settings = append(c.Settings, Setting{Key: "crio.image." + key, Value: def, Source: "default of CRI-O (not set)"})
		}
	}
	set("global_auth_file", st.image.GlobalAuthFile, "")
	set("namespaced_auth_dir", st.image.NamespacedAuthDir, CRIODefaultNamespacedAuthDir)
	set("signature_policy", st.image.SignaturePolicy, "")
	set("signature_policy_dir", st.image.SignaturePolicyDir, CRIODefaultSignaturePolicyDir)
	if len(st.image.InsecureRegistries) > 0 {
		set("insecure_registries", strings.Join(st.image.InsecureRegistries, ", "), "")
	}
	if src, ok := st.from["registries"]; ok {
		c.warn(verdict.CodeConfigUnknownKey, fmt.Sprintf("%s: crio.image.registries is not read by current CRI-O releases: unqualified names are resolved with unqualified-search-registries of registries.conf", src))
	}
}

// crioInsecure reports whether CRI-O's insecure_registries names host:
// CRI-O then pulls from it without verifying TLS (and, as containers/image
// does for any source that skips verification, may fall back to http).
func (st *crioState) crioInsecure(host string) (string, bool) {
	for _, r := range st.image.InsecureRegistries {
		if strings.TrimSuffix(r, "/") == host {
			return st.from["insecure_registries"], true
		}
	}
	return "", false
}

// crioPackages are the package names that ship CRI-O (the upstream
// openSUSE-built packages and Debian/Ubuntu's).
var crioPackages = []string{"cri-o", "cri-o-runc"}

// detectCRIO describes the CRI-O of the node from the file that revealed it
// and the package database; the version stays empty when neither says it
// (CRI-O's binary carries its version in linker flags, not in the Go build
// information).
func detectCRIO(root, found string) Runtime {
	r := Runtime{Name: CRIO, Binary: found, VersionSource: found + " found on the node", major: -1, minor: -1}
	if data, _, err := nodeview.ReadInRoot(root, dpkgStatus); err == nil {
		for _, pkg := range crioPackages {
			if v := dpkgVersion(data, pkg); v != "" {
				if pv, ok := parseVersion(v); ok {
					r.setVersion(pv, fmt.Sprintf("%s (package %s %s)", dpkgStatus, pkg, v))
					return r
				}
			}
		}
	}
	return r
}
