package azurecmd

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/cli"
	"github.com/pullpath/pullpath/internal/cli/clitest"
)

// TestAzureColourOnTTYOnly runs `azure` with its stdout on a real
// pseudo-terminal: coloured, unless NO_COLOR is set or --no-color given.
func TestAzureColourOnTTYOnly(t *testing.T) {
	for _, tc := range []struct {
		name, noColor string
		args          []string
		colour        bool
	}{
		{"tty", "", nil, true},
		{"NO_COLOR", "1", nil, false},
		{"--no-color", "", []string{"--no-color"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NO_COLOR", tc.noColor)
			master, tty := clitest.PTY(t)
			got := make(chan string)
			go func() { b, _ := io.ReadAll(master); got <- string(b) }()
			var errb bytes.Buffer
			args := append([]string{"pullpath", "azure", "--from-az", azDumps + "blackhole", "--target", "registry.corp.example=192.168.10.20"}, tc.args...)
			code := cli.Run(context.Background(), cli.Streams{In: strings.NewReader(""), Out: tty, Err: &errb}, args, NewCmdAzure)
			tty.Close() // the reader gets EIO once the terminal side is closed
			out := <-got
			if code != cli.ExitFailure || !strings.Contains(out, "route.blackhole") {
				t.Fatalf("exit %d, output %q, stderr %q", code, out, errb.String())
			}
			if has := strings.Contains(out, "\x1b["); has != tc.colour {
				t.Errorf("colour %v, want %v:\n%q", has, tc.colour, out)
			}
		})
	}
}

// TestAzureConventions: the help states the exit codes, and -o completes
// to the formats azure accepts.
func TestAzureConventions(t *testing.T) {
	cmd := NewCmdAzure(cli.Streams{})
	for _, want := range []string{"Exit status:", "  2    usage error or unreadable input", "  3    the tool itself could not run", "130"} {
		if !strings.Contains(cmd.Long, want) {
			t.Errorf("azure --help lacks %q", want)
		}
	}
	code, out, stderr := runAzureArgs(t, "__complete", "azure", "-o", "")
	if code != cli.ExitOK || !strings.Contains(out, "html\n") || !strings.Contains(out, "yaml\n") {
		t.Errorf("__complete azure -o: exit %d\n%s%s", code, out, stderr)
	}
}

func runAzureArgs(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Run(context.Background(), cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, append([]string{"pullpath"}, args...), NewCmdAzure)
	return code, out.String(), errb.String()
}
