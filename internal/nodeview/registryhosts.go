package nodeview

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/containerd/containerd/v2/core/remotes/docker"
	"github.com/containerd/containerd/v2/core/remotes/docker/config"
	"github.com/containerd/errdefs"
	"github.com/containerd/log"
	"github.com/sirupsen/logrus"

	"github.com/pullpath/pullpath/internal/verdict"
)

// RegistryHost is one host containerd would try for a registry, in order:
// the hosts.toml mirrors in file order, then the server.
type RegistryHost struct {
	// Host is host[:port] as containerd dials it, e.g. "mirror.example:5000"
	// or "registry-1.docker.io".
	Host string
	// Scheme is "https" or "http".
	Scheme string
	// Path is the API root, "/v2" unless override_path.
	Path string
	// Capabilities are "pull", "resolve", "push" and "referrers".
	Capabilities []string
	// Mirror is true for a [host."..."] entry that is not the server
	// itself, false for the server. An entry whose scheme, host and path
	// equal the server's is containerd's documented way to give the
	// registry settings of its own (plain http, ca, skip_verify): it is the
	// registry, tried first with those settings.
	Mirror bool
	// TLS is the client TLS configuration containerd uses for this host,
	// with RootCAs set to the node trust store plus the host's ca files,
	// InsecureSkipVerify from skip_verify and the client certificates.
	TLS        *tls.Config
	SkipVerify bool
	// CAFiles are the host's ca files (from hosts.toml, or the *.crt files
	// of a certs.d directory without hosts.toml), as paths under the root.
	CAFiles []string
	// Header holds the extra request headers of hosts.toml.
	Header http.Header
	// Source is the hosts.toml this host came from, under the root, or ""
	// for containerd's default host. Dir is the certs.d directory used
	// ("" when none exists for the registry).
	Source string
	Dir    string
	// Refused is the node path of a hosts.toml the runtime refuses
	// (View.HostTreeRequired): the host comes from the directory's cert
	// files instead, as containerd's fallback gives it.
	Refused string
	// HTTPFallback is true when containerd tries HTTPS first and falls back
	// to plain HTTP (an http:// host with TLS settings).
	HTTPFallback bool
	// DialTimeout is hosts.toml dial_timeout; the default is 30s.
	DialTimeout time.Duration
	// Repo, when set, is the repository asked on this host instead of the
	// image's (CRI-O's registries.conf location rewrites); NoNamespace is
	// true for a runtime that sends no ?ns= to mirrors (containers/image).
	Repo        string
	NoNamespace bool
	// Client is containerd's HTTP client for this host with the node trust
	// store in place of this machine's. It resolves names with this
	// machine's resolver: use it only where that is the node's.
	Client *http.Client
	// Warnings are facts about this host that work but mislead
	// (tls.skip-verify).
	Warnings []verdict.Warning
}

