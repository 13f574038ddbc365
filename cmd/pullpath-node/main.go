// Command pullpath-node is the slim pullpath for the nodes: the probe Jobs
// of `pullpath diagnose --probe` and the node agent. It has probe, explain
// and version, and links no Kubernetes client, no lab and no registry
// server.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/pullpath/pullpath/internal/cli"
	"github.com/pullpath/pullpath/internal/cli/monitorcmd"
)

// features are the node binary's: the monitor agent, and no CRI client and
// no Kubernetes client (probe --runtime-pull is hidden, probe
// --service-account needs --service-account-token-file).
var features = cli.Features{Commands: []cli.Command{monitorcmd.NewCmdMonitor}}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The node agent: monitor links no client-go (internal/depcheck checks
	// what this binary links); `monitor status` is the full binary's.
	// The first Ctrl-C cancels the run, which prints its partial report and
	// exits 130; after it, a second one kills the process at once.
	go func() { <-ctx.Done(); stop() }()
	code := cli.RunWith(ctx, cli.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, os.Args, features)
	stop()
	if os.Getenv(envRusage) == "1" {
		printRusage(os.Stderr)
	}
	os.Exit(code)
}
