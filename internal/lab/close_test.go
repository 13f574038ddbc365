package lab

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestSecondLab starts a second lab on the default addresses while the
// shared one runs: its ports fall back to random ones, references carry
// them, and it serves a full pull.
func TestSecondLab(t *testing.T) {
	l, err := Start(t.Context(), Options{})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer l.Close()
	if l.HTTPSPort == shared.HTTPSPort || l.DNSPort == shared.DNSPort {
		t.Fatalf("second lab ports %d/%d, want other than the shared lab's %d/%d", l.HTTPSPort, l.DNSPort, shared.HTTPSPort, shared.DNSPort)
	}
	s, _ := l.Scenario("healthy")
	if !strings.HasPrefix(s.Image, "registry.lab.test:") {
		t.Errorf("healthy image %q does not carry the fallback port", s.Image)
	}
	if _, err := pull(t, l.Transport(), s); err != nil {
		t.Errorf("pull(%s) from the second lab: %v", s.Image, err)
	}
}

// TestClose checks Close releases every listener (the same addresses and
// ports bind again), ends every goroutine the lab started, removes its
// directory, and is idempotent.
func TestClose(t *testing.T) {
	addrs := Addrs{
		Registry: netip.MustParseAddr("127.0.12.1"), Auth: netip.MustParseAddr("127.0.12.2"),
		Blob: netip.MustParseAddr("127.0.12.3"), Mirror: netip.MustParseAddr("127.0.12.4"),
		Dead: netip.MustParseAddr("127.0.12.99"), DNS: netip.MustParseAddr("127.0.63.1"),
		DNS2: netip.MustParseAddr("127.0.63.2"), DeadDNS: netip.MustParseAddr("127.0.63.99"),
	}
	before := goroutines()
	l, err := Start(t.Context(), Options{Addrs: addrs})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	s, _ := l.Scenario("healthy")
	if _, err := pull(t, l.Transport(), s); err != nil {
		t.Fatalf("pull(%s): %v", s.Image, err)
	}
	dir := l.Dir
	start := time.Now()
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	t.Logf("Close took %v", time.Since(start))
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lab directory %s after Close: %v, want it removed", dir, err)
	}
	for _, a := range []netip.Addr{addrs.Registry, addrs.Auth, addrs.Blob, addrs.Mirror} {
		ln, err := net.Listen("tcp", netip.AddrPortFrom(a, uint16(l.HTTPSPort)).String())
		if err != nil {
			t.Errorf("binding %s:%d after Close: %v", a, l.HTTPSPort, err)
			continue
		}
		ln.Close()
	}
	for _, a := range []netip.Addr{addrs.DNS, addrs.DNS2} {
		pc, err := net.ListenPacket("udp", netip.AddrPortFrom(a, uint16(l.DNSPort)).String())
		if err != nil {
			t.Errorf("binding udp %s:%d after Close: %v", a, l.DNSPort, err)
		} else {
			pc.Close()
		}
		ln, err := net.Listen("tcp", netip.AddrPortFrom(a, uint16(l.DNSPort)).String())
		if err != nil {
			t.Errorf("binding tcp %s:%d after Close: %v", a, l.DNSPort, err)
		} else {
			ln.Close()
		}
	}
	// Goroutines wind down asynchronously (closed connections' readers);
	// give them a bounded while, then report the ones started since Start.
	var left []string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		left = left[:0]
		for id, stack := range goroutines() {
			// distribution's App starts a go-events Broadcaster for
			// notifications that App.Shutdown never closes (v3.1.2): one
			// idle goroutine per lab, the only one tolerated here.
			if _, ok := before[id]; !ok && !strings.Contains(stack, "TestClose") &&
				!strings.Contains(stack, "go-events.(*Broadcaster).run") {
				left = append(left, stack)
			}
		}
		if len(left) == 0 {
			return
		}
	}
	t.Errorf("%d goroutines started by the lab outlive Close:\n%s", len(left), strings.Join(left, "\n\n"))
}

// goroutines returns every goroutine's stack by its id line.
func goroutines() map[string]string {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	out := map[string]string{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		id, _, _ := strings.Cut(g, " [")
		out[id] = g
	}
	return out
}

// BenchmarkStart measures a lab's start (certificates, listeners, DNS,
// registry, push of every image) and close, with the default image sizes.
// It runs beside the shared lab, so it uses the fallback ports.
func BenchmarkStart(b *testing.B) {
	for b.Loop() {
		l, err := Start(b.Context(), Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