// RegistryHosts returns the hosts containerd's CRI plugin would try for the
// registry refHost (the host part of an image reference; "docker.io" and
// "index.docker.io" mean Docker Hub), in order, by running containerd's own
// parser (core/remotes/docker/config.ConfigureHosts) over the node's certs.d.
//
// Like the CRI plugin, no HostOptions.DefaultTLS is passed: a DefaultTLS
// would make containerd try HTTPS first for every http:// host and change
// what the node does. The node trust store is put in afterwards.
//
// Differences from running containerd on the node, all deliberate:
//   - ca and client paths in hosts.toml that are absolute are node paths:
//     they are read under the root. To make containerd read them there,
//     a validated copy of hosts.toml with rewritten paths is handed to
//     containerd from a temporary directory that is removed before return.
//   - The root pool containerd extends with ca files is the node trust
//     store, not this machine's system pool.
//   - A hosts.toml that containerd cannot decode is an error here
//     (config.hosts-toml naming the file). containerd itself logs "failed
//     to decode" and silently falls back to the directory's cert files;
//     the hosts of that fallback are returned with the error.
//
// An unreadable hosts.toml or host directory is config.hosts-toml; an
// unreadable or empty ca or client file is config.ca-file.
func (v *View) RegistryHosts(ctx context.Context, refHost string) ([]RegistryHost, error) {
	host := refHost
	if host == "index.docker.io" {
		host = "docker.io"
	}
	if host == "" || host == "." || host == ".." || strings.ContainsAny(host, "/\\\x00 \t\r\n") {
		return nil, verdict.Errorf(verdict.CodeConfigReference, verdict.RoleNone, "", "%q is not a registry host", refHost)
	}
	ctx = log.WithLogger(ctx, quietLogger())

	// 1. Find the host directory as containerd's hostDirFromRoots does.
	dir, nodeDir, err := v.hostDir(host)
	if err != nil {
		return nil, verdict.Wrap(verdict.CodeConfigHostsTOML, verdict.RoleNone, "", fmt.Errorf("finding the hosts directory of %s: %w", host, err))
	}

	// 2. Read and validate hosts.toml; prepare what containerd will read.
	var (
		spec      *hostsSpec
		source    string
		refused   string // the node path of a hosts.toml containerd refuses (HostTreeRequired)
		parseErr  *verdict.Error
		handDir   = dir
		caPerHost [][]string // per containerd host, paths under root
	)
	if dir != "" {
		source = filepath.Join(dir, "hosts.toml")
		b, err := os.ReadFile(source)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			source = ""
		case err != nil:
			return nil, verdict.Wrap(verdict.CodeConfigHostsTOML, verdict.RoleNone, "", fmt.Errorf("reading %s: %w", source, err))
		case len(b) == 0:
			source = "" // containerd treats an empty file as absent
		default:
			s, err := parseHostsTOML(nodeDir, b)
			if err != nil {
				parseErr = verdict.Wrap(verdict.CodeConfigHostsTOML, verdict.RoleNone, "", fmt.Errorf("decoding %s: %w", source, err))
				source = ""
				break
			}
			if v.HostTreeRequired && !s.HostTree {
				// containerd 1.x: "invalid `host` tree", then the
				// directory's cert files with the default host.
				refused = joinNodePath(v.OS, nodeDir, "hosts.toml")
				source = ""
				if handDir, err = certFilesOnly(dir); err != nil {
					return nil, verdict.Wrap(verdict.CodeConfigHostsTOML, verdict.RoleNone, "", fmt.Errorf("reading %s: %w", dir, err))
				}
				defer os.RemoveAll(handDir)
				break
			}
			spec = &s
			tmp, err := os.MkdirTemp("", "pullpath-hosts-")
			if err != nil {
				return nil, fmt.Errorf("preparing hosts.toml for containerd: %w", err)
			}
			defer os.RemoveAll(tmp)
			out, err := s.emitUnique(func(p string) (string, error) { return inRoot(v.Root, p) })
			if err != nil {
				return nil, verdict.Wrap(verdict.CodeConfigHostsTOML, verdict.RoleNone, "", fmt.Errorf("decoding %s: %w", source, err))
			}
			if err := os.WriteFile(filepath.Join(tmp, "hosts.toml"), out, 0o600); err != nil {
				return nil, fmt.Errorf("preparing hosts.toml for containerd: %w", err)
			}
			handDir = tmp
		}
	}

	// 3. Let containerd configure the hosts; keep each host's own transport
	// (an HTTP fallback wrapper hides it otherwise).
	transports := map[*http.Client]*http.Transport{}
	opts := config.HostOptions{
		HostDir: func(string) (string, error) {
			if handDir == "" {
				return "", errdefs.ErrNotFound
			}
			return handDir, nil
		},
		UpdateClient: func(c *http.Client) error {
			if t, ok := c.Transport.(*http.Transport); ok {
				transports[c] = t
			}
			return nil
		},
	}
	rhosts, err := config.ConfigureHosts(ctx, opts)(host)
	if err != nil {
		return nil, configureError(err)
	}

	// 4. Map containerd's hosts back to the spec: mirrors, then server.
	var specs []hostSpec
	if spec != nil {
		specs = append(append(specs, spec.Hosts...), spec.Server)
		order := spec.uniqueIndex()
		if len(rhosts) != len(order.names)+1 {
			return nil, fmt.Errorf("containerd read %d hosts from %s, pullpath read %d: refusing to guess", len(rhosts), source, len(order.names)+1)
		}
		expanded := make([]docker.RegistryHost, 0, len(specs))
		for _, i := range order.index {
			expanded = append(expanded, rhosts[i])
		}
		rhosts = append(expanded, rhosts[len(rhosts)-1])
		for _, h := range specs {
			caPerHost = append(caPerHost, mapAll(v.Root, h.CA))
		}
	} else {
		crt, err := certFilesCAs(dir)
		if err != nil {
			return nil, verdict.Wrap(verdict.CodeConfigHostsTOML, verdict.RoleNone, "", fmt.Errorf("reading %s: %w", dir, err))
		}
		for range rhosts {
			caPerHost = append(caPerHost, crt)
		}
	}

	out := make([]RegistryHost, 0, len(rhosts))
	server := rhosts[len(rhosts)-1]
	for i, rh := range rhosts {
		t, ok := transports[rh.Client]
		if !ok {
			t, _ = rh.Client.Transport.(*http.Transport)
		}
		rh2 := RegistryHost{
			Host:         rh.Host,
			Scheme:       rh.Scheme,
			Path:         rh.Path,
			Capabilities: capabilityNames(rh.Capabilities),
			Mirror:       spec != nil && i < len(rhosts)-1 && !sameEndpoint(rh, server),
			CAFiles:      caPerHost[i],
			Header:       rh.Header,
			Source:       source,
			Refused:      refused,
			Dir:          dir,
			DialTimeout:  30 * time.Second,
			Client:       rh.Client,
		}
		rh2.HTTPFallback = rh.Scheme == "https" && writtenScheme(rh) == "http"
		if spec != nil && specs[i].DialTimeout != "" {
			rh2.DialTimeout, _ = time.ParseDuration(specs[i].DialTimeout)
		}
		if t != nil {
			if t.TLSClientConfig == nil {
				t.TLSClientConfig = &tls.Config{}
			}
			pool := v.Roots.Clone()
			for _, f := range rh2.CAFiles {
				data, err := os.ReadFile(f)
				if err != nil {
					return nil, verdict.Wrap(verdict.CodeConfigCAFile, verdict.RoleNone, "", fmt.Errorf("reading CA file %s: %w", f, err))
				}
				if appendPEM(pool, data) == 0 {
					return nil, verdict.Errorf(verdict.CodeConfigCAFile, verdict.RoleNone, "", "CA file %s holds no PEM certificate", f)
				}
			}
			t.TLSClientConfig.RootCAs = pool
			rh2.TLS = t.TLSClientConfig.Clone()
			rh2.SkipVerify = t.TLSClientConfig.InsecureSkipVerify
		}
		if rh2.SkipVerify {
			why := "skip_verify = true in " + source
			if source == "" {
				why = "containerd skips verification for localhost by default"
			}
			rh2.Warnings = append(rh2.Warnings, verdict.Warning{Code: verdict.CodeTLSSkipVerify, Endpoint: rh2.Host,
				Message: fmt.Sprintf("TLS certificates of %s are not verified (%s): the pull works with any certificate, including an interceptor's.", rh2.Host, why)})
		}
		out = append(out, rh2)
	}
	if parseErr != nil {
		return out, parseErr
	}
	return out, nil
}

