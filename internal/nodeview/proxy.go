package nodeview

import (
	"bufio"
	"bytes"
	"net/url"
	"os"
	"path"
	"sort"
	"strings"

	"golang.org/x/net/http/httpproxy"
)

// Proxy is the proxy environment of the node's containerd service: its
// transport takes HTTPS_PROXY, HTTP_PROXY and NO_PROXY from the process
// environment (http.ProxyFromEnvironment), which on a node comes from the
// systemd unit and its drop-ins.
type Proxy struct {
	HTTPSProxy string
	HTTPProxy  string
	NoProxy    string
	// Sources are the node files the values came from.
	Sources []string
}

// Set reports whether any proxy is configured.
func (p Proxy) Set() bool { return p.HTTPSProxy != "" || p.HTTPProxy != "" }

// For returns the proxy containerd would use for a request to u (nil for a
// direct connection), with Go's own rules: NO_PROXY names, domains, CIDRs
// and ports; no proxy for localhost and loopback addresses.
func (p Proxy) For(u *url.URL) (*url.URL, error) {
	if !p.Set() {
		return nil, nil
	}
	cfg := httpproxy.Config{HTTPSProxy: p.HTTPSProxy, HTTPProxy: p.HTTPProxy, NoProxy: p.NoProxy}
	return cfg.ProxyFunc()(u)
}

// containerdUnits are the unit files systemd reads for containerd.service,
// the first found wins (/etc overrides /run overrides the vendor unit).
var containerdUnits = []string{
	"/etc/systemd/system/containerd.service",
	"/run/systemd/system/containerd.service",
	"/usr/lib/systemd/system/containerd.service",
	"/lib/systemd/system/containerd.service",
}

// containerdDropIns are the drop-in directories, lowest precedence first.
var containerdDropIns = []string{
	"/lib/systemd/system/containerd.service.d",
	"/usr/lib/systemd/system/containerd.service.d",
	"/run/systemd/system/containerd.service.d",
	"/etc/systemd/system/containerd.service.d",
}

// maxUnitFile bounds one unit or environment file.
const maxUnitFile = 1 << 20

// containerdService is containerd's systemd service as composed under a
// root: its environment, the files that set any of it, and the binary its
// ExecStart names ("" when none names an absolute path).
type containerdService struct {
	env     map[string]string
	sources []string
	exec    string
	// args are ExecStart's words after the binary (containerd's --config).
	args []string
}

// readContainerdService reads containerd's service under root the way
// systemd composes it: the unit, then its drop-ins (*.conf) sorted by file
// name, a drop-in in /etc replacing one of the same name elsewhere;
// Environment= assignments in order, an empty one resetting the list, and
// EnvironmentFile= files ("-" prefix: optional); the last ExecStart= wins.
func readContainerdService(root string) containerdService {
	svc := containerdService{env: map[string]string{}}
	for _, f := range unitFiles(root, containerdUnits, containerdDropIns) {
		data, _, err := readInRoot(root, f)
		if err != nil || len(data) > maxUnitFile {
			continue
		}
		if applyUnit(root, data, svc.env) {
			svc.sources = append(svc.sources, f)
		}
		if words, ok := execStart(data); ok && len(words) > 0 && strings.HasPrefix(words[0], "/") {
			svc.exec = words[0]
			svc.args = words[1:]
		}
	}
	return svc
}

// proxyOf is the proxy environment of containerd's service.
func proxyOf(svc containerdService) Proxy {
	env, sources := svc.env, svc.sources
	get := func(keys ...string) string {
		for _, k := range keys {
			if v := env[k]; v != "" {
				return v
			}
		}
		return ""
	}
	p := Proxy{
		HTTPSProxy: get("HTTPS_PROXY", "https_proxy"),
		HTTPProxy:  get("HTTP_PROXY", "http_proxy"),
		NoProxy:    get("NO_PROXY", "no_proxy"),
	}
	if p.Set() || p.NoProxy != "" {
		p.Sources = sources
	}
	return p
}

// applyUnit applies the [Service] Environment= and EnvironmentFile= lines
// of one unit file to env and reports whether it set anything.
func applyUnit(root string, data []byte, env map[string]string) bool {
	touched := false
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), maxUnitFile)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if strings.HasPrefix(line, "[") {
			section = line
			continue
		}
		if section != "[Service]" {
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		switch strings.TrimSpace(key) {
		case "Environment":
			val = strings.TrimSpace(val)
			if val == "" {
				clear(env)
				touched = true
				continue
			}
			for _, w := range splitQuoted(val) {
				if k, v, ok := strings.Cut(w, "="); ok && k != "" {
					env[k] = v
					touched = true
				}
			}
		case "EnvironmentFile":
			f := strings.TrimSpace(val)
			f = strings.TrimPrefix(f, "-")
			if f == "" || !strings.HasPrefix(f, "/") {
				continue
			}
			content, _, err := readInRoot(root, f)
			if err != nil || len(content) > maxUnitFile {
				continue // a missing "-" file is fine; a missing plain one fails the unit, which is systemd's to report
			}
			for _, l := range strings.Split(string(content), "\n") {
				l = strings.TrimSpace(l)
				if l == "" || l[0] == '#' || l[0] == ';' {
					continue
				}
				l = strings.TrimPrefix(l, "export ")
				if k, v, ok := strings.Cut(l, "="); ok && k != "" {
					env[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"'`)
					touched = true
				}
			}
		}
	}
	return touched
}

// splitQuoted splits a systemd Environment= value into its assignments:
// words separated by spaces, a word in double or single quotes kept whole.
func splitQuoted(s string) []string {
	var out []string
	var b strings.Builder
	var quote byte
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0 && c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		case quote != 0:
			b.WriteByte(c)
		case c == '"' || c == '\'':
			quote, inWord = c, true
		case c == ' ' || c == '\t':
			if inWord {
				out = append(out, b.String())
				b.Reset()
				inWord = false
			}
		default:
			b.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		out = append(out, b.String())
	}
	return out
}

// unitFiles lists the files systemd composes one service from under root:
// the first unit found, then its drop-ins (*.conf) sorted by file name, a
// drop-in in a later directory replacing one of the same name.
func unitFiles(root string, units, dropIns []string) []string {
	var files []string
	for _, u := range units {
		if _, _, err := readInRoot(root, u); err == nil {
			files = append(files, u)
			break
		}
	}
	byName := map[string]string{}
	for _, d := range dropIns {
		dir, err := inRoot(root, d)
		if err != nil {
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".conf") && !e.IsDir() {
				byName[e.Name()] = path.Join(d, e.Name())
			}
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		files = append(files, byName[n])
	}

	return files
}
