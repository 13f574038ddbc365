package nodelab

import (
	"errors"

	"github.com/pullpath/pullpath/internal/tiers"
)

// EnvVar must be set to 1 for the node tier to run (CI sets it).
const EnvVar = "PULLPATH_NODELAB"

// EnvBin names the directory of the tools/kube/build.sh binaries.
const EnvBin = tiers.EnvKubeBin

// CNIBinDir is where Debian's containernetworking-plugins installs the
// bridge, host-local and loopback plugins.
const CNIBinDir = tiers.CNIBinDir

// Binaries are the tools/kube binaries the tier runs.
var Binaries = tiers.KubeBinaries

// Available reports why the node tier cannot run here, or nil when it can.
// Its prerequisites are package tiers' (tiers.Nodelab), which the tests
// (tiers.Require) and hack/test.sh check.
func Available() error {
	if !tiers.Nodelab.Requested() {
		return errors.New("set " + EnvVar + "=1 to run the node tier")
	}
	return tiers.Nodelab.Missing()
}
