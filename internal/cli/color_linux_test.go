package cli

import (
	"os"
	"testing"

	"github.com/pullpath/pullpath/internal/cli/clitest"
)

// openPTY returns the terminal side of a new pseudo-terminal.
func openPTY(t *testing.T) *os.File {
	t.Helper()
	_, tty := clitest.PTY(t)
	return tty
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
