// Command shaceiling measures the single-core SHA-256 throughput of this
// machine with Go's crypto/sha256 (what pullpath verifies blobs with), in
// 256 KiB writes like the probe's copy buffer. It prints MB/s (10^6 bytes
// per second), the best of --runs runs: the ceiling for one verified stream.
package main

import (
	"crypto/rand"
	"crypto/sha256"
	"flag"
	"fmt"
	"runtime"
	"time"
)

func main() {
	size := flag.Int64("bytes", 1<<30, "bytes to hash per run")
	runs := flag.Int("runs", 3, "runs; the best is printed")
	flag.Parse()
	runtime.GOMAXPROCS(1)
	buf := make([]byte, 256<<10)
	_, _ = rand.Read(buf)
	best := 0.0
	for range *runs {
		h := sha256.New()
		start := time.Now()
		for n := int64(0); n < *size; n += int64(len(buf)) {
			h.Write(buf)
		}
		_ = h.Sum(nil)
		if mbs := float64(*size) / 1e6 / time.Since(start).Seconds(); mbs > best {
			best = mbs
		}
	}
	fmt.Printf("%.0f\n", best)
}
