// Command rsswatch runs a command and reports its memory the way the kernel
// accounts it, for the benchmark harness (bench/run.sh):
//
//	rsswatch -o result.json -- CMD ARGS...   run CMD, write one JSON line
//	rsswatch -evict FILE...                  drop FILE's pages from the page cache
//	rsswatch -resident FILE...               print how much of FILE is cached
//
// The peak RSS is the kernel's own (getrusage ru_maxrss of the child, what
// /usr/bin/time prints). /proc/PID/status is sampled every -interval while
// the command runs: RssAnon (heap, stacks), RssFile (page-cache pages of the
// binary and libraries mapped into the process) and RssShmem, both at the
// sample with the largest VmRSS and as the largest of each.
//
// -evict fsyncs each file and asks the kernel to drop its cached pages
// (posix_fadvise POSIX_FADV_DONTNEED), so that the next exec reads the binary
// back from disk the way a node does after a pull, instead of finding the
// pages the linker just wrote. It touches only the named files, unlike
// /proc/sys/vm/drop_caches, which would disturb every process on the machine.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Result is the JSON line rsswatch writes.
type Result struct {
	Command  string  `json:"command"`
	Exit     int     `json:"exit"`
	WallS    float64 `json:"wallS"`
	UserS    float64 `json:"userS"`
	SysS     float64 `json:"sysS"`
	PeakKiB  int64   `json:"peakKiB"` // ru_maxrss
	Samples  int     `json:"samples"`
	AtPeak   Mem     `json:"atSampledPeak"`
	MaxAnon  int64   `json:"maxAnonKiB"`
	MaxFile  int64   `json:"maxFileKiB"`
	Resident string  `json:"binaryResidentBefore,omitempty"`
}

// Mem is one sample of /proc/PID/status, in KiB.
type Mem struct {
	RSS   int64 `json:"rssKiB"`
	Anon  int64 `json:"anonKiB"`
	File  int64 `json:"fileKiB"`
	Shmem int64 `json:"shmemKiB"`
}

func main() {
	out := flag.String("o", "", "write the JSON result to this file (default stderr)")
	interval := flag.Duration("interval", 2*time.Millisecond, "sampling interval of /proc/PID/status")
	evict := flag.Bool("evict", false, "drop the named files' pages from the page cache, then exit")
	resident := flag.Bool("resident", false, "print how much of each named file is in the page cache, then exit")
	flag.Parse()
	args := flag.Args()
	switch {
	case *evict || *resident:
		for _, f := range args {
			if *evict {
				if err := evictFile(f); err != nil {
					fatal(err)
				}
			}
			r, err := residency(f)
			if err != nil {
				fatal(err)
			}
			fmt.Printf("%s: %s resident\n", f, r)
		}
		return
	case len(args) == 0:
		fatal(errors.New("usage: rsswatch [-o FILE] -- CMD ARGS"))
	}
	res, err := run(args, *interval)
	if err != nil {
		fatal(err)
	}
	b, _ := json.Marshal(res)
	if *out == "" {
		fmt.Fprintln(os.Stderr, string(b))
	} else if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
		fatal(err)
	}
	os.Exit(res.Exit)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "rsswatch:", err)
	os.Exit(125)
}

func run(args []string, interval time.Duration) (*Result, error) {
	res := &Result{Command: strings.Join(args, " ")}
	if path, err := exec.LookPath(args[0]); err == nil {
		res.Resident, _ = residency(path)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			if m, ok := sample(status); ok {
				res.Samples++
				if m.RSS > res.AtPeak.RSS {
					res.AtPeak = m
				}
				res.MaxAnon = max(res.MaxAnon, m.Anon)
				res.MaxFile = max(res.MaxFile, m.File)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	err := cmd.Wait()
	res.WallS = time.Since(start).Seconds()
	close(done)
	<-sampled
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return nil, err
	}
	res.Exit = cmd.ProcessState.ExitCode()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.PeakKiB = ru.Maxrss
		res.UserS = time.Duration(ru.Utime.Nano()).Seconds()
		res.SysS = time.Duration(ru.Stime.Nano()).Seconds()
	}
	return res, nil
}

// sample reads VmRSS, RssAnon, RssFile and RssShmem from a status file. It
// is false once the process is gone (or a zombie, which has no VmRSS).
func sample(path string) (Mem, bool) {
	f, err := os.Open(path)
	if err != nil {
		return Mem{}, false
	}
	defer f.Close()
	var m Mem
	fields := map[string]*int64{"VmRSS:": &m.RSS, "RssAnon:": &m.Anon, "RssFile:": &m.File, "RssShmem:": &m.Shmem}
	seen := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 {
			if p, ok := fields[f[0]]; ok {
				*p, _ = strconv.ParseInt(f[1], 10, 64)
				seen = seen || f[0] == "VmRSS:"
			}
		}
	}
	return m, seen && m.RSS > 0
}

// evictFile writes back and drops path's pages from the page cache.
func evictFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", path, err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("fadvise %s: %w", path, err)
	}
	return nil
}

// residency says how many of path's pages are in the page cache (mincore).
func residency(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if st.Size() == 0 {
		return "0/0 pages", nil
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return "", fmt.Errorf("mmap %s: %w", path, err)
	}
	defer unix.Munmap(data)
	page := os.Getpagesize()
	vec := make([]byte, (len(data)+page-1)/page)
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&data[0])), uintptr(len(data)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		return "", fmt.Errorf("mincore %s: %w", path, errno)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return fmt.Sprintf("%d/%d pages (%.0f%%)", n, len(vec), 100*float64(n)/float64(len(vec))), nil
}
