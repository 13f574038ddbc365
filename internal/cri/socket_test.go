package cri

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDialFailsAtOnce: a missing socket, a file that is not a socket and a
// stale socket nobody listens on fail at once (well inside the 5 s dial
// timeout), naming the path and the OS error.
func TestDialFailsAtOnce(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "stale.sock")
	ln, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	tests := []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "containerd.sock"), "no such file or directory"},
		{"not a socket", plain, "not a unix socket"},
		{"stale", stale, "connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := Dial(context.Background(), tt.path)
			took := time.Since(start)
			if err == nil || !strings.Contains(err.Error(), tt.path) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Dial(%s) error = %v, want the path and %q", tt.path, err, tt.want)
			}
			if took > 3*time.Second {
				t.Errorf("Dial(%s) took %v, want it to fail at once, not wait for the 5 s dial timeout", tt.path, took)
			}
		})
	}
}
