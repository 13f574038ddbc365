package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunMeasuresTheChild runs a child that allocates and touches 64 MiB:
// the kernel's peak and the sampled RssAnon must both see it.
func TestRunMeasuresTheChild(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("rsswatch test skipped: no python3 to allocate in a child")
	}
	res, err := run([]string{"python3", "-c", "import time; b = bytearray(64 << 20); time.sleep(0.3)"}, 2e6)
	if err != nil {
		t.Fatal(err)
	}
	if res.Exit != 0 || res.PeakKiB < 64<<10 || res.MaxAnon < 60<<10 || res.Samples == 0 {
		t.Errorf("run = exit %d, peak %d KiB, max anon %d KiB, %d samples; want exit 0, both ≥ 64 MiB", res.Exit, res.PeakKiB, res.MaxAnon, res.Samples)
	}
	if res.AtPeak.RSS < res.AtPeak.Anon+res.AtPeak.File {
		t.Errorf("at the sampled peak VmRSS %d < RssAnon %d + RssFile %d", res.AtPeak.RSS, res.AtPeak.Anon, res.AtPeak.File)
	}
}

func TestRunKeepsTheExitCode(t *testing.T) {
	res, err := run([]string{"sh", "-c", "exit 3"}, 2e6)
	if err != nil || res.Exit != 3 {
		t.Fatalf("run(exit 3) = %+v, %v; want exit 3", res, err)
	}
}

// TestEvict writes a file (cached as written), drops it and checks mincore
// says so.
func TestEvict(t *testing.T) {
	f := filepath.Join(t.TempDir(), "blob")
	if err := os.WriteFile(f, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	before, err := residency(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := evictFile(f); err != nil {
		t.Fatal(err)
	}
	after, err := residency(f)
	if err != nil {
		t.Fatal(err)
	}
	n := (1 << 20) / os.Getpagesize()
	all, none := fmt.Sprintf("%d/%d ", n, n), fmt.Sprintf("0/%d ", n)
	if !strings.HasPrefix(before, all) || !strings.HasPrefix(after, none) {
		t.Errorf("residency before %q, after evict %q; want %q, then %q", before, after, all, none)
	}
}
