//go:build nolab

package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// errNoLab is what demo and lab say in a build without the embedded lab.
var errNoLab = errors.New("this pullpath was built with -tags nolab (the slim probe build for node Jobs): the embedded lab is not in it")

// NewCmdDemo is `pullpath demo` in a build without the embedded lab.
func NewCmdDemo(streams Streams) *cobra.Command {
	return &cobra.Command{Use: "demo", Short: "Probe every fault of the embedded lab (not in this build)", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return &ExitError{Code: ExitInternal, Err: errNoLab} }}
}

// NewCmdLab is `pullpath lab` in a build without the embedded lab.
func NewCmdLab(streams Streams) *cobra.Command {
	return &cobra.Command{Use: "lab", Hidden: true,
		RunE: func(*cobra.Command, []string) error { return &ExitError{Code: ExitInternal, Err: errNoLab} }}
}
