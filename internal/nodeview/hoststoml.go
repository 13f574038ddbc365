package nodeview

import (
	"fmt"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
	tomlu "github.com/pelletier/go-toml/v2/unstable"
)

// hostsTOMLEntry is one [host."..."] table or the root of a hosts.toml, in
// the shape containerd's parser decodes (core/remotes/docker/config,
// hostFileConfig): the same keys, the same Go types, the same go-toml.
type hostsTOMLEntry struct {
	Capabilities []string       `toml:"capabilities"`
	CACert       any            `toml:"ca"`
	Client       any            `toml:"client"`
	SkipVerify   *bool          `toml:"skip_verify"`
	Header       map[string]any `toml:"header"`
	OverridePath bool           `toml:"override_path"`
	DialTimeout  string         `toml:"dial_timeout"`
}

// hostSpec is one validated host of a hosts.toml. Paths are node paths:
// absolute as written, relative ones joined with the host directory as
// containerd joins them.
type hostSpec struct {
	Name         string // the [host."..."] key, or the server value ("" when unset)
	Capabilities []string
	CASet        bool // ca given, even empty: containerd then builds its own root pool
	CA           []string
	Client       [][2]string
	SkipVerify   *bool
	HeaderSet    bool
	Header       map[string][]string
	OverridePath bool
	DialTimeout  string
}

// hostsSpec is a parsed hosts.toml: the mirrors in the order containerd
// tries them, then the server (always last, as in containerd).
type hostsSpec struct {
	Hosts  []hostSpec
	Server hostSpec
	// HostTree is true when the file has a top-level host table, even an
	// empty [host]: containerd 1.x refuses a file without one (View.HostTreeRequired).
	HostTree bool
}

// parseHostsTOML reads a hosts.toml the way containerd 2.x does and rejects
// everything containerd's parseHostsFile rejects (containerd then logs
// "failed to decode" and silently falls back to the directory's cert
// files). nodeDir is the node path of the host directory, used to make
// relative ca/client paths absolute.
func parseHostsTOML(nodeDir string, b []byte) (hostsSpec, error) {
	var spec hostsSpec
	order := hostsTableOrder(b)
	c := struct {
		hostsTOMLEntry
		Server      string                    `toml:"server"`
		HostConfigs map[string]hostsTOMLEntry `toml:"host"`
	}{}
	if err := toml.Unmarshal(b, &c); err != nil {
		return spec, wordTOMLError(err)
	}
	for _, name := range order {
		h, err := validateHost(name, nodeDir, c.HostConfigs[name])
		if err != nil {
			return spec, fmt.Errorf("host %q: %w", name, err)
		}
		spec.Hosts = append(spec.Hosts, h)
	}
	s, err := validateHost(c.Server, nodeDir, c.hostsTOMLEntry)
	if err != nil {
		return spec, fmt.Errorf("server: %w", err)
	}
	spec.Server = s
	// go-toml v1's root.Get("host").(*toml.Tree) in containerd 1.x: any
	// table, even an empty [host] (go-toml v2 leaves HostConfigs nil).
	var top map[string]any
	if toml.Unmarshal(b, &top) == nil {
		_, spec.HostTree = top["host"].(map[string]any)
	}
	return spec, nil
}

// hostsTableOrder lists the [host."<name>"] table headers in file order,
// skipping a header that repeats the previous host (its sub-tables such as
// [host."<name>".header]); hosts given only as dotted keys or inline tables
// are not listed, and containerd ignores them too.
func hostsTableOrder(b []byte) []string {
	var out []string
	p := tomlu.Parser{}
	p.Reset(b)
	prev := ""
	for p.NextExpression() {
		e := p.Expression()
		if e.Kind != tomlu.Table {
			continue
		}
		var parts []string
		for it := e.Key(); it.Next(); {
			parts = append(parts, string(it.Node().Data))
		}
		if len(parts) < 2 || parts[0] != "host" || parts[1] == prev {
			continue
		}
		prev = parts[1]
		out = append(out, prev)
	}
	return out
}

