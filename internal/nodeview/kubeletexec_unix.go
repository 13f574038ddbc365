//go:build unix

package nodeview

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"syscall"
)

// chrootInto makes cmd run with root as its / and / as its working
// directory.
func chrootInto(cmd *exec.Cmd, root string) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root}
	cmd.Dir = "/"
	return nil
}

// CheckProviderOwner reports why the provider binary <binDir>/<name> under
// root is not one to run unasked: it and every directory above it up to
// root must be owned by root and writable by nobody else (ssh's
// StrictModes test). A directory copied off a node by a user, or a support
// bundle, fails it, so that reading it never runs what it holds.
func CheckProviderOwner(root, binDir, name string) error {
	nodePath := path.Join(binDir, name)
	for p := nodePath; ; p = path.Dir(p) {
		hp, err := inRoot(root, p)
		if err != nil {
			return err
		}
		fi, err := os.Stat(hp)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // RunProvider says what is missing
		}
		if err != nil {
			return fmt.Errorf("checking %s: %w", p, err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || st.Uid != 0 || fi.Mode().Perm()&0o022 != 0 {
			return fmt.Errorf("%s (%s) is not owned by root or is writable by group or others", p, fi.Mode().Perm())
		}
		if p == "/" || p == "." {
			return nil
		}
	}
}
