package netlab

import (
	"os"
	"strconv"
	"sync"
	"syscall"
)

var keepOnce sync.Once

// KeepFDsFromDaemons marks every file descriptor this process inherited
// (3 and up) close-on-exec, once, so that the daemons a lab starts
// (containerd, its shims, kubelets, the control plane) do not hold them.
// The tier runs under "flock /tmp/pp-netns.lock go test ...": flock's lock
// descriptor is inherited by go test and the test binary, and without this
// by every daemon too. A daemon that outlives a killed test binary then
// holds the lock for ever, and every later run waits on it before its Sweep
// could remove the leftover (seen on a shared machine: a containerd of a
// killed run blocked three runs for 30 minutes). Descriptors Go opens
// itself are close-on-exec already.
func KeepFDsFromDaemons() {
	keepOnce.Do(closeOnExecAll)
}

func closeOnExecAll() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < 3 {
			continue
		}
		syscall.CloseOnExec(fd)
	}
}
