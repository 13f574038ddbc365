package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// NewCmdExplain is a placeholder until the explain command lands.
func NewCmdExplain(streams Streams) *cobra.Command {
	return &cobra.Command{
		Use:    "explain",
		Short:  "(not built yet)",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return &ExitError{Code: ExitInternal, Err: errors.New("explain is not built yet")}
		},
	}
}
