package runtimecfg

import (
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	tomlu "github.com/pelletier/go-toml/v2/unstable"
	"go.podman.io/image/v5/pkg/sysregistriesv2"
	"go.podman.io/image/v5/types"

	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/verdict"
)

// containers-registries.conf(5) and containers-registries.conf.d(5): the
// main file, then every *.conf of the drop-in directory in lexical order.
const (
	RegistriesConf    = "/etc/containers/registries.conf"
	RegistriesConfDir = "/etc/containers/registries.conf.d"
)

// registriesConf is registries.conf and its drop-ins as containers/image
// reads them (sysregistriesv2, the library CRI-O links), plus the file:line
// of every [[registry]] and [[registry.mirror]], which the library does not
// keep.
type registriesConf struct {
	sys      *types.SystemContext // paths on this machine, for sysregistriesv2
	files    []ConfigFile
	settings []Setting
	warnings []verdict.Warning
	// regFrom maps a [[registry]]'s prefix (its location when no prefix)
	// to the file:line of the table that won (a later file replaces an
	// earlier one's [[registry]] with the same prefix); mirrorFrom maps
	// prefix + "\x00" + mirror location to its [[registry.mirror]] line.
	regFrom    map[string]string
	mirrorFrom map[string]string
	// aliases merged over the files (later files override a name), with
	// their sources; search and mode as the last file that set them.
	aliases    map[string]string
	aliasFrom  map[string]string
	search     []string
	searchFrom string
	mode       string
	modeFrom   string
}

// regFile is the shape of one registries.conf file, for positions and
// unknown keys; the semantics come from sysregistriesv2.
type regFile struct {
	Registry []struct {
		Prefix             string `toml:"prefix"`
		Location           string `toml:"location"`
		Insecure           bool   `toml:"insecure"`
		Blocked            bool   `toml:"blocked"`
		MirrorByDigestOnly bool   `toml:"mirror-by-digest-only"`
		Mirror             []struct {
			Location       string `toml:"location"`
			Insecure       bool   `toml:"insecure"`
			PullFromMirror string `toml:"pull-from-mirror"`
		} `toml:"mirror"`
	} `toml:"registry"`
	UnqualifiedSearchRegistries *[]string         `toml:"unqualified-search-registries"`
	CredentialHelpers           []string          `toml:"credential-helpers"`
	ShortNameMode               string            `toml:"short-name-mode"`
	AdditionalLayerStoreAuth    string            `toml:"additional-layer-store-auth-helper"`
	Aliases                     map[string]string `toml:"aliases"`
}

// loadRegistriesConf reads registries.conf and registries.conf.d under
// root. The error is a config verdict when containers/image cannot load
// them: every pull then fails before any network step.
func loadRegistriesConf(root string) (*registriesConf, error) {
	rc := &registriesConf{regFrom: map[string]string{}, mirrorFrom: map[string]string{}, aliases: map[string]string{}, aliasFrom: map[string]string{}}
	mainHP, err := nodeview.InRoot(root, RegistriesConf)
	if err != nil {
		mainHP = ""
	}
	files := append([]string{RegistriesConf}, dropIns(root, RegistriesConfDir, ".conf", false)...)
	dirHP, err := nodeview.InRoot(root, RegistriesConfDir)
	if err != nil {
		dirHP = "/nonexistent-registries.conf.d"
	}
	for i, f := range files {
		data, _, err := nodeview.ReadInRoot(root, f)
		if err != nil {
			if i == 0 {
				// No registries.conf: containers/image runs on its
				// defaults (no registries, no search list).
				mainHP = "/dev/null"
			}
			rc.files = append(rc.files, ConfigFile{Path: f, Missing: true})
			continue
		}
		cf := ConfigFile{Path: f}
		if i > 0 {
			cf.ImportedBy = RegistriesConf + " (drop-in, lexical order)"
		}
		rc.files = append(rc.files, cf)
		if verr := rc.scan(f, data); verr != nil {
			return rc, verr
		}
	}
	if mainHP == "" {
		mainHP = "/dev/null"
	}
	rc.sys = &types.SystemContext{SystemRegistriesConfPath: mainHP, SystemRegistriesConfDirPath: dirHP}
	if _, err := sysregistriesv2.TryUpdatingCache(rc.sys); err != nil {
		return rc, verdict.Errorf(verdict.CodeConfigRegistriesConf, verdict.RoleNone, "",
			"%s: containers/image cannot load its registries configuration (%s): every pull fails before any network step (CRI-O keeps its previous configuration only when this one came with a reload: \"system registries reload failed\")", strings.Join(fileNames(rc.files), ", "), strings.ReplaceAll(err.Error(), dirHP, RegistriesConfDir))
	}
	if rc.searchFrom != "" {
		rc.settings = append(rc.settings, Setting{Key: "unqualified-search-registries", Value: strings.Join(rc.search, ", "), Source: rc.searchFrom})
	}
	mode := rc.mode
	modeFrom := rc.modeFrom
	if mode == "" {
		mode, modeFrom = "enforcing", "default of containers/image (not set)"
	}
	rc.mode = mode
	rc.settings = append(rc.settings, Setting{Key: "short-name-mode", Value: mode, Source: modeFrom})
	for _, p := range sortedKeys(rc.regFrom) {
		rc.settings = append(rc.settings, Setting{Key: "registry " + p, Value: p, Source: rc.regFrom[p]})
	}
	return rc, nil
}

func fileNames(fs []ConfigFile) []string {
	var out []string
	for _, f := range fs {
		if !f.Missing {
			out = append(out, f.Path)
		}
	}
	return out
}

