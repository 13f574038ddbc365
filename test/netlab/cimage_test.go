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

var cimage binBuild

// buildCImage builds the containers/image driver once per test binary (the
// Go build cache keeps it across runs); TestMain removes it.
func buildCImage(t *testing.T) string {
	return cimage.get(t, "cimage", "./test/netlab/cimage", []string{"CGO_ENABLED=0"}, "-tags", cimageTags)
}

// binBuild builds one command of the module once per test binary, into a
// temporary directory that TestMain removes when every test has ended (a
// test's own Cleanup would remove it under the tests still running).
type binBuild struct {
	once sync.Once
	bin  string
	err  error
}

// get builds pkg as name (go build with args, env added) on first use and
// returns the binary.
func (b *binBuild) get(t *testing.T, name, pkg string, env []string, args ...string) string {
	t.Helper()
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", netlab.Prefix+name+"-")
		if err != nil {
			b.err = err
			return
		}
		b.bin = filepath.Join(dir, name)
		cmd := exec.Command("go", append(append([]string{"build"}, args...), "-o", b.bin, pkg)...)
		cmd.Dir = filepath.Join("..", "..")
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("building %s: %v\n%s", pkg, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.bin
}

// remove removes the built binary's directory, if any.
func (b *binBuild) remove() {
	if b.bin != "" {
		os.RemoveAll(filepath.Dir(b.bin))
	}
}
