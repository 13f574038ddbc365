// Command monitorcost measures what the monitor agent costs on a node: it
// starts the embedded lab on loopback, runs a built agent binary (e.g.
// pullpath-node) against it with a short interval in HEAD mode, samples the
// agent's /proc status (VmRSS, RssAnon, RssFile) every 50 ms, and prints the
// idle RSS (between probes), the peak RSS, and the CPU time per probe
// (utime+stime over pullpath_probes_total).
//
//	go build -o /tmp/pullpath-node ./cmd/pullpath-node
//	go run ./bench/monitorcost -bin /tmp/pullpath-node -for 2m -interval 2s
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/lab"
)

func main() {
	bin := flag.String("bin", "", "the agent binary (pullpath-node or pullpath)")
	dur := flag.Duration("for", time.Minute, "how long to run the agent")
	interval := flag.Duration("interval", 2*time.Second, "the agent's probe interval")
	blobs := flag.String("blobs", "head", "the agent's blob mode")
	gz := flag.Bool("gzip", true, "the scrapes accept gzip, as Prometheus's do")
	scrape := flag.Duration("scrape", 0, "scrape /metrics this often, with Accept-Encoding: gzip as Prometheus does (0: only once at the end)")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "monitorcost: -bin is required")
		os.Exit(2)
	}
	ctx := context.Background()
	l, err := lab.Start(ctx, lab.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "monitorcost: starting the lab:", err)
		os.Exit(1)
	}
	defer l.Close()
	sc, _ := l.Scenario("healthy")
	dir, _ := os.MkdirTemp("", "monitorcost")
	defer os.RemoveAll(dir)
	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("targets:\n  - {name: app, image: %s}\ninterval: %s\nblobs: %s\nfull_interval: -1s\n", sc.Image, *interval, *blobs)), 0o600)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(*bin, "monitor", "--config", cfg, "--root", sc.Root, "--listen", addr,
		"--dns-port", strconv.Itoa(l.DNSPort), "--node", "bench", "--pool", "bench", "--node-condition=false")
	cmd.Env = append(os.Environ(), "KUBERNETES_SERVICE_HOST=")
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "monitorcost:", err)
		os.Exit(1)
	}
	defer cmd.Process.Kill()
	pid := cmd.Process.Pid
	if *scrape > 0 {
		go scrapeLoop("http://"+addr+"/metrics", *scrape, *gz)
	}
	var peak, idleMax, idleMin, anonIdle, fileIdle int64
	idleMin = 1 << 62
	end := time.Now().Add(*dur)
	warm := time.Now().Add(*interval * 3) // after a few probes
	for time.Now().Before(end) {
		rss, anon, file := status(pid)
		if rss > peak {
			peak = rss
		}
		// Idle: half an interval after a probe started, sampled mid-gap.
		phase := time.Since(warm) % *interval
		if time.Now().After(warm) && phase > *interval*6/10 && phase < *interval*9/10 {
			if rss > idleMax {
				idleMax, anonIdle, fileIdle = rss, anon, file
			}
			if rss < idleMin {
				idleMin = rss
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	probes := scrapeProbes("http://" + addr + "/metrics")
	cpu := cpuSeconds(pid)
	fmt.Printf("agent %s, %s mode, interval %s, ran %s\n", filepath.Base(*bin), *blobs, *interval, *dur)
	fmt.Printf("probes %d, CPU %.3f s in all, %.1f ms per probe (incl. idle time between probes)\n", probes, cpu, 1000*cpu/float64(max(probes, 1)))
	fmt.Printf("RSS idle %.1f–%.1f MiB (RssAnon %.1f, RssFile %.1f at the max), peak %.1f MiB\n",
		mib(idleMin), mib(idleMax), mib(anonIdle), mib(fileIdle), mib(peak))
}

func mib(kb int64) float64 { return float64(kb) / 1024 }

func status(pid int) (rss, anon, file int64) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fs := strings.Fields(s.Text())
		if len(fs) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(fs[1], 10, 64)
		switch fs[0] {
		case "VmRSS:":
			rss = v
		case "RssAnon:":
			anon = v
		case "RssFile:":
			file = v
		}
	}
	return
}

func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	fs := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.ParseFloat(fs[11], 64)
	st, _ := strconv.ParseFloat(fs[12], 64)
	return (ut + st) / 100 // USER_HZ
}

func scrapeProbes(url string) int {
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	n := 0.0
	s := bufio.NewScanner(resp.Body)
	for s.Scan() {
		line := s.Text()
		if strings.HasPrefix(line, "pullpath_probes_total{") {
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			n += v
		}
	}
	return int(n)
}

// scrapeLoop fetches url every d as a Prometheus server does (gzip
// accepted), so the agent's exposition path is part of what is measured.
func scrapeLoop(url string, d time.Duration, gz bool) {
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableCompression: true}}
	for range time.Tick(d) {
		req, _ := http.NewRequest("GET", url, nil)
		if gz {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.4,*/*;q=0.1")
		if resp, err := c.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
}
