package netlab

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
)

// EnvVar must be set to 1 for the network lab tier to run (CI sets it).
const EnvVar = "PULLPATH_NETLAB"

// Available reports why the network lab cannot run here, or nil when it
// can: it needs Linux, root, the ip command, the containerd binary and
// PULLPATH_NETLAB=1.
func Available() error {
	if runtime.GOOS != "linux" {
		return errors.New("the network lab needs Linux")
	}
	if os.Getenv(EnvVar) != "1" {
		return errors.New("set " + EnvVar + "=1 to run the network lab (needs root, iproute2, containerd)")
	}
	if os.Geteuid() != 0 {
		return errors.New("the network lab needs root")
	}
	for _, bin := range []string{"ip", "containerd"} {
		if _, err := exec.LookPath(bin); err != nil {
			return errors.New("the network lab needs " + bin + " on PATH")
		}
	}
	return nil
}
