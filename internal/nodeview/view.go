package nodeview

import (
	"bytes"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"path/filepath"

	"github.com/pullpath/pullpath/internal/verdict"
)

// DefaultHostsDirs is containerd's CRI default config_path when the CRI
// configuration sets no registry options: its own certs.d, then Docker's.
// Many distributions (AKS among them) set config_path to the first only; a
// node with both directories and such a setting is read as containerd's
// default would read it.
var DefaultHostsDirs = []string{"/etc/containerd/certs.d", "/etc/docker/certs.d"}

// View is what the node's runtime sees, read from a root directory.
type View struct {
	// Root is the directory read as the node's /.
	Root string
	// Resolv is /etc/resolv.conf (defaults when the file is missing).
	Resolv ResolvConf
	// Hosts are the entries of /etc/hosts.
	Hosts []HostsEntry
	// HostsDir is the first containerd registry configuration directory
	// (a node path such as /etc/containerd/certs.d); HostsDirs lists all of
	// them in lookup order, like containerd's colon-separated config_path.
	HostsDir  string
	HostsDirs []string
	// OS is the node's operating system as a GOOS ("linux", "windows");
	// "" is this machine's. It decides the host directory names
	// containerd looks for (HostDirCandidates) and how HostsDirs map
	// under Root (NodePath).
	OS string
	// HostTreeRequired makes RegistryHosts refuse a hosts.toml with no
	// top-level host table, as containerd 1.x does: its go-toml v1
	// getSortedHosts fails with "invalid `host` tree", and loadHostDir
	// then falls back to the directory's cert files with the registry's
	// default host (containerd#10027; 2.0 reads such a file).
	HostTreeRequired bool
	// Roots is the node trust store, loaded from under Root the way Go's
	// crypto/x509 loads the system pool on Linux (never this machine's pool
	// unless Root is "/"). RootsFiles are the node paths that contributed.
	Roots      *x509.CertPool
	RootsFiles []string
	// ResolvedUpstream is systemd-resolved's own upstream list
	// (/run/systemd/resolve/resolv.conf) when /etc/resolv.conf names only
	// its local stub (127.0.0.53 or 127.0.0.54); nil otherwise. The stub
	// routes names per link (a VPN link may own a domain), so its answer
	// and its upstreams' can differ.
	ResolvedUpstream *ResolvConf
	// Proxy is the proxy environment of containerd's service (systemd unit
	// and drop-ins), which its transport uses for every registry host.
	Proxy Proxy
	// Runtime is the node's containerd binary and the Go that built it,
	// which decides the TLS ClientHello it sends.
	Runtime RuntimeBinary
	// Problems are configuration problems found while loading that did
	// not stop it (ignored hosts lines, unreadable trust files, a missing
	// trust store).
	Problems []*verdict.Error
	// Warnings are facts that work today but mislead (a missing
	// resolv.conf, resolver notes).
	Warnings []verdict.Warning
}

type options struct {
	hostsDirs []string
}

// Option configures Load.
type Option func(*options)

// WithHostsDir sets containerd's registry configuration directory, as the
// CRI plugin's config_path: a node path under the root, or several joined
// with ":" (tried in order per host, first directory found wins). The
// default is "/etc/containerd/certs.d:/etc/docker/certs.d", containerd's
// own default.
func WithHostsDir(dir string) Option {
	return func(o *options) {
		o.hostsDirs = nil
		for _, d := range filepath.SplitList(dir) {
			if d != "" {
				o.hostsDirs = append(o.hostsDirs, d)
			}
		}
	}
}

