package probe_test

import (
	"context"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/probe"
)

// BenchmarkProbeFullPull is the probe's hot path end to end: a fresh full
// pull (token, manifest, 307 to the blob host, every blob streamed through
// SHA-256) of a 4 × 8 MiB image from the embedded lab, server included. The
// MB/s figure is bytes verified per second; bench/run.sh measures the same
// against the peers with a 1 GiB image in separate processes.
func BenchmarkProbeFullPull(b *testing.B) {
	const layers, layerSize = 4, 8 << 20
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	l, err := lab.Start(ctx, lab.Options{Layers: layers, LayerSize: layerSize})
	if err != nil {
		b.Fatalf("starting the lab: %v", err)
	}
	defer l.Close()
	sc, ok := l.Scenario("healthy")
	if !ok {
		b.Fatal("the lab has no healthy scenario")
	}
	for _, jobs := range []int{1, 4} {
		b.Run(map[int]string{1: "jobs=1", 4: "jobs=4"}[jobs], func(b *testing.B) {
			var bytes int64
			for b.Loop() {
				rep, err := probe.Run(ctx, sc.Image, probe.Options{Root: sc.Root, Platform: sc.Platform, DNSPort: l.DNSPort, Jobs: jobs})
				if err != nil {
					b.Fatal(err)
				}
				if !rep.Verdict.OK {
					b.Fatalf("verdict: %+v", rep.Verdict)
				}
				bytes = 0
				for _, bl := range rep.Blobs {
					if !bl.Verified {
						b.Fatalf("blob %s not verified", bl.Digest)
					}
					bytes += bl.Bytes
				}
			}
			b.SetBytes(bytes)
		})
	}
}
