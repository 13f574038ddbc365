package cli

import (
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY returns the terminal side of a new pseudo-terminal.
func openPTY(t *testing.T) *os.File {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal (/dev/ptmx: %v): colour on a TTY untested", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlocking the pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("naming the pty: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("opening the pty: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestColorOnlyOnTTYWithoutNoColor: colour on a terminal, not with
// --no-color, not with NO_COLOR set, not on a pipe.
func TestColorOnlyOnTTYWithoutNoColor(t *testing.T) {
	tty := openPTY(t)
	t.Setenv("NO_COLOR", "")
	if !useColor(tty, false) {
		t.Error("useColor(tty) = false, want colour on a terminal")
	}
	if useColor(tty, true) {
		t.Error("useColor(tty, --no-color) = true")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if useColor(w, false) {
		t.Error("useColor(pipe) = true")
	}
	t.Setenv("NO_COLOR", "1")
	if useColor(tty, false) {
		t.Error("useColor(tty) with NO_COLOR=1 = true")
	}
}
