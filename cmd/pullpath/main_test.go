package main

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain runs main itself when the test re-executes its own binary as
// pullpath (PULLPATH_TEST_MAIN=1), so a test can send it real signals.
func TestMain(m *testing.M) {
	if os.Getenv("PULLPATH_TEST_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// TestInterruptedProbe probes a loopback server that accepts connections
// and never answers, sends SIGINT once the probe waits on it, and checks
// that the run says it was interrupted, prints the partial trace, blames
// no registry, and exits 130.
func TestInterruptedProbe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c // held open, never read or written
		}
	}()
	root := t.TempDir()
	cmd := exec.Command(os.Args[0], "probe", "--root", root, "--timeout", "60s", "--deadline", "2m",
		ln.Addr().String()+"/team/app:1")
	cmd.Env = append(os.Environ(), "PULLPATH_TEST_MAIN=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-accepted:
		defer c.Close()
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("the probe never connected; stderr %q", stderr.String())
	}
	time.Sleep(200 * time.Millisecond) // let the TLS handshake start waiting
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("the probe did not stop within 30 s of SIGINT; stdout %q", stdout.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit code after SIGINT = %d, want 130; stderr %q", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"unknown.interrupted", "✔ route", "interrupt signal received"} {
		if !strings.Contains(out, want) {
			t.Errorf("output after SIGINT lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "registry.protocol") || !strings.Contains(out, "layer unknown") {
		t.Errorf("output after SIGINT blames a step of the pull path:\n%s", out)
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr after SIGINT = %q, want it to say interrupted", stderr.String())
	}
	t.Logf("stopped %v after SIGINT", time.Since(start).Round(time.Millisecond))
}
