package runtimecfg

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/verdict"
)

// containers-registries.conf(5) and containers-registries.conf.d(5): the
// main file, then every *.conf of the drop-in directory in lexical order.
const (
	RegistriesConf    = "/etc/containers/registries.conf"
	RegistriesConfDir = "/etc/containers/registries.conf.d"
)

// ShortNameAliasesConf is the machine-written aliases file of root
// (containers/image shortnames.go shortNameAliasesConfPath:
// /var/cache/containers/short-name-aliases.conf); its aliases come before
// those of registries.conf.
const ShortNameAliasesConf = "/var/cache/containers/short-name-aliases.conf"

// registriesConf is registries.conf and its drop-ins as containers/image
// reads them (the rules of regconf.go), with the file:line of every
// setting.
type registriesConf struct {
	files    []ConfigFile
	settings []Setting
	warnings []verdict.Warning
	conf     rcParsed // the files merged
	// search and mode as the last file that set them (mode "enforcing",
	// CRI-O's default, when none does), with their sources.
	search     []string
	searchFrom string
	mode       string
	modeFrom   string
	// aliases of short-name-aliases.conf (userAliasErr: that file cannot
	// be loaded, which fails every short-name resolution).
	userAliases  map[string]string
	userAliasErr error
}

// loadRegistriesConf reads registries.conf and registries.conf.d under
// root as containers/image does: the main file (none: its defaults, no
// registries and no search list), then every *.conf of the drop-in
// directory in lexical order, each validated alone and merged over the
// others. The error is a config verdict: every pull then fails before any
// network step.
func loadRegistriesConf(root string) (*registriesConf, error) {
	rc := &registriesConf{}
	files := append([]string{RegistriesConf}, dropIns(root, RegistriesConfDir, ".conf", false)...)
	for i, f := range files {
		data, _, err := nodeview.ReadInRoot(root, f)
		if err != nil {
			rc.files = append(rc.files, ConfigFile{Path: f, Missing: true})
			continue
		}
		cf := ConfigFile{Path: f}
		if i > 0 {
			cf.ImportedBy = RegistriesConf + " (drop-in, lexical order)"
		}
		rc.files = append(rc.files, cf)
		parsed, verr := rc.scan(f, data)
		if verr != nil {
			return rc, verr
		}
		rc.conf.merge(parsed)
	}
	rc.loadUserAliases(root)
	rc.search, rc.searchFrom = rc.conf.search, rc.conf.searchFrom
	if rc.searchFrom != "" {
		rc.settings = append(rc.settings, Setting{Key: "unqualified-search-registries", Value: strings.Join(rc.search, ", "), Source: rc.searchFrom})
	}
	rc.mode, rc.modeFrom = rc.conf.modeSet, rc.conf.modeFrom
	if rc.mode == "" {
		rc.mode, rc.modeFrom = "permissive", "default of containers/image (not set)"
	}
	rc.settings = append(rc.settings, Setting{Key: "short-name-mode", Value: rc.mode, Source: rc.modeFrom})
	if h := rc.conf.helpers; len(h) > 0 {
		rc.settings = append(rc.settings, Setting{Key: "credential-helpers", Value: strings.Join(h, ", "), Source: rc.conf.helpersFrom})
	}
	for _, r := range rc.conf.registries {
		rc.settings = append(rc.settings, Setting{Key: "registry " + r.Prefix, Value: r.Prefix, Source: r.from})
	}
	return rc, nil
}

// loadUserAliases reads short-name-aliases.conf: a file that cannot be
// decoded or holds an invalid alias fails every short-name resolution
// (sysregistriesv2 loadShortNameAliasConf), not the qualified pulls.
func (rc *registriesConf) loadUserAliases(root string) {
	data, _, err := nodeview.ReadInRoot(root, ShortNameAliasesConf)
	if err != nil {
		return
	}
	rc.files = append(rc.files, ConfigFile{Path: ShortNameAliasesConf, ImportedBy: "containers/image (short-name aliases, before registries.conf's)"})
	var f struct {
		Aliases map[string]string `toml:"aliases"`
	}
	if _, err := toml.Decode(string(data), &f); err != nil {
		rc.userAliasErr = fmt.Errorf("loading short-name aliases config file %q: %w", ShortNameAliasesConf, err)
		return
	}
	if err := validateAliases(f.Aliases); err != nil {
		rc.userAliasErr = fmt.Errorf("loading short-name aliases config file %q: %w", ShortNameAliasesConf, err)
		return
	}
	rc.userAliases = f.Aliases
	if rc.userAliases == nil {
		rc.userAliases = map[string]string{}
	}
}

// alias looks a short name (without tag or digest) up as
// sysregistriesv2 ResolveShortNameAlias does: short-name-aliases.conf,
// then registries.conf's merged aliases; a value "" resets the name (no
// alias). ok is false when no alias applies.
func (rc *registriesConf) alias(name string) (value, from string, ok bool, err error) {
	if rc.userAliasErr != nil {
		return "", "", false, rc.userAliasErr
	}
	if v, hit := rc.userAliases[name]; hit {
		return v, ShortNameAliasesConf, v != "", nil
	}
	if v, hit := rc.conf.aliases[name]; hit {
		return v, rc.conf.aliasFrom[name], v != "", nil
	}
	return "", "", false, nil
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

// scan decodes and validates one file, and reports its unknown keys. A
// file containers/image refuses is the config verdict, with its line when
// it is not TOML.
func (rc *registriesConf) scan(file string, data []byte) (*rcParsed, *verdict.Error) {
	lines := tomlLines(data)
	at := func(k string) string { return fmt.Sprintf("%s:%d", file, lines[k]) }
	parsed, md, err := parseRCFile(file, data, at)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, verdict.Errorf(verdict.CodeConfigRegistriesConf, verdict.RoleNone, "", "%s:%d: column %d: %s: containers/image cannot load its registries configuration, so every pull fails before any network step", file, pe.Position.Line, pe.Position.Col, pe.Message)
		}
		return nil, verdict.Errorf(verdict.CodeConfigRegistriesConf, verdict.RoleNone, "",
			"%s: containers/image cannot load its registries configuration (loading registries configuration %q: %v): every pull fails before any network step (CRI-O keeps its previous configuration only when this one came with a reload: \"system registries reload failed\")", strings.Join(fileNames(rc.files), ", "), file, err)
	}
	for _, k := range md.Undecoded() {
		rc.warnings = append(rc.warnings, verdict.Warning{Code: verdict.CodeConfigUnknownKey,
			Message: fmt.Sprintf("%s: containers/image ignores the unknown key %s (it only logs it at debug level)", at(strings.Join(k, ".")), k.String())})
	}
	if parsed.helpers != nil {
		parsed.helpersFrom = at("credential-helpers")
	}
	if parsed.modeSet != "" {
		parsed.modeFrom = at("short-name-mode")
	}
	return parsed, nil
}

// tomlLines maps the key paths written in a TOML document to their lines:
// "a.b" for keys and tables, "t[i]" and "t[i].u[j]" for arrays of tables
// (and their keys), plus "t" and "t.u" (first occurrence) for unknown-key
// lookups.
func tomlLines(data []byte) map[string]int {
	out := map[string]int{}
	walkTOML(data, func(e tomlEntry) {
		out[strings.Join(e.Indexed, ".")] = e.Line
		if k := strings.Join(e.Path, "."); out[k] == 0 {
			out[k] = e.Line
		}
	})
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