// certFilesOnly copies the Docker-pattern certificate files of a host
// directory (*.crt, *.cert, *.key: containerd's loadCertFiles) into a new
// temporary directory, without its hosts.toml, for containerd's parser to
// read as the fallback of a refused hosts.toml. The caller removes it.
func certFilesOnly(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp("", "pullpath-certs-")
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		ext := filepath.Ext(e.Name())
		if e.IsDir() || ext != ".crt" && ext != ".cert" && ext != ".key" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err == nil {
			err = os.WriteFile(filepath.Join(tmp, e.Name()), b, 0o600)
		}
		if err != nil {
			os.RemoveAll(tmp)
			return "", err
		}
	}
	return tmp, nil
}

// sameEndpoint reports whether containerd hosts a and b name the same
// endpoint: scheme, host and API path. A host containerd tries over HTTPS
// first with an HTTP fallback was written http:// in hosts.toml, so it
// counts as http.
func sameEndpoint(a, b docker.RegistryHost) bool {
	return writtenScheme(a) == writtenScheme(b) && a.Host == b.Host && a.Path == b.Path
}

func writtenScheme(h docker.RegistryHost) string {
	if h.Client == nil {
		return h.Scheme
	}
	if _, plain := h.Client.Transport.(*http.Transport); !plain && h.Scheme == "https" {
		return "http"
	}
	return h.Scheme
}

