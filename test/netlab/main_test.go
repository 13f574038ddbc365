package netlab_test

import (
	"os"
	"testing"
)

// labHelperEnv, when set, turns the test binary into the lab helper process
// (see labhelper_test.go): it runs the embedded lab inside the registry
// namespace, prints what it serves as one JSON line and serves until its
// stdin closes.
const labHelperEnv = "PULLPATH_NETLAB_LAB_HELPER"

// runLabHelper is set by labhelper_test.go, the only file that imports
// internal/lab.
var runLabHelper func(config string) int

func TestMain(m *testing.M) {
	if cfg := os.Getenv(labHelperEnv); cfg != "" {
		if runLabHelper == nil {
			os.Exit(3)
		}
		os.Exit(runLabHelper(cfg))
	}
	code := m.Run()
	pullpathBuild.remove()
	cimage.remove()
	os.Exit(code)
}
