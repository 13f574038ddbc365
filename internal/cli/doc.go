// Package cli holds pullpath's cobra commands, their flags, the choice of
// output format and the exit codes. Each command lives in its own file with a
// NewCmdX constructor and one options struct; only Run picks the exit code.
package cli
