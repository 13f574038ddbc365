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
	"github.com/pullpath/pullpath/internal/probe/criruntime"
)

// commands are the commands of the full binary beyond probe, explain,
// causes and version.
var commands = []cli.Command{clustercmd.NewCmdDiagnose, clustercmd.NewCmdMonitor, azurecmd.NewCmdAzure, labcmd.NewCmdDemo, labcmd.NewCmdLab}

// features are the full binary's: its commands, the CRI client of probe
// --runtime-pull (which the node binary does not link), and the API
// server's service-account tokens for probe --service-account.
var features = cli.Features{Commands: commands, RuntimeDialer: criruntime.Dial, ServiceAccountTokens: clustercmd.ServiceAccountTokens}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first Ctrl-C cancels the run, which prints its partial report and
	// exits 130; after it, a second one kills the process at once.
	go func() { <-ctx.Done(); stop() }()
	code := cli.RunWith(ctx, cli.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, os.Args, features)
	stop()
	os.Exit(code)
}
