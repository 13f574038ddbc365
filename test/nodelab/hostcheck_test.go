package nodelab

import (
	"context"
	"os/exec"
	"strings"
	"testing"
)

// TestSnapshotReadsTheMachine checks that the host check sees what it
// guards (a snapshot with nothing in it would never report a change), and
// that Diff reports a changed, a vanished and a new entry.
func TestSnapshotReadsTheMachine(t *testing.T) {
	s := Snapshot(context.Background())
	for _, k := range watchedSysctls {
		if s["sysctl "+k] == "" {
			t.Errorf("Snapshot has no value for sysctl %s", k)
		}
	}
	if _, err := exec.LookPath("iptables-save"); err == nil {
		if _, ok := s["iptables-save"]; !ok {
			t.Errorf("Snapshot lacks iptables-save although it is installed")
		}
	}
	if _, err := exec.LookPath("ip"); err == nil && (strings.HasPrefix(s["ip -o addr"], "error") || s["ip -o addr"] == "") {
		t.Errorf("Snapshot could not read the root namespace's addresses: %q", s["ip -o addr"])
	}
	after := HostState{}
	for k, v := range s {
		after[k] = v
	}
	after["sysctl vm/overcommit_memory"] = "changed"
	delete(after, "sysctl kernel/panic")
	after["new"] = "x"
	if d := Diff(s, after); len(d) != 3 {
		t.Errorf("Diff = %q, want 3 changes", d)
	}
	if d := Diff(s, s); len(d) != 0 {
		t.Errorf("Diff(s, s) = %q, want none", d)
	}
}
