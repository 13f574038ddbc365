package runtimecfg

import (
	"fmt"
	"strings"

	"github.com/pullpath/pullpath/internal/verdict"
)

// VersionCandidate is one source of the runtime's version and what it
// said. The first usable one in this order wins: the running runtime's
// own answer to the CRI Version call, the node's
// status.nodeInfo.containerRuntimeVersion (the same answer, as the
// kubelet last read it, passed by diagnose), then the files (the binary's
// Go build information, the package database, the module path). The
// running runtime's word goes first: a binary upgraded on disk but not
// restarted is not the one that pulls.
type VersionCandidate struct {
	Source  string `json:"source"`
	Name    string `json:"name,omitempty"`
	Version string `json:"version"`
	Used    bool   `json:"used,omitempty"`
}

// runtimeReported splits a CRI "runtime://version" string
// ("containerd://1.7.27-k3s1", "cri-o://1.31.1") or a bare version.
func runtimeReported(s string) (name, ver string) {
	s = strings.TrimSpace(s)
	if n, v, ok := strings.Cut(s, "://"); ok {
		return n, v
	}
	return "", s
}

// applyVersionSources weighs the running runtime's reported versions
// (o.CRIVersion, then o.RuntimeVersion) against what the files gave, and
// records every candidate in c.Runtime.Candidates with the one used.
func (c *Config) applyVersionSources(o Options) {
	var cands []VersionCandidate
	add := func(source, reported string) {
		if reported == "" {
			return
		}
		n, v := runtimeReported(reported)
		cands = append(cands, VersionCandidate{Source: source, Name: n, Version: v})
	}
	add("CRI Version call on "+o.CRISocket, o.CRIVersion)
	add("the node's status.nodeInfo.containerRuntimeVersion", o.RuntimeVersion)
	files := -1
	if c.Runtime.Version != "" && !c.Runtime.Assumed {
		files = len(cands)
		cands = append(cands, VersionCandidate{Source: c.Runtime.VersionSource, Name: c.Runtime.Name, Version: c.Runtime.Version})
	}
	if len(cands) == 0 {
		return
	}
	for i := range cands {
		cd := &cands[i]
		if i == files {
			cd.Used = true
			break
		}
		pv, ok := parseVersion(cd.Version)
		if !ok || cd.Name != "" && cd.Name != Containerd && cd.Name != CRIO {
			continue
		}
		cd.Used = true
		source := fmt.Sprintf("%s (%s)", cd.Source, cd.Version)
		if cd.Name == CRIO {
			if c.Runtime.Name != CRIO {
				// The runtime says it is CRI-O: the files' containerd (a
				// leftover binary, a copy of /etc) is not what pulls.
				c.Runtime = Runtime{Name: CRIO, Binary: c.Runtime.Binary, major: -1, minor: -1}
				c.warn(verdict.CodeConfigRuntimeUnmodelled, fmt.Sprintf("the runtime reports itself as CRI-O (%s): its registries.conf is not what the containerd plan shown reads", source))
			}
			// CRI-O's version says nothing about containerd's rules:
			// major and minor stay unknown.
			c.Runtime.Version, c.Runtime.VersionSource = cd.Version, source
			break
		}
		c.Runtime.Name = Containerd
		c.Runtime.Assumed = false
		c.Runtime.setVersion(pv, source)
		break
	}
	c.Runtime.Candidates = cands
}
