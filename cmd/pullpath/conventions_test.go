package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/pullpath/pullpath/internal/cli"
)

// TestEveryCommandsConventions walks every command and subcommand of the
// full binary: its help states the exit codes, and an -o flag is the
// shared one (its help lists the formats, and the shell completes them).
func TestEveryCommandsConventions(t *testing.T) {
	root := cli.NewRootCmdWith(cli.Streams{}, features)
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			n++
			path := strings.TrimPrefix(sub.CommandPath(), "pullpath ")
			for _, want := range []string{"Exit status:", "  2    usage error or unreadable input", "  3    the tool itself could not run", "130"} {
				if !strings.Contains(sub.Long, want) {
					t.Errorf("pullpath %s --help lacks %q", path, want)
				}
			}
			if f := sub.LocalFlags().Lookup("output"); f != nil {
				formats, ok := strings.CutPrefix(f.Usage, "output format: ")
				if !ok {
					t.Errorf("pullpath %s -o: usage %q is not the shared flag's", path, f.Usage)
				}
				var out, errb bytes.Buffer
				args := append([]string{"pullpath", "__complete"}, strings.Fields(path)...)
				code := cli.RunWith(context.Background(), cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, append(args, "-o", ""), features)
				for _, want := range strings.Split(formats, ", ") {
					if code != cli.ExitOK || !strings.Contains(out.String(), want+"\n") {
						t.Errorf("__complete %s -o lacks %q (exit %d):\n%s", path, want, code, out.String())
					}
				}
			}
			walk(sub)
		}
	}
	walk(root)
	if n < 9 {
		t.Errorf("walked %d commands, want probe, explain, version, causes, diagnose, monitor, monitor status, azure, demo", n)
	}
}
