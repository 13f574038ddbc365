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
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The node agent's commands go here, and only here: `monitor` (issue 12)
	// is added as an extra cli.Command, e.g. cli.Run(ctx, streams, os.Args,
	// monitorcmd.NewCmdMonitor), from a package that imports no client-go
	// typed clientset (internal/depcheck checks what this binary links).
	code := cli.Run(ctx, cli.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, os.Args)
	stop()
	os.Exit(code)
}
