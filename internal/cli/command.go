package cli

import "io"

// UsageErrorf is an error that exits with ExitUsage, for the commands that
// live outside this package.
func UsageErrorf(format string, args ...any) error { return usageErrorf(format, args...) }

// ExitWith returns an error that only sets the exit code (nil for ExitOK),
// for the commands that live outside this package.
func ExitWith(code int) error { return exitCode(code) }

// IsTerminal reports whether w is a terminal (colour and progress go only
// to terminals).
func IsTerminal(w io.Writer) bool { return isTerminal(w) }