func validateHost(name, nodeDir string, e hostsTOMLEntry) (hostSpec, error) {
	h := hostSpec{Name: name, SkipVerify: e.SkipVerify, OverridePath: e.OverridePath, DialTimeout: e.DialTimeout}
	if name != "" {
		s := name
		if !strings.HasPrefix(s, "http") {
			s = "https://" + s
		}
		if _, err := url.Parse(s); err != nil {
			return h, fmt.Errorf("parsing server %v: %w", s, err)
		}
	}
	for _, c := range e.Capabilities {
		switch strings.ToLower(c) {
		case "pull", "resolve", "push", "referrers":
		default:
			return h, fmt.Errorf("unknown capability %v", c)
		}
	}
	h.Capabilities = e.Capabilities
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(nodeDir, p)
	}
	if e.CACert != nil {
		h.CASet = true
		h.CA = []string{}
		switch v := e.CACert.(type) {
		case string:
			h.CA = append(h.CA, abs(v))
		case []any:
			ss, err := stringSlice(v)
			if err != nil {
				return h, fmt.Errorf("ca: %w", err)
			}
			for _, s := range ss {
				h.CA = append(h.CA, abs(s))
			}
		default:
			return h, fmt.Errorf("invalid type %T for \"ca\"", v)
		}
	}
	if e.Client != nil {
		switch v := e.Client.(type) {
		case string:
			h.Client = append(h.Client, [2]string{abs(v), ""})
		case []any:
			for _, item := range v {
				switch p := item.(type) {
				case string:
					h.Client = append(h.Client, [2]string{abs(p), ""})
				case []any:
					ss, err := stringSlice(p)
					if err != nil {
						return h, fmt.Errorf("client: %w", err)
					}
					if len(ss) != 2 {
						return h, fmt.Errorf("invalid pair %v for \"client\"", p)
					}
					h.Client = append(h.Client, [2]string{abs(ss[0]), abs(ss[1])})
				default:
					return h, fmt.Errorf("invalid type %T for \"client\"", p)
				}
			}
		default:
			return h, fmt.Errorf("invalid type %T for \"client\"", v)
		}
	}
	if e.Header != nil {
		h.HeaderSet = true
		h.Header = map[string][]string{}
		for k, val := range e.Header {
			switch v := val.(type) {
			case string:
				h.Header[k] = []string{v}
			case []any:
				ss, err := stringSlice(v)
				if err != nil {
					return h, fmt.Errorf("header %q: %w", k, err)
				}
				h.Header[k] = ss
			default:
				return h, fmt.Errorf("invalid type %T for header %q", val, k)
			}
		}
	}
	if e.DialTimeout != "" {
		if _, err := time.ParseDuration(e.DialTimeout); err != nil {
			return h, fmt.Errorf("dial_timeout: %w", err)
		}
	}
	return h, nil
}

func stringSlice(v []any) ([]string, error) {
	out := make([]string, len(v))
	for i, x := range v {
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("unable to cast %v to string", x)
		}
		out[i] = s
	}
	return out, nil
}

// emit writes spec back as a hosts.toml that containerd's parser reads to
// the same hosts in the same order, with every ca/client path passed
// through mapPath (node path → path on this machine). Only the keys
// containerd reads are written.
func (spec hostsSpec) emit(mapPath func(string) (string, error)) ([]byte, error) {
	var b strings.Builder
	if spec.Server.Name != "" {
		b.WriteString("server = " + tomlString(spec.Server.Name) + "\n")
	}
	if err := spec.Server.emitKeys(&b, mapPath); err != nil {
		return nil, err
	}
	for _, h := range spec.Hosts {
		b.WriteString("\n[host." + tomlString(h.Name) + "]\n")
		if err := h.emitKeys(&b, mapPath); err != nil {
			return nil, err
		}
	}
	out := b.String()
	if !utf8.ValidString(out) {
		return nil, fmt.Errorf("hosts.toml holds invalid UTF-8")
	}
	return []byte(out), nil
}

func (h hostSpec) emitKeys(b *strings.Builder, mapPath func(string) (string, error)) error {
	if len(h.Capabilities) > 0 {
		b.WriteString("capabilities = " + tomlArray(h.Capabilities) + "\n")
	}
	if h.CASet {
		ca := make([]string, len(h.CA))
		for i, p := range h.CA {
			m, err := mapPath(p)
			if err != nil {
				return fmt.Errorf("resolving ca %s: %w", p, err)
			}
			ca[i] = m
		}
		b.WriteString("ca = " + tomlArray(ca) + "\n")
	}
	if len(h.Client) > 0 {
		b.WriteString("client = [")
		for i, pair := range h.Client {
			if i > 0 {
				b.WriteString(", ")
			}
			cert, err := mapPath(pair[0])
			if err != nil {
				return fmt.Errorf("resolving client %s: %w", pair[0], err)
			}
			if pair[1] == "" {
				b.WriteString(tomlString(cert))
				continue
			}
			key, err := mapPath(pair[1])
			if err != nil {
				return fmt.Errorf("resolving client key %s: %w", pair[1], err)
			}
			b.WriteString(tomlArray([]string{cert, key}))
		}
		b.WriteString("]\n")
	}
	if h.SkipVerify != nil {
		fmt.Fprintf(b, "skip_verify = %t\n", *h.SkipVerify)
	}
	if h.OverridePath {
		b.WriteString("override_path = true\n")
	}
	if h.DialTimeout != "" {
		b.WriteString("dial_timeout = " + tomlString(h.DialTimeout) + "\n")
	}
	if h.HeaderSet {
		keys := make([]string, 0, len(h.Header))
		for k := range h.Header {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("header = {")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(" " + tomlString(k) + " = " + tomlArray(h.Header[k]))
		}
		b.WriteString(" }\n")
	}
	return nil
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func tomlArray(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = tomlString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
