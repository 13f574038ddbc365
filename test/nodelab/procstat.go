package nodelab

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ProcUsage is what /proc says of one process: its resident set now and at
// its peak, and the CPU time it has used.
type ProcUsage struct {
	// RSSKiB and HWMKiB are VmRSS and VmHWM of /proc/<pid>/status;
	// AnonKiB and FileKiB split VmRSS into RssAnon (heap, stacks) and
	// RssFile (the mapped binary's pages).
	RSSKiB, HWMKiB, AnonKiB, FileKiB int64
	// CPUTicks is utime+stime of /proc/<pid>/stat, in clock ticks.
	CPUTicks int64
}

// ReadProcUsage reads pid's ProcUsage.
func ReadProcUsage(pid int) (ProcUsage, error) {
	var u ProcUsage
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return u, err
	}
	for _, line := range strings.Split(string(st), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		switch k {
		case "VmRSS":
			u.RSSKiB = n
		case "VmHWM":
			u.HWMKiB = n
		case "RssAnon":
			u.AnonKiB = n
		case "RssFile":
			u.FileKiB = n
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return u, err
	}
	// The command name (field 2) may hold spaces: fields count from the
	// last ')'.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return u, fmt.Errorf("/proc/%d/stat: no command field", pid)
	}
	f := strings.Fields(string(stat)[i+1:])
	// After the command: state(3) ... utime(14) stime(15).
	if len(f) < 13 {
		return u, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	stt, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return u, fmt.Errorf("/proc/%d/stat: bad utime/stime %q %q", pid, f[11], f[12])
	}
	u.CPUTicks = ut + stt
	return u, nil
}

// ClockTicks is the kernel's USER_HZ (getconf CLK_TCK), the unit of
// ProcUsage.CPUTicks.
func ClockTicks() (int64, error) {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err != nil {
		return 0, fmt.Errorf("getconf CLK_TCK: %w", err)
	}
	return strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
}

// FindProcess returns the processes in the node's network namespace whose
// command line starts with argv, each with the cgroup path it has in the
// first hierarchy of /proc/<pid>/cgroup that lies under the node's cgroup
// root ("" when none does).
func (nd *Node) FindProcess(ctx context.Context, argv ...string) (map[int]string, error) {
	pids, err := nd.NS.Pids(ctx)
	if err != nil {
		return nil, err
	}
	out := map[int]string{}
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(args) < len(argv) || !slices.Equal(args[:len(argv)], argv) {
			continue
		}
		out[pid] = nd.cgroupOf(pid)
	}
	return out, nil
}

func (nd *Node) cgroupOf(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && strings.HasPrefix(filepath.Clean(parts[2])+"/", nd.CgroupRoot+"/") {
			return parts[2]
		}
	}
	return ""
}
