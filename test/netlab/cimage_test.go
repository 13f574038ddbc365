package netlab_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pullpath/pullpath/test/netlab"
)

// cimageTags are the build tags of test/netlab/cimage: containers/image's
// OpenPGP signature mechanism in Go (no gpgme, so CGO stays off) and no
// storage graph drivers that need C libraries.
const cimageTags = "containers_image_openpgp,exclude_graphdriver_btrfs,exclude_graphdriver_devicemapper"

var (
	cimageOnce sync.Once
	cimageBin  string
	cimageErr  error
)

// buildCImage builds the containers/image driver once per test binary (the
// Go build cache keeps it across runs); TestMain removes it.
func buildCImage(t *testing.T) string {
	t.Helper()
	cimageOnce.Do(func() {
		dir, err := os.MkdirTemp("", netlab.Prefix+"cimage-")
		if err != nil {
			cimageErr = err
			return
		}
		cimageBin = filepath.Join(dir, "cimage")
		cmd := exec.Command("go", "build", "-tags", cimageTags, "-o", cimageBin, "./test/netlab/cimage")
		cmd.Dir = filepath.Join("..", "..")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			cimageErr = fmt.Errorf("building test/netlab/cimage: %v\n%s", err, out)
		}
	})
	if cimageErr != nil {
		t.Fatal(cimageErr)
	}
	return cimageBin
}
