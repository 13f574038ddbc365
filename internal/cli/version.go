package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pullpath/pullpath/internal/report"
)

// Commit and BuildDate are set at build time, like Version:
//
//	-ldflags "-X github.com/pullpath/pullpath/internal/cli.Commit=$(git rev-parse HEAD)
//	          -X github.com/pullpath/pullpath/internal/cli.BuildDate=$(date -u +%FT%TZ)"
//
// Without them the commit and date come from the VCS stamp Go writes into
// the binary (go build in a git checkout).
var (
	Commit    = ""
	BuildDate = ""
)

// versionInfo is the VersionInfo document (schema/versioninfo.schema.json).
type versionInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	BuildDate string `json:"build_date"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
	Module    string `json:"module,omitempty"`
}

// buildVersion reads the ldflags first, then the binary's build info.
func buildVersion() versionInfo {
	v := versionInfo{Version: Version, Commit: Commit, BuildDate: BuildDate, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	v.Module = bi.Main.Path
	if v.Version == defaultVersion && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		// go install github.com/pullpath/pullpath/cmd/pullpath@v1.2.3
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if v.Commit == "" {
				v.Commit = s.Value
			}
		case "vcs.time":
			if v.BuildDate == "" {
				v.BuildDate = s.Value
			}
		case "vcs.modified":
			v.Modified = s.Value == "true" && Commit == ""
		}
	}
	return v
}

// defaultVersion is Version when no -ldflags set it.
const defaultVersion = "v0.1.0-dev"

func (v versionInfo) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pullpath %s\n", v.Version)
	commit := report.Dash(v.Commit)
	if v.Modified {
		commit += " (modified)"
	}
	fmt.Fprintf(&b, "  commit:    %s\n  built:     %s\n  go:        %s\n  platform:  %s\n", commit, report.Dash(v.BuildDate), v.GoVersion, v.Platform)
	return b.String()
}

// setVersionFlag gives the root command --version, printing what
// `pullpath version` prints.
func setVersionFlag(root *cobra.Command) {
	root.Version = Version
	root.SetVersionTemplate(buildVersion().text())
}

type versionOptions struct {
	streams Streams
	output  string
}

func newCmdVersion(streams Streams) *cobra.Command {
	o := &versionOptions{streams: streams}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, build date, Go version and platform",
		Long: `version prints pullpath's version, the commit and date it was built from, the Go
version and the platform (also as --version). -o json and -o yaml print one
VersionInfo document (schema/versioninfo.schema.json).` + exitCodesHelp("the version was printed", "(not used)"),
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return o.run() },
	}
	addOutputFlag(cmd, &o.output, report.DocumentFormats)
	return cmd
}

func (o *versionOptions) run() error {
	if err := checkOutput(o.output, report.DocumentFormats); err != nil {
		return err
	}
	v := buildVersion()
	if o.output != report.FormatText {
		return writeDocument(o.streams.Out, o.output, report.KindVersionInfo, &v)
	}
	_, err := fmt.Fprint(o.streams.Out, v.text())
	return err
}
