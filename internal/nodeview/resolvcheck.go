package nodeview

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"github.com/pullpath/pullpath/internal/verdict"
)

// noNameserver is the config.resolv-conf error of a resolv.conf at path
// that exists but names no usable nameserver: empty, binary, only other
// keywords, or nameserver lines that hold no IP address. All of them leave
// the runtime's resolver asking the local host, and all say so the same
// way.
func noNameserver(path string, rc ResolvConf, binary bool) *verdict.Error {
	why := "it has no nameserver line"
	switch {
	case binary:
		why = "it is not a text file"
	case rc.NameserverLines == 1:
		why = "its nameserver line holds no IP address"
	case rc.NameserverLines > 1:
		why = fmt.Sprintf("none of its %d nameserver lines holds an IP address", rc.NameserverLines)
	}
	return verdict.Errorf(verdict.CodeConfigResolvConf, verdict.RoleNone, "",
		"%s names no usable nameserver (%s), so the runtime's resolver falls back to the local host (127.0.0.1 and ::1)", path, why)
}

// isBinary reports whether data is not text: a NUL byte or invalid UTF-8.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data)
}
