package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/probe"
)

// Exit codes (docs/contract.md).
const (
	ExitOK       = 0 // the pull path works / no pull failure found
	ExitFailure  = 1 // a failure was diagnosed
	ExitUsage    = 2 // usage error or unreadable input
	ExitInternal = 3 // the tool itself could not run
	// ExitInterrupted is the exit code of a run cut short by Ctrl-C (128+SIGINT).
	ExitInterrupted = 130
)

// Version is set at build time with -ldflags "-X github.com/pullpath/pullpath/internal/cli.Version=...".
var Version = defaultVersion

// Streams are the standard streams a command reads and writes.
type Streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// ExitError carries an exit code through cobra. A nil Err means the command
// already printed what it had to say.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// usageErrorf is an error that exits with ExitUsage.
func usageErrorf(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// exitCode returns an error that only sets the exit code.
func exitCode(code int) error {
	if code == ExitOK {
		return nil
	}
	return &ExitError{Code: code}
}

// Command builds one subcommand of a pullpath binary.
type Command func(Streams) *cobra.Command

// Features are what one binary links beyond the commands every pullpath
// binary has. main passes them to RunWith; nothing is wired at init time.
type Features struct {
	// Commands are the binary's extra commands.
	Commands []Command
	// RuntimeDialer gives probe --runtime-pull the node runtime's CRI image
	// service. Nil in a binary that links no CRI client (pullpath-node):
	// there the flag is hidden and a usage error.
	RuntimeDialer probe.RuntimeDialer
	// ServiceAccountTokens gets what the kubelet would give a credential
	// provider for a pod running as service account ns/name: its
	// annotations and a token for audience, from the API server
	// (TokenRequest). Nil in a binary without a Kubernetes client
	// (pullpath-node): there probe --service-account needs
	// --service-account-token-file.
	ServiceAccountTokens func(ctx context.Context, ns, name, audience string) (*nodeview.ServiceAccount, error)
}

// NewRootCmd builds the pullpath command tree: probe, explain and version,
// which every pullpath binary has, plus the extra commands of this binary.
// The heavy commands live in their own packages (clustercmd, labcmd) so that
// a binary links only what its commands use: cmd/pullpath adds diagnose, demo
// and lab, cmd/pullpath-node adds none.
func NewRootCmd(streams Streams, extra ...Command) *cobra.Command {
	return NewRootCmdWith(streams, Features{Commands: extra})
}

// NewRootCmdWith builds the command tree of a binary with features f.
func NewRootCmdWith(streams Streams, f Features) *cobra.Command {
	root := &cobra.Command{
		Use:   "pullpath",
		Short: "Why can't this Kubernetes node pull this image, and who has to fix what?",
		Long: `pullpath walks the image pull path the way the node's runtime does it
(resolve, connect, TLS, authenticate, manifest, every layer from every blob host),
reads kubelet and runtime errors offline, and diagnoses workloads in a cluster.
The verdict is the first step that fails, in pull order, with its owner.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	setVersionFlag(root)
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.Err)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &ExitError{Code: ExitUsage, Err: err}
	})
	root.AddCommand(
		NewCmdProbe(streams, f),
		NewCmdExplain(streams),
		newCmdVersion(streams),
		NewCmdCauses(streams),
	)
	for _, c := range f.Commands {
		root.AddCommand(c(streams))
	}
	return root
}

// Run executes pullpath with args (args[0] is the program name) and the
// extra commands of this binary, and returns the exit code. It prints an
// error once, to stderr.
func Run(ctx context.Context, streams Streams, args []string, extra ...Command) int {
	return RunWith(ctx, streams, args, Features{Commands: extra})
}

// RunWith executes the binary whose features are f with args (args[0] is
// the program name) and returns the exit code.
func RunWith(ctx context.Context, streams Streams, args []string, f Features) int {
	root := NewRootCmdWith(streams, f)
	if len(args) > 0 && strings.HasPrefix(filepath.Base(args[0]), "kubectl-") {
		// Installed as kubectl-pullpath: help and usage say kubectl pullpath.
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl pullpath"}
	}
	if len(args) > 0 {
		args = args[1:]
	}
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	if code, ok := interruptedExit(ctx, streams, err); ok {
		return code
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintf(streams.Err, "pullpath: %v\n", ee.Err)
		}
		return ee.Code
	}
	fmt.Fprintf(streams.Err, "pullpath: %v\n", err)
	if strings.Contains(err.Error(), "unknown command") || strings.Contains(err.Error(), "accepts ") ||
		strings.Contains(err.Error(), "requires ") || strings.Contains(err.Error(), "unknown flag") {
		return ExitUsage
	}
	return ExitInternal
}
