// Command starttime measures how long binaries take to start: each command
// runs -n times (after one warm-up run, so the page cache holds the
// binary), interleaved so that load on the machine falls on all of them
// alike; it prints the median wall time and the median CPU time
// (user+sys) of each, its ratio to the first command (the baseline, a
// hello-world Go binary), and, with -inittrace, the number of package
// inits and their total ms from GODEBUG=inittrace=1 (median of 5 runs).
//
//	starttime -n 50 -inittrace -- hello=/tmp/hello version='/tmp/pullpath-node version'
//
// A command is label=argv, argv split on spaces.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

type command struct {
	label      string
	argv       []string
	wall, cpu  []time.Duration
	inits      int
	initMillis float64
}

func main() {
	n := flag.Int("n", 50, "runs of each command")
	trace := flag.Bool("inittrace", false, "also count inits with GODEBUG=inittrace=1")
	flag.Parse()
	var cmds []*command
	for _, a := range flag.Args() {
		label, argv, ok := strings.Cut(a, "=")
		if !ok || strings.TrimSpace(argv) == "" {
			fmt.Fprintf(os.Stderr, "starttime: %q: want label=command\n", a)
			os.Exit(2)
		}
		cmds = append(cmds, &command{label: label, argv: strings.Fields(argv)})
	}
	if len(cmds) < 2 {
		fmt.Fprintln(os.Stderr, "starttime: want a baseline and at least one command")
		os.Exit(2)
	}
	for _, c := range cmds {
		run(c.argv, nil) // warm-up
	}
	for range *n {
		for _, c := range cmds {
			w, u := run(c.argv, nil)
			c.wall, c.cpu = append(c.wall, w), append(c.cpu, u)
		}
	}
	if *trace {
		for _, c := range cmds {
			c.inits, c.initMillis = inittrace(c.argv)
		}
	}
	base := cmds[0]
	wl := len("command")
	for _, c := range cmds {
		wl = max(wl, len(c.label))
	}
	fmt.Printf("%-*s %10s %8s %10s %8s", wl, "command", "wall", "ratio", "cpu", "ratio")
	if *trace {
		fmt.Printf(" %6s %9s", "inits", "init ms")
	}
	fmt.Printf("   (medians of %d runs)\n", *n)
	for _, c := range cmds {
		w, u := median(c.wall), median(c.cpu)
		fmt.Printf("%-*s %8.2fms %7.2fx %8.2fms %7.2fx", wl, c.label, ms(w), ms(w)/ms(median(base.wall)), ms(u), ms(u)/ms(median(base.cpu)))
		if *trace {
			fmt.Printf(" %6d %9.2f", c.inits, c.initMillis)
		}
		fmt.Println()
	}
}

// run runs argv once, its output discarded, and returns the wall time from
// start to exit and its CPU time. A non-zero exit is fine: a fast fault
// exits 1.
func run(argv, env []string) (wall, cpu time.Duration) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	start := time.Now()
	_ = cmd.Run()
	wall = time.Since(start)
	if cmd.ProcessState != nil {
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	return wall, cpu
}

// inittrace is the median over 5 runs of the inits GODEBUG=inittrace=1
// reports ("init PKG @T ms, D ms clock, ..."): their number and the sum of
// their clock ms.
func inittrace(argv []string) (int, float64) {
	type res struct {
		n  int
		ms float64
	}
	var rs []res
	for range 5 {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		var errb bytes.Buffer
		cmd.Stderr = &errb
		_ = cmd.Run()
		var r res
		s := bufio.NewScanner(&errb)
		for s.Scan() {
			f := strings.Fields(s.Text())
			if len(f) >= 6 && f[0] == "init" && f[5] == "ms" {
				v, _ := strconv.ParseFloat(f[4], 64)
				r.n++
				r.ms += v
			}
		}
		rs = append(rs, r)
	}
	slices.SortFunc(rs, func(a, b res) int { return int((a.ms - b.ms) * 1e6) })
	return rs[2].n, rs[2].ms
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
