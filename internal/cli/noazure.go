//go:build noazure

package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// NewCmdAzure is `pullpath azure` in a build without the Azure SDK
// (-tags noazure), used to measure what the SDK costs.
func NewCmdAzure(streams Streams) *cobra.Command {
	return &cobra.Command{Use: "azure", Short: "Compare node pools with the registry's private path from Azure's configuration (not in this build)",
		RunE: func(*cobra.Command, []string) error {
			return &ExitError{Code: ExitInternal, Err: errors.New("this pullpath was built with -tags noazure: the Azure SDK is not in it")}
		}}
}
