package nodeview

import (
	"runtime"
	"strings"
)

// OSWindows is the GOOS of a Windows node.
const OSWindows = "windows"

// HostDirCandidates are the directory names containerd looks for, in
// order, under each config_path root for a registry host, on a node of the
// given operating system (GOOS; "" is this machine's). The first that
// exists is the registry's host directory.
//
// On Linux and every non-Windows system (core/remotes/docker/config
// config_unix.go hostPaths, the same in 1.6's remotes/docker/config):
// "host_port_" when the host has a port, then the host as written
// ("host:port"), then "_default". On Windows (config_windows.go
// hostPaths): the same with every colon removed, "host_port_" (an IPv6
// literal loses its colons too: "[::1]:5000" gives "[1]_5000_"), then
// "hostport", then "_default": a directory named "host:port" is never
// read there (NTFS does not allow the name anyway).
func HostDirCandidates(goos, host string) []string {
	if goos == "" {
		goos = runtime.GOOS
	}
	ch := hostDirectory(host)
	var out []string
	if goos == OSWindows {
		if ch != host {
			out = append(out, strings.ReplaceAll(ch, ":", ""))
		}
		return append(out, strings.ReplaceAll(host, ":", ""), "_default")
	}
	if ch != host {
		out = append(out, ch)
	}
	return append(out, host, "_default")
}

// hostDirectory is containerd's hostDirectory (hosts.go): the last ":port"
// becomes "_port_".
func hostDirectory(host string) string {
	if idx := strings.LastIndex(host, ":"); idx > 0 {
		return host[:idx] + "_" + host[idx+1:] + "_"
	}
	return host
}

// NodePath turns a path as a node of the given operating system writes it
// into the slash path read under a root: on Windows the drive letter is
// dropped and backslashes become slashes ("C:\ProgramData\containerd\certs.d"
// is read as /ProgramData/containerd/certs.d under the root, where a copy
// of the node's C: drive is).
func NodePath(goos, p string) string {
	if goos == "" {
		goos = runtime.GOOS
	}
	if goos != OSWindows {
		return p
	}
	p = strings.ReplaceAll(p, `\`, "/")
	if len(p) >= 2 && p[1] == ':' && (p[0]|0x20 >= 'a' && p[0]|0x20 <= 'z') {
		p = p[2:]
	}
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return p
}
