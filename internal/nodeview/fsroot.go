package nodeview

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// maxSymlinks is how many symlinks one lookup follows, as Linux's ELOOP limit.
const maxSymlinks = 40

var errSymlinkLoop = errors.New("too many levels of symbolic links")

// inRoot maps a node path to the path on this machine as if root were the
// node's /: every symlink met on the way is followed with chroot semantics
// (an absolute target restarts at root, ".." stops at root). The last
// component need not exist; a missing middle component is returned as is
// so that the caller's open reports fs.ErrNotExist. With root "/" the result
// names the same file the operating system would open.
func inRoot(root, p string) (string, error) {
	if root == "" {
		root = "/"
	}
	pending := splitPath(p)
	var done []string // resolved components below root
	links := 0
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case ".":
			continue
		case "..":
			if len(done) > 0 {
				done = done[:len(done)-1]
			}
			continue
		}
		cand := filepath.Join(root, filepath.Join(done...), c)
		fi, err := os.Lstat(cand)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				// Keep the rest literally; the open that follows fails
				// with the missing file's name.
				done = append(done, c)
				continue
			}
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = append(done, c)
			continue
		}
		links++
		if links > maxSymlinks {
			return "", &fs.PathError{Op: "resolve", Path: p, Err: errSymlinkLoop}
		}
		target, err := os.Readlink(cand)
		if err != nil {
			return "", err
		}
		if path.IsAbs(target) || filepath.IsAbs(target) {
			done = nil
		}
		pending = append(splitPath(target), pending...)
	}
	return filepath.Join(root, filepath.Join(done...)), nil
}

func splitPath(p string) []string {
	var out []string
	for _, c := range strings.Split(filepath.ToSlash(p), "/") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

// readInRoot reads a node path under root.
func readInRoot(root, p string) ([]byte, string, error) {
	hp, err := inRoot(root, p)
	if err != nil {
		return nil, filepath.Join(root, p), err
	}
	b, err := os.ReadFile(hp)
	return b, hp, err
}

// ReadInRoot reads the node path p under root, following symlinks with
// chroot semantics (see inRoot). It returns the data and the path read on
// this machine.
func ReadInRoot(root, p string) ([]byte, string, error) { return readInRoot(root, p) }

// InRoot maps the node path p to the path on this machine under root.
func InRoot(root, p string) (string, error) { return inRoot(root, p) }
