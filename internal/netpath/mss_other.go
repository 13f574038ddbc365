//go:build !linux

package netpath

import (
	"fmt"
	"runtime"
	"syscall"
)

// MSSSupported reports whether ConnectSmallMSS can set TCP_MAXSEG here. Only
// the Linux build sets it and is tested: macOS and the BSDs have a
// TCP_MAXSEG whose effect on the SYN this project has not tested, and
// Windows has no per-socket MSS option. Elsewhere the path-MTU test is
// skipped and the trace says so.
const MSSSupported = false

func mssControl(int) func(network, address string, c syscall.RawConn) error {
	return func(string, string, syscall.RawConn) error {
		return fmt.Errorf("setting TCP_MAXSEG before connect is not supported on %s", runtime.GOOS)
	}
}
