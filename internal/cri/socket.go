package cri

import (
	"errors"
	"fmt"
	"net"
	"os"
	"time"
)

// checkSocket fails at once, naming the path and the OS error, when path
// is not a unix socket something listens on: missing, not a socket, no
// permission, or a stale socket file nobody accepts on (connection
// refused). gRPC would otherwise retry such a socket until the dial
// timeout, and say only "context deadline exceeded".
func checkSocket(path string, timeout time.Duration) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("dialing CRI socket: %w", err)
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("dialing CRI socket %s: not a unix socket (%s)", path, fi.Mode().Type())
	}
	c, err := net.DialTimeout("unix", path, timeout)
	if err != nil {
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Err != nil {
			err = oe.Err
		}
		return fmt.Errorf("dialing CRI socket %s: %w", path, err)
	}
	return c.Close()
}
