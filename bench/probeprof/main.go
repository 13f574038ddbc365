// Command probeprof runs one full probe (probe.Run, as `pullpath probe
// --blobs full` does) with a CPU profile, for finding where a pull's time
// goes on the client side alone (the lab runs in another process, see
// bench/labd):
//
//	go run ./bench/probeprof --root LABDIR/roots/healthy --cpuprofile cpu.out registry.lab.test/team/app:1.0
//	go tool pprof -top cpu.out
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/pullpath/pullpath/internal/probe"
)

func main() {
	root := flag.String("root", "/", "node root")
	jobs := flag.Int("jobs", 4, "parallel blob downloads")
	cpu := flag.String("cpuprofile", "", "write a CPU profile here")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: probeprof [flags] IMAGE")
		os.Exit(2)
	}
	if *cpu != "" {
		f, err := os.Create(*cpu)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	rep, err := probe.Run(context.Background(), flag.Arg(0), probe.Options{Root: *root, Jobs: *jobs})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var n int64
	for _, b := range rep.Blobs {
		n += b.Bytes
	}
	d := time.Since(start)
	fmt.Printf("%s: %d bytes in %v (%.0f MB/s)\n", rep.Verdict.Summary, n, d.Round(time.Millisecond), float64(n)/1e6/d.Seconds())
}
