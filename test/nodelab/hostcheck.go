package nodelab

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
)

// HostState is what the tier must leave as it found it: the machine's
// sysctls that a kubelet, containerd or a CNI plugin would change, and the
// root namespace's iptables rules and addresses.
type HostState map[string]string

// watchedSysctls are read from the root namespace's /proc/sys.
var watchedSysctls = []string{
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
	"net/ipv4/ip_forward", "net/bridge/bridge-nf-call-iptables",
}

// Snapshot reads the host state. Entries that do not exist here are
// recorded as absent, so appearing is a change too.
func Snapshot(ctx context.Context) HostState {
	s := HostState{}
	for _, k := range watchedSysctls {
		b, err := os.ReadFile("/proc/sys/" + k)
		if err != nil {
			s["sysctl "+k] = "(absent)"
			continue
		}
		s["sysctl "+k] = strings.TrimSpace(string(b))
	}
	for _, c := range [][]string{{"iptables-save"}, {"ip6tables-save"}, {"ip", "-o", "addr"}, {"ip", "route"}} {
		if _, err := exec.LookPath(c[0]); err != nil {
			continue
		}
		out, err := exec.CommandContext(ctx, c[0], c[1:]...).Output()
		if err != nil {
			s[strings.Join(c, " ")] = "error: " + err.Error()
			continue
		}
		var keep []string
		for _, l := range strings.Split(string(out), "\n") {
			// iptables-save's comments carry timestamps.
			if strings.HasPrefix(l, "#") || strings.TrimSpace(l) == "" {
				continue
			}
			// Counters move with any traffic.
			if strings.HasPrefix(l, ":") {
				if i := strings.LastIndex(l, " ["); i > 0 {
					l = l[:i]
				}
			}
			keep = append(keep, l)
		}
		s[strings.Join(c, " ")] = strings.Join(keep, "\n")
	}
	return s
}

// Diff lists what changed from before to after.
func Diff(before, after HostState) []string {
	var out []string
	for k, v := range before {
		if after[k] != v {
			out = append(out, fmt.Sprintf("%s: was %q, now %q", k, v, after[k]))
		}
	}
	for k, v := range after {
		if _, ok := before[k]; !ok {
			out = append(out, fmt.Sprintf("%s: new %q", k, v))
		}
	}
	sort.Strings(out)
	return out
}
