package runtimecfg

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/pullpath/pullpath/internal/nodeview"
)

// Runtime names.
const (
	Containerd = "containerd"
	CRIO       = "cri-o"
)

// Runtime is the node's container runtime as found from its files.
type Runtime struct {
	// Name is "containerd", "cri-o", or "" when nothing was found.
	Name string `json:"name"`
	// Version is the release ("1.6.20", "2.2.9"), or the major version
	// only ("1.x") when nothing more precise is on disk; "" when unknown.
	Version string `json:"version,omitempty"`
	// VersionSource says where Version came from.
	VersionSource string `json:"version_source,omitempty"`
	// Binary is the node path of the runtime binary; GoVersion the Go that
	// built it.
	Binary    string `json:"binary,omitempty"`
	GoVersion string `json:"go_version,omitempty"`
	// Assumed is true when no containerd binary with a version was found
	// and containerd 2.0's rules were used to read the files.
	Assumed bool `json:"assumed,omitempty"`
	// Candidates are every version source found, the one used marked
	// (applyVersionSources).
	Candidates []VersionCandidate `json:"version_candidates,omitempty"`

	major, minor int // -1 when unknown
}

// Major and Minor return the version's parts, -1 when unknown.
func (r Runtime) Major() int { return r.major }
func (r Runtime) Minor() int { return r.minor }

// AtLeast reports whether the runtime is known to be at least major.minor.
// An unknown minor counts as the major's first release.
func (r Runtime) AtLeast(major, minor int) bool {
	if r.major != major {
		return r.major > major
	}
	return max(r.minor, 0) >= minor
}

// dpkgStatus is where Debian and Ubuntu record installed packages.
const dpkgStatus = "/var/lib/dpkg/status"

// containerdPackages are the package names that ship containerd.
var containerdPackages = []string{"containerd", "containerd.io"}

// detectContainerd describes the containerd of the node: the binary's build
// information first (a go-installed or upstream release binary records
// its module version), then the package database, then the module path's
// major version (github.com/containerd/containerd is 1.x, .../v2 is 2.x).
func detectContainerd(root string, rb nodeview.RuntimeBinary) Runtime {
	r := Runtime{Name: Containerd, Binary: rb.Path, GoVersion: rb.GoVersion, major: -1, minor: -1}
	if v, ok := parseVersion(rb.ModuleVersion); ok {
		r.setVersion(v, "build information of "+rb.Path)
		return r
	}
	if data, _, err := nodeview.ReadInRoot(root, dpkgStatus); err == nil {
		for _, pkg := range containerdPackages {
			if v := dpkgVersion(data, pkg); v != "" {
				if pv, ok := parseVersion(v); ok {
					r.setVersion(pv, fmt.Sprintf("%s (package %s %s)", dpkgStatus, pkg, v))
					return r
				}
			}
		}
	}
	switch {
	case strings.HasPrefix(rb.ModulePath, "github.com/containerd/containerd/v2"):
		r.major, r.Version = 2, "2.x"
		r.VersionSource = "module path of " + rb.Path + " (major version only)"
	case strings.HasPrefix(rb.ModulePath, "github.com/containerd/containerd"):
		r.major, r.Version = 1, "1.x"
		r.VersionSource = "module path of " + rb.Path + " (major version only)"
	}
	return r
}

type version struct{ major, minor, patch int }

func (r *Runtime) setVersion(v version, source string) {
	r.major, r.minor = v.major, v.minor
	r.Version = fmt.Sprintf("%d.%d.%d", v.major, v.minor, v.patch)
	r.VersionSource = source
}

// parseVersion reads "v2.2.9", "1.6.20~ds1-1+deb12u3" or "1.7.27-0ubuntu1":
// major.minor[.patch] at the start, anything after. (No regexp: a
// package-level one would be compiled at every start of the node binary.)
func parseVersion(s string) (version, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	var nums []int
	for len(nums) < 3 {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 0 || i > 9 {
			break
		}
		n, _ := strconv.Atoi(s[:i])
		nums = append(nums, n)
		s = s[i:]
		if !strings.HasPrefix(s, ".") {
			break
		}
		s = s[1:]
	}
	if len(nums) < 2 {
		return version{}, false
	}
	v := version{major: nums[0], minor: nums[1]}
	if len(nums) == 3 {
		v.patch = nums[2]
	}
	return v, true
}

// dpkgVersion returns the Version of an installed package in a dpkg status
// file, "" when it is not there or not installed.
func dpkgVersion(data []byte, pkg string) string {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var name, ver, status string
	flush := func() string {
		if name == pkg && ver != "" && strings.HasSuffix(status, " installed") {
			return ver
		}
		return ""
	}
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if v := flush(); v != "" {
				return v
			}
			name, ver, status = "", "", ""
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(line, " ") {
			continue
		}
		switch k {
		case "Package":
			name = strings.TrimSpace(v)
		case "Version":
			ver = strings.TrimSpace(v)
		case "Status":
			status = strings.TrimSpace(v)
		}
	}
	return flush()
}

// crioFiles are the files that say a node runs CRI-O.
var crioFiles = []string{"/usr/bin/crio", "/usr/local/bin/crio", "/etc/crio/crio.conf", "/etc/crio/crio.conf.d"}

// crioFile returns the first CRI-O file found under root, "" when none.
func crioFile(root string) string {
	for _, f := range crioFiles {
		if hp, err := nodeview.InRoot(root, f); err == nil {
			if _, err := os.Stat(hp); err == nil {
				return f
			}
		}
	}
	return ""
}
