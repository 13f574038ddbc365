package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// Exit codes (CONTRACT.md).
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

// NewRootCmd builds the pullpath command tree: probe, explain and version,
// which every pullpath binary has, plus the extra commands of this binary.
// The heavy commands live in their own packages (clustercmd, labcmd) so that
// a binary links only what its commands use: cmd/pullpath adds diagnose, demo
// and lab, cmd/pullpath-node adds none.
func NewRootCmd(streams Streams, extra ...Command) *cobra.Command {
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
		NewCmdProbe(streams),
		NewCmdExplain(streams),
		newCmdVersion(streams),
		NewCmdCauses(streams),
	)
	for _, c := range extra {
		root.AddCommand(c(streams))
	}
	return root
}

// Run executes pullpath with args (args[0] is the program name) and the
// extra commands of this binary, and returns the exit code. It prints an
// error once, to stderr.
func Run(ctx context.Context, streams Streams, args []string, extra ...Command) int {
	root := NewRootCmd(streams, extra...)
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
