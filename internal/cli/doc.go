// Package cli holds pullpath's cobra commands, their flags, the choice of
// output format and the exit codes. Each command lives in its own file with a
// NewCmdX constructor and one options struct; only Run picks the exit code.
//
// This package has the commands every pullpath binary has (probe, explain,
// version); the heavy ones (diagnose in clustercmd, demo and lab in labcmd)
// are added by the binaries that need them, so each binary links only what
// its commands use.
package cli