// hostDir finds the certs.d directory containerd uses for host: for each
// configured root in order, the names of HostDirCandidates for the node's
// OS (containerd's HostDirFromRoot: host_port_, then host:port, then
// _default on Linux); the first that exists wins. It returns the path on
// this machine and the node path.
func (v *View) hostDir(host string) (string, string, error) {
	for _, d := range v.HostsDirs {
		hd, err := inRoot(v.Root, NodePath(v.OS, d))
		if err != nil {
			return "", "", err
		}
		for _, name := range HostDirCandidates(v.OS, host) {
			dir := filepath.Join(hd, name)
			if _, err := os.Stat(dir); err == nil {
				return dir, joinNodePath(v.OS, d, name), nil
			} else if !errors.Is(err, fs.ErrNotExist) {
				return "", "", err
			}
		}
	}
	return "", "", nil
}

// joinNodePath joins a node directory and a name with the node's
// separator.
func joinNodePath(goos, dir, name string) string {
	if goos == OSWindows && strings.Contains(dir, `\`) {
		return strings.TrimRight(dir, `\`) + `\` + name
	}
	return filepath.Join(dir, name)
}

// configureError turns ConfigureHosts' error into a config verdict.
func configureError(err error) *verdict.Error {
	msg := err.Error()
	if strings.Contains(msg, "CA cert") || strings.Contains(msg, "CERT file") || strings.Contains(msg, "key pair") || strings.Contains(msg, "cert pool") {
		return verdict.Wrap(verdict.CodeConfigCAFile, verdict.RoleNone, "", fmt.Errorf("configuring registry hosts: %w", err))
	}
	return verdict.Wrap(verdict.CodeConfigHostsTOML, verdict.RoleNone, "", fmt.Errorf("configuring registry hosts: %w", err))
}

// certFilesCAs lists the *.crt files of a certs.d directory, which
// containerd loads as CAs when the directory has no hosts.toml.
func certFilesCAs(dir string) ([]string, error) {
	if dir == "" {
		return nil, nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".crt") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out, nil
}

func mapAll(root string, nodePaths []string) []string {
	var out []string
	for _, p := range nodePaths {
		hp, err := inRoot(root, p)
		if err != nil {
			hp = filepath.Join(root, p)
		}
		out = append(out, hp)
	}
	return out
}

func capabilityNames(c docker.HostCapabilities) []string {
	var out []string
	for _, x := range []struct {
		c    docker.HostCapabilities
		name string
	}{{docker.HostCapabilityPull, "pull"}, {docker.HostCapabilityResolve, "resolve"}, {docker.HostCapabilityPush, "push"}, {docker.HostCapabilityReferrers, "referrers"}} {
		if c.Has(x.c) {
			out = append(out, x.name)
		}
	}
	return out
}

// quietLogger keeps containerd's logging (e.g. "failed to decode" or "host
// will try HTTPS first") out of the caller's output: libraries never print.
func quietLogger() *logrus.Entry {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return logrus.NewEntry(l)
}

// uniqueHosts is the emitted order of a spec: containerd lists a host twice
// when its header repeats later in the file, which TOML cannot say twice,
// so the copy handed to containerd names it once and the result repeats it.
type uniqueHosts struct {
	names []string
	index []int // for each spec host, its index in names
}

func (spec hostsSpec) uniqueIndex() uniqueHosts {
	var u uniqueHosts
	pos := map[string]int{}
	for _, h := range spec.Hosts {
		i, ok := pos[h.Name]
		if !ok {
			i = len(u.names)
			pos[h.Name] = i
			u.names = append(u.names, h.Name)
		}
		u.index = append(u.index, i)
	}
	return u
}

// emitUnique emits spec with each host once (see uniqueHosts).
func (spec hostsSpec) emitUnique(mapPath func(string) (string, error)) ([]byte, error) {
	u := spec.uniqueIndex()
	s := hostsSpec{Server: spec.Server}
	seen := map[string]bool{}
	for _, h := range spec.Hosts {
		if !seen[h.Name] {
			seen[h.Name] = true
			s.Hosts = append(s.Hosts, h)
		}
	}
	_ = u
	return s.emit(mapPath)
}
