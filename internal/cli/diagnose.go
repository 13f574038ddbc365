package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// NewCmdDiagnose is a placeholder until the diagnose command lands.
func NewCmdDiagnose(streams Streams) *cobra.Command {
	return &cobra.Command{
		Use:    "diagnose",
		Short:  "(not built yet)",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return &ExitError{Code: ExitInternal, Err: errors.New("diagnose is not built yet")}
		},
	}
}
