//go:build linux

package netpath

import (
	"os"
	"syscall"
)

// MSSSupported reports whether ConnectSmallMSS can set TCP_MAXSEG here.
const MSSSupported = true

// mssControl sets TCP_MAXSEG on the socket before it connects (net.Dialer's
// Control runs between socket(2) and connect(2)).
func mssControl(mss int) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG, mss)
		}); err != nil {
			return err
		}
		if serr != nil {
			return os.NewSyscallError("setsockopt TCP_MAXSEG", serr)
		}
		return nil
	}
}
