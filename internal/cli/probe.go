package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// NewCmdProbe is a placeholder until the probe command lands.
func NewCmdProbe(streams Streams) *cobra.Command {
	return &cobra.Command{Use: "probe IMAGE", Hidden: true, RunE: func(*cobra.Command, []string) error {
		return &ExitError{Code: ExitInternal, Err: errors.New("probe is not built yet")}
	}}
}

// NewCmdDemo is a placeholder until the demo command lands.
func NewCmdDemo(streams Streams) *cobra.Command {
	return &cobra.Command{Use: "demo", Hidden: true, RunE: func(*cobra.Command, []string) error {
		return &ExitError{Code: ExitInternal, Err: errors.New("demo is not built yet")}
	}}
}
