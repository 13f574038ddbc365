package netpath

import (
	"context"
	"net/netip"
	"time"
)

// SmallMSS is the maximum segment size of the path-MTU test: 536 bytes, the
// IPv4 default MSS (RFC 1122), so every segment of the answer fits in a
// 576-byte packet and passes any tunnel a registry sits behind.
const SmallMSS = 536

// ConnectSmallMSS is Connect with the socket's TCP_MAXSEG set to mss before
// connect(2). The SYN then advertises mss, so the server sends segments of at
// most mss bytes: where large packets vanish on the path (a tunnel with a
// smaller MTU and ICMP fragmentation-needed filtered, a path-MTU black hole),
// this connection carries what a default one cannot.
//
// It needs the TCP_MAXSEG socket option, which Linux has (MSSSupported);
// elsewhere the connect fails at once with an error saying so, and the
// caller skips the test.
func ConnectSmallMSS(ctx context.Context, addr netip.AddrPort, timeout time.Duration, mss int) ConnResult {
	if mss <= 0 {
		mss = SmallMSS
	}
	return connect(ctx, addr, timeout, mss)
}
