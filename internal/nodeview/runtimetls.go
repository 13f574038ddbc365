package nodeview

import (
	"crypto/tls"
	"debug/buildinfo"
	"fmt"
	"go/version"
	"os"
	"runtime"
	"strings"
)

// RuntimeBinary is what the node's containerd binary says of how it was
// built. Its TLS client is Go's crypto/tls of that Go version, so the
// ClientHello it sends (and so what a middlebox or a path-MTU black hole
// does to it) follows from GoVersion, not from the Go that built pullpath.
type RuntimeBinary struct {
	// Path is the node path of the binary: the containerd unit's ExecStart,
	// else the first of runtimeBinaries that exists. Empty when none is found.
	Path string
	// GoVersion is the Go release that built it ("go1.19.8"); empty when
	// the file has no Go build information.
	GoVersion string
	// DefaultGODEBUG is the GODEBUG default compiled into it (go.mod's
	// godebug lines); GODEBUG is the one its service's environment sets,
	// which wins. Either can turn the post-quantum key exchange off.
	DefaultGODEBUG string
	GODEBUG        string
	// ModulePath and ModuleVersion are the main module of the build
	// ("github.com/containerd/containerd/v2", "v2.2.9"); a distribution
	// build records "(devel)" or nothing as its version, and only the
	// module path's major version is known then.
	ModulePath    string
	ModuleVersion string
	// ConfigFlag is the --config (-c) argument of the service's ExecStart,
	// a node path; empty when the unit gives none.
	ConfigFlag string
}

// runtimeBinaries are where distributions install containerd.
var runtimeBinaries = []string{"/usr/bin/containerd", "/usr/local/bin/containerd", "/usr/sbin/containerd"}

// runtimeOf finds the containerd binary of svc under root (the unit's
// ExecStart first, as systemd would start it) and reads its Go build
// information. It reads only the binary's headers and build-info section,
// never executes it.
func runtimeOf(root string, svc containerdService) RuntimeBinary {
	var cands []string
	if svc.exec != "" {
		cands = []string{svc.exec}
	}
	cands = append(cands, runtimeBinaries...)
	for _, c := range cands {
		hp, err := inRoot(root, c)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(hp); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		rb := RuntimeBinary{Path: c, GODEBUG: svc.env["GODEBUG"], ConfigFlag: configFlag(svc.args)}
		if bi, err := buildinfo.ReadFile(hp); err == nil {
			rb.GoVersion = bi.GoVersion
			rb.ModulePath, rb.ModuleVersion = bi.Main.Path, bi.Main.Version
			if rb.ModulePath == "" {
				rb.ModulePath = bi.Path // a build without module information names its package
			}
			for _, s := range bi.Settings {
				if s.Key == "DefaultGODEBUG" {
					rb.DefaultGODEBUG = s.Value
				}
			}
		}
		return rb
	}
	return RuntimeBinary{}
}

// configFlag returns containerd's --config / -c argument from its command
// line words (both "-c x" and "--config=x" forms).
func configFlag(args []string) string {
	for i, a := range args {
		switch {
		case a == "-c" || a == "--config" || a == "-config":
			if i+1 < len(args) {
				return args[i+1]
			}
		case strings.HasPrefix(a, "--config="):
			return strings.TrimPrefix(a, "--config=")
		case strings.HasPrefix(a, "-c="):
			return strings.TrimPrefix(a, "-c=")
		}
	}
	return ""
}

// ClientHelloCurves returns the key-exchange groups, in order, that the
// default crypto/tls client of the runtime's Go version offers, and a note
// saying so. It returns nil (use this binary's own defaults) when the Go
// version is unknown or not older than the one running; the note is empty
// only when no containerd binary with Go build information was found.
//
// The defaults (crypto/tls defaultCurvePreferences, per release):
//   - up to Go 1.22: X25519, P-256, P-384, P-521: a ClientHello of a few
//     hundred bytes, one segment;
//   - Go 1.23: X25519Kyber768Draft00 first (GODEBUG tlskyber=0 drops it);
//   - Go 1.24 and 1.25: X25519MLKEM768 first (tlsmlkem=0 drops it);
//   - Go 1.26: also SecP256r1MLKEM768 and SecP384r1MLKEM1024.
//
// A post-quantum key share makes the ClientHello over 1,200 bytes, so it
// fills a full-size TCP segment: a path-MTU black hole or a middlebox that
// mishandles large hellos stalls the handshake of a modern client while a
// containerd built with Go 1.22 or older gets through. Go 1.26 cannot send
// the withdrawn Kyber draft, so Go 1.23 is approximated by X25519MLKEM768,
// whose share is of the same size.
func (r RuntimeBinary) ClientHelloCurves() ([]tls.CurveID, string) {
	gv := r.GoVersion
	if !version.IsValid(gv) {
		return nil, ""
	}
	off := func(key string) bool { return r.godebug(key) == "0" }
	classic := []tls.CurveID{tls.X25519, tls.CurveP256, tls.CurveP384, tls.CurveP521}
	name := "containerd (" + r.Path + ", built with " + gv + ")"
	switch {
	case version.Compare(gv, "go1.23") < 0,
		version.Compare(gv, "go1.24") < 0 && off("tlskyber"),
		version.Compare(gv, "go1.24") >= 0 && off("tlsmlkem"):
		return classic, fmt.Sprintf("key exchange as %s offers it: X25519, P-256, P-384, P-521, no post-quantum key share (a ClientHello of one small segment)", name)
	case version.Compare(gv, "go1.24") < 0:
		return append([]tls.CurveID{tls.X25519MLKEM768}, classic...), fmt.Sprintf("key exchange as %s offers it: a post-quantum hybrid key share first (its X25519Kyber768Draft00 is sent here as X25519MLKEM768, of the same size), then X25519, P-256, P-384, P-521", name)
	case version.Compare(gv, "go1.26") < 0 || off("tlssecpmlkem"):
		return append([]tls.CurveID{tls.X25519MLKEM768}, classic...), fmt.Sprintf("key exchange as %s offers it: X25519MLKEM768, X25519, P-256, P-384, P-521", name)
	}
	return nil, fmt.Sprintf("key exchange as %s offers it: the Go TLS defaults of this probe (%s)", name, runtime.Version())
}

// godebug returns the runtime's setting of one GODEBUG key: the service
// environment's over the compiled-in default, the last of each winning, as
// Go's runtime reads them.
func (r RuntimeBinary) godebug(key string) string {
	val := ""
	for _, list := range []string{r.DefaultGODEBUG, r.GODEBUG} {
		for _, kv := range strings.Split(list, ",") {
			if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok && k == key {
				val = v
			}
		}
	}
	return val
}
