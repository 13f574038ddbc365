// Package clitest holds helpers for the tests of pullpath's commands.
package clitest

import (
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// PTY opens a new pseudo-terminal and returns its controlling side (read
// what a command wrote) and its terminal side (give it to the command as
// stdout). It skips the test, saying why, when the machine has none.
func PTY(t testing.TB) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("SKIPPED: no pseudo-terminal (/dev/ptmx: %v): colour on a TTY untested", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("SKIPPED: unlocking the pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("SKIPPED: naming the pty: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("SKIPPED: opening the pty: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}
