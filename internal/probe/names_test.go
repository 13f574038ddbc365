package probe

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestCheckHostname(t *testing.T) {
	long := strings.Repeat("a", 64)
	tests := []struct {
		host string
		ok   bool
	}{
		{"registry.example", true},
		{"registry.example:5000", true},
		{"my_reg.example", true},
		{"127.0.0.1:5000", true},
		{"[::1]:5000", true},
		{"localhost", true},
		{strings.Repeat("a", 63) + ".example", true},
		{long + ".example", false},
		{"-bad.example", false},
		{"bad-.example", false},
		{strings.Repeat("abcdefgh.", 30) + "example", false},
	}
	for _, tt := range tests {
		if err := checkHostname(tt.host); (err == nil) != tt.ok {
			t.Errorf("checkHostname(%q) = %v, want ok %v", tt.host, err, tt.ok)
		}
	}
}

// TestInvalidHostnameIsReference: a registry name with a label past 63
// bytes is config.reference, owner app, and no resolver is asked.
func TestInvalidHostnameIsReference(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	var queries atomic.Int32
	go func() {
		buf := make([]byte, 512)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			queries.Add(1)
		}
	}()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/resolv.conf"), []byte("nameserver 127.0.0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(pc.LocalAddr().(*net.UDPAddr).AddrPort().String()[len("127.0.0.1:"):])
	for _, image := range []string{strings.Repeat("a", 64) + ".example/team/app:1", "-bad.example/team/app:1"} {
		rep, err := Run(context.Background(), image, Options{Root: root, DNSPort: port, Timeout: time.Second, Deadline: 10 * time.Second})
		if err != nil {
			t.Fatalf("Run(%s) error: %v", image, err)
		}
		if v := rep.Verdict; v.Cause != "config.reference" || v.Owner != "app" {
			t.Errorf("Run(%s) = %s owner %s (%s), want config.reference owner app", image, v.Cause, v.Owner, v.Summary)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if n := queries.Load(); n != 0 {
		t.Errorf("the resolver was asked %d queries for an invalid name, want none", n)
	}
}

// TestWarningsSayTheirCodeOnce: a node-view problem (here: no trust store
// under the root, and a hosts file line that cannot be parsed) becomes a
// warning whose message does not repeat its code.
func TestWarningsSayTheirCodeOnce(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/resolv.conf"), []byte("nameserver 127.0.0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), "127.0.0.1:1/team/app:1", Options{Root: root, Timeout: time.Second, Deadline: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, w := range rep.Warnings {
		if strings.HasPrefix(w.Code, "config.") {
			seen++
		}
		if strings.Contains(w.Message, w.Code+":") {
			t.Errorf("warning %s message repeats its code: %q", w.Code, w.Message)
		}
	}
	if seen == 0 {
		t.Fatalf("no config.* warning for a root without a trust store: %+v", rep.Warnings)
	}
}
