package netlab

import (
	"fmt"
	"os/exec"
	"syscall"
	"testing"
)

// TestKeepFDsFromDaemons opens a descriptor the way flock(1) hands its lock
// to its command (no close-on-exec) and checks that a child sees it before
// closeOnExecAll and not after.
func TestKeepFDsFromDaemons(t *testing.T) {
	fd, err := syscall.Open(t.TempDir(), syscall.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	childSees := func() bool {
		return exec.Command("/bin/sh", "-c", fmt.Sprintf("test -e /proc/self/fd/%d", fd)).Run() == nil
	}
	if !childSees() {
		t.Fatalf("a child does not see the inherited descriptor %d to begin with: the test proves nothing", fd)
	}
	closeOnExecAll()
	if childSees() {
		t.Fatalf("a child still holds descriptor %d after closeOnExecAll", fd)
	}
}
