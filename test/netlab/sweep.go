package netlab

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Sweep removes namespaces, /etc/netns links and temporary directories that
// an earlier netlab run left behind: every pp-<pid>-... entry whose pid is
// no longer alive. Live runs (parallel test binaries) are left alone.
func Sweep(ctx context.Context) error {
	return sweep(ctx, Prefix)
}

func sweep(ctx context.Context, prefix string) error {
	var errs []error
	seen := map[string]bool{}
	for _, dir := range []string{netnsRunDir, netnsEtcDir} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if staleWith(prefix, e.Name()) && !seen[e.Name()] {
				seen[e.Name()] = true
				if err := deleteNetns(ctx, e.Name()); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	tmp := os.TempDir()
	if entries, err := os.ReadDir(tmp); err == nil {
		for _, e := range entries {
			if e.IsDir() && staleWith(prefix, e.Name()) {
				if err := os.RemoveAll(filepath.Join(tmp, e.Name())); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// staleWith reports whether name is a name of the tier with prefix whose
// creating process is gone.
func staleWith(prefix, name string) bool {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return false
	}
	pidText, _, ok := strings.Cut(rest, "-")
	if !ok {
		return false
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return false
	}
	err = syscall.Kill(pid, 0)
	return errors.Is(err, syscall.ESRCH)
}
