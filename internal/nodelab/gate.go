package nodelab

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// EnvVar must be set to 1 for the node tier to run (CI sets it).
const EnvVar = "PULLPATH_NODELAB"

// EnvBin names the directory of the tools/kube/build.sh binaries.
const EnvBin = "PULLPATH_KUBE_BIN"

// CNIBinDir is where Debian's containernetworking-plugins installs the
// bridge, host-local and loopback plugins.
const CNIBinDir = "/usr/lib/cni"

// Binaries are the tools/kube binaries the tier runs.
var Binaries = []string{"etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager", "kubelet"}

// Available reports why the node tier cannot run here, or nil when it can.
func Available() error {
	if runtime.GOOS != "linux" {
		return errors.New("the node tier needs Linux")
	}
	if os.Getenv(EnvVar) != "1" {
		return errors.New("set " + EnvVar + "=1 to run the node tier (needs root, containerd, runc, containernetworking-plugins and tools/kube/build.sh binaries)")
	}
	if os.Geteuid() != 0 {
		return errors.New("the node tier needs root")
	}
	for _, bin := range []string{"ip", "nsenter", "unshare", "containerd", "runc"} {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Errorf("the node tier needs %s on PATH", bin)
		}
	}
	for _, p := range []string{"bridge", "host-local", "loopback"} {
		if _, err := os.Stat(filepath.Join(CNIBinDir, p)); err != nil {
			return fmt.Errorf("the node tier needs the %s CNI plugin in %s (apt-get install containernetworking-plugins)", p, CNIBinDir)
		}
	}
	dir := os.Getenv(EnvBin)
	if dir == "" {
		return errors.New(EnvBin + " is not set: export " + EnvBin + "=$(tools/kube/build.sh)")
	}
	for _, b := range Binaries {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return fmt.Errorf("%s=%s has no %s: run tools/kube/build.sh", EnvBin, dir, b)
		}
	}
	return nil
}