// Load reads the node's view from root ("" means "/"). It always returns a
// usable *View holding everything that could be read. The error, when
// non-nil, is a *verdict.Error of layer config naming the file: a
// resolv.conf, hosts file or trust bundle that exists but cannot be read or
// is unusable (config.resolv-conf, config.hosts-file, config.ca-file). A
// missing resolv.conf is not an error: the resolver then asks 127.0.0.1
// and ::1 (glibc's and Go's default), recorded as a warning.
func Load(root string, opts ...Option) (*View, error) {
	o := options{hostsDirs: DefaultHostsDirs}
	for _, opt := range opts {
		opt(&o)
	}
	if root == "" {
		root = "/"
	}
	if abs, err := filepath.Abs(root); err == nil {
		root = abs // containerd is handed absolute paths only
	}
	v := &View{Root: root, HostsDirs: append([]string(nil), o.hostsDirs...)}
	if len(v.HostsDirs) > 0 {
		v.HostsDir = v.HostsDirs[0]
	}
	var fatal []*verdict.Error

	// resolv.conf
	data, hp, err := readInRoot(root, "/etc/resolv.conf")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		v.Resolv = DefaultResolvConf()
		v.Warnings = append(v.Warnings, verdict.Warning{Code: verdict.CodeDNSNoResolvConf,
			Message: fmt.Sprintf("%s does not exist: the node's resolver asks 127.0.0.1 and ::1", hp)})
	case err != nil:
		v.Resolv = DefaultResolvConf()
		fatal = append(fatal, verdict.Wrap(verdict.CodeConfigResolvConf, verdict.RoleNone, "", fmt.Errorf("reading %s: %w", hp, err)))
	default:
		rc, perr := ParseResolvConf(bytes.NewReader(data))
		rc.Path = hp
		v.Resolv = rc
		binary := isBinary(data)
		if perr != nil {
			fatal = append(fatal, verdict.Wrap(verdict.CodeConfigResolvConf, verdict.RoleNone, "", fmt.Errorf("parsing %s: %w", hp, perr)))
		} else if rc.Defaulted {
			fatal = append(fatal, noNameserver(hp, rc, binary))
		}
		if binary {
			rc.Notes = nil // line notes of a binary file would only print its bytes
		}
		for _, n := range rc.Notes {
			v.Warnings = append(v.Warnings, verdict.Warning{Code: verdict.CodeDNSResolvConf, Message: hp + ": " + n})
		}
	}

	// hosts
	data, hp, err = readInRoot(root, "/etc/hosts")
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		fatal = append(fatal, verdict.Wrap(verdict.CodeConfigHostsFile, verdict.RoleNone, "", fmt.Errorf("reading %s: %w", hp, err)))
	default:
		entries, perr := ParseHosts(bytes.NewReader(data))
		v.Hosts = entries
		if perr != nil {
			v.Problems = append(v.Problems, verdict.Wrap(verdict.CodeConfigHostsFile, verdict.RoleNone, "", fmt.Errorf("parsing %s: %w", hp, perr)))
		}
	}

	// systemd-resolved's upstreams, behind its stub
	if isResolvedStub(v.Resolv) {
		if data, hp, err := readInRoot(root, "/run/systemd/resolve/resolv.conf"); err == nil {
			if up, perr := ParseResolvConf(bytes.NewReader(data)); perr == nil && len(up.Nameservers) > 0 && !isResolvedStub(up) {
				up.Path = hp
				v.ResolvedUpstream = &up
			}
		}
	}

	// containerd's service: its proxy environment and its binary
	svc := readContainerdService(root)
	v.Proxy = proxyOf(svc)
	v.Runtime = runtimeOf(root, svc)

	// trust store
	ts := loadTrust(root)
	v.Roots, v.RootsFiles = ts.pool, ts.files
	v.Problems = append(v.Problems, ts.problems...)
	if ts.fatal != nil {
		fatal = append(fatal, ts.fatal)
	}

	v.Problems = append(v.Problems, fatal...)
	if len(fatal) > 0 {
		return v, fatal[0]
	}
	return v, nil
}

// LookupHosts returns the addresses /etc/hosts gives name: case-insensitive,
// a trailing dot ignored, every matching line in file order.
func (v *View) LookupHosts(name string) []netip.Addr {
	if v == nil {
		return nil
	}
	return lookupHosts(v.Hosts, name)
}

// isResolvedStub reports a resolv.conf whose only nameservers are
// systemd-resolved's local stub listeners.
func isResolvedStub(rc ResolvConf) bool {
	if len(rc.Nameservers) == 0 {
		return false
	}
	for _, ns := range rc.Nameservers {
		if s := ns.String(); s != "127.0.0.53" && s != "127.0.0.54" {
			return false
		}
	}
	return true
}
