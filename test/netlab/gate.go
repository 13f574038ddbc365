package netlab

import (
	"errors"

	"github.com/pullpath/pullpath/internal/tiers"
)

// EnvVar must be set to 1 for the network lab tier to run (CI sets it).
const EnvVar = "PULLPATH_NETLAB"

// Available reports why the network lab cannot run here, or nil when it
// can: PULLPATH_NETLAB=1 and package tiers' prerequisites (tiers.Netlab:
// Linux, root, ip, containerd), which the tests and hack/test.sh check.
func Available() error {
	if !tiers.Netlab.Requested() {
		return errors.New("set " + EnvVar + "=1 to run the network lab (needs root, iproute2, containerd)")
	}
	return tiers.Netlab.Missing()
}
