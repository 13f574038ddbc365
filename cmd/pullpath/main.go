// Command pullpath answers why a Kubernetes node cannot pull an image, and
// who has to fix what.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/pullpath/pullpath/internal/cli"
	"github.com/pullpath/pullpath/internal/cli/azurecmd"
	"github.com/pullpath/pullpath/internal/cli/clustercmd"
	"github.com/pullpath/pullpath/internal/cli/labcmd"
	// probe --runtime-pull: the CRI client, which the node binary does not link.
	_ "github.com/pullpath/pullpath/internal/probe/criruntime"
)

// commands are the commands of the full binary beyond probe, explain,
// causes and version.
var commands = []cli.Command{clustercmd.NewCmdDiagnose, clustercmd.NewCmdMonitor, azurecmd.NewCmdAzure, labcmd.NewCmdDemo, labcmd.NewCmdLab}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first Ctrl-C cancels the run, which prints its partial report and
	// exits 130; after it, a second one kills the process at once.
	go func() { <-ctx.Done(); stop() }()
	code := cli.Run(ctx, cli.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, os.Args, commands...)
	stop()
	os.Exit(code)
}