// scan decodes one file for positions, search list, mode and aliases, and
// reports unknown keys. A file that is not TOML is the config verdict with
// its line, as containers/image refuses it.
func (rc *registriesConf) scan(file string, data []byte) *verdict.Error {
	var rf regFile
	md, err := toml.Decode(string(data), &rf)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return verdict.Errorf(verdict.CodeConfigRegistriesConf, verdict.RoleNone, "", "%s:%d: column %d: %s: containers/image cannot load its registries configuration, so every pull fails before any network step", file, pe.Position.Line, pe.Position.Col, pe.Message)
		}
		return verdict.Errorf(verdict.CodeConfigRegistriesConf, verdict.RoleNone, "", "%s: %v: containers/image cannot load its registries configuration, so every pull fails before any network step", file, err)
	}
	lines := tomlLines(data)
	at := func(k string) string { return fmt.Sprintf("%s:%d", file, lines[k]) }
	for _, k := range md.Undecoded() {
		key := k.String()
		if strings.HasPrefix(key, "registries.") || key == "registries" {
			continue // the v1 format: sysregistriesv2 refuses it with its own error
		}
		rc.warnings = append(rc.warnings, verdict.Warning{Code: verdict.CodeConfigUnknownKey,
			Message: fmt.Sprintf("%s: containers/image ignores the unknown key %s (it only logs it at debug level)", at(undecodedPath(k)), key)})
	}
	for i, r := range rf.Registry {
		prefix := r.Prefix
		if prefix == "" {
			prefix = r.Location
		}
		rc.regFrom[prefix] = at("registry[" + strconv.Itoa(i) + "]")
		for j, m := range r.Mirror {
			rc.mirrorFrom[prefix+"\x00"+m.Location] = at(fmt.Sprintf("registry[%d].mirror[%d]", i, j))
		}
	}
	if rf.UnqualifiedSearchRegistries != nil {
		rc.search, rc.searchFrom = *rf.UnqualifiedSearchRegistries, at("unqualified-search-registries")
	}
	if rf.ShortNameMode != "" {
		rc.mode, rc.modeFrom = rf.ShortNameMode, at("short-name-mode")
	}
	for name, v := range rf.Aliases {
		rc.aliases[name] = v
		rc.aliasFrom[name] = at("aliases." + name)
	}
	return nil
}

// undecodedPath turns a BurntSushi key into tomlLines' form (without array
// indexes, the first table of that name).
func undecodedPath(k toml.Key) string { return strings.Join(k, ".") }

// tomlLines maps the key paths written in a TOML document to their lines:
// "a.b" for keys and tables, "t[i]" and "t[i].u[j]" for arrays of tables
// (and their keys), plus "t" and "t.u" (first occurrence) for unknown-key
// lookups.
func tomlLines(data []byte) map[string]int {
	out := map[string]int{}
	p := tomlu.Parser{}
	p.Reset(data)
	var table []string      // indexed form
	var plainTable []string // without indexes
	counts := map[string]int{}
	for p.NextExpression() {
		e := p.Expression()
		parts := []string{}
		for it := e.Key(); it.Next(); {
			parts = append(parts, string(it.Node().Data))
		}
		line := 0
		if n := e.Key(); n.Next() {
			line = p.Shape(n.Node().Raw).Start.Line
		}
		setFirst := func(k string) {
			if _, ok := out[k]; !ok {
				out[k] = line
			}
		}
		switch e.Kind {
		case tomlu.Table:
			table = indexed(parts, counts, false)
			plainTable = parts
			out[strings.Join(table, ".")] = line
			setFirst(strings.Join(parts, "."))
		case tomlu.ArrayTable:
			table = indexed(parts, counts, true)
			plainTable = parts
			out[strings.Join(table, ".")] = line
			setFirst(strings.Join(parts, "."))
		case tomlu.KeyValue:
			out[strings.Join(append(slices.Clone(table), parts...), ".")] = line
			setFirst(strings.Join(append(slices.Clone(plainTable), parts...), "."))
		}
	}
	return out
}

// indexed gives an array-of-tables header its index: [[registry]] is
// registry[n], [[registry.mirror]] registry[n].mirror[m] under the latest
// registry.
func indexed(parts []string, counts map[string]int, array bool) []string {
	out := make([]string, 0, len(parts))
	for i, p := range parts {
		prefix := strings.Join(out, ".")
		key := prefix + "." + p
		if i == len(parts)-1 && array {
			n := counts[key]
			counts[key] = n + 1
			out = append(out, fmt.Sprintf("%s[%d]", p, n))
			continue
		}
		if n, ok := counts[key]; ok && n > 0 {
			out = append(out, fmt.Sprintf("%s[%d]", p, n-1))
			continue
		}
		out = append(out, p)
	}
	return out
}

// dropIns lists a drop-in directory's files (node paths) in lexical order:
// those ending in suffix ("" for all), descending into subdirectories when
// recursive (as filepath.Walk does).
func dropIns(root, dir, suffix string, recursive bool) []string {
	hd, err := nodeview.InRoot(root, dir)
	if err != nil {
		return nil
	}
	ents, err := os.ReadDir(hd)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents { // os.ReadDir sorts by name
		p := path.Join(dir, e.Name())
		switch {
		case e.IsDir():
			if recursive {
				out = append(out, dropIns(root, p, suffix, true)...)
			}
		case strings.HasSuffix(e.Name(), suffix):
			out = append(out, p)
		}
	}
	return out
}
