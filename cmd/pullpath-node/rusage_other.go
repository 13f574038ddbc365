//go:build !linux

package main

import (
	"fmt"
	"io"
	"runtime"
)

// printRusage says that the peak resident set is reported on Linux only
// (getrusage's ru_maxrss is KiB there, bytes on darwin, absent on Windows).
func printRusage(w io.Writer) {
	fmt.Fprintf(w, "pullpath-node: rusage: not reported on %s\n", runtime.GOOS)
}
