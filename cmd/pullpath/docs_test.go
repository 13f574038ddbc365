package main

import (
	"bufio"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"

	"github.com/pullpath/pullpath/internal/cli"
)

var update = flag.Bool("update", false, "rewrite docs/commands/ from the command tree")

var commandsDir = filepath.Join("..", "..", "docs", "commands")

// TestCommandsDoc fails when docs/commands/ drifts from the command tree
// (cobra/doc's Markdown, one page per command); `go test ./cmd/pullpath
// -run TestCommandsDoc -update` rewrites it.
func TestCommandsDoc(t *testing.T) {
	root := cli.NewRootCmdWith(cli.Streams{}, features)
	root.DisableAutoGenTag = true
	// Defaults under the home directory (client-go's --cache-dir) are
	// written as $HOME, so the pages do not depend on who generates them.
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		var walk func(c *cobra.Command)
		walk = func(c *cobra.Command) {
			for _, fs := range []*pflag.FlagSet{c.LocalFlags(), c.PersistentFlags()} {
				fs.VisitAll(func(f *pflag.Flag) { f.DefValue = strings.ReplaceAll(f.DefValue, home, "$HOME") })
			}
			for _, sub := range c.Commands() {
				walk(sub)
			}
		}
		walk(root)
	}
	tmp := t.TempDir()
	if err := doc.GenMarkdownTree(root, tmp); err != nil {
		t.Fatal(err)
	}
	want := readDir(t, tmp)
	if len(want) < 10 {
		t.Fatalf("cobra/doc wrote %d pages, want one per command", len(want))
	}
	if *update {
		if err := os.RemoveAll(commandsDir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(commandsDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, body := range want {
			if err := os.WriteFile(filepath.Join(commandsDir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := readDir(t, commandsDir)
	for name, body := range want {
		if got[name] != body {
			t.Errorf("docs/commands/%s is out of date: run `go test ./cmd/pullpath -run TestCommandsDoc -update` (or make docs)", name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("docs/commands/%s documents no command: run `go test ./cmd/pullpath -run TestCommandsDoc -update`", name)
		}
	}
	for _, c := range []string{"pullpath_probe.md", "pullpath_diagnose.md", "pullpath_explain.md", "pullpath_monitor_status.md"} {
		if _, ok := want[c]; !ok {
			t.Errorf("cobra/doc wrote no %s", c)
		}
	}
}

func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

// nodeProbeLine is the README's command for probing one node by hand:
// kubectl debug node/NAME with the probe image, whose entrypoint is the
// slim binary at /pullpath, reading the node's files under /host.
var nodeProbeLine = regexp.MustCompile(`kubectl debug node/\S+ -it --image=(ghcr\.io/pullpath/pullpath):\S+ -- /pullpath probe --root /host \S+`)

// TestReadmeFiveMinutes is the five-minute test of CONTRIBUTING.md: a new
// user reaches `pullpath diagnose` and the node probe command within the
// README's first 60 lines. It also checks that the node probe command is
// one the project's image and binary accept: the image the probe Jobs use,
// /pullpath as the image's entrypoint (hack/ociimage), and probe's --root.
func TestReadmeFiveMinutes(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	diagnoseAt, nodeAt, n := 0, 0, 0
	var image string
	for sc.Scan() && n < 60 {
		n++
		line := sc.Text()
		if diagnoseAt == 0 && regexp.MustCompile(`^pullpath diagnose \S+`).MatchString(line) {
			diagnoseAt = n
		}
		if m := nodeProbeLine.FindStringSubmatch(line); m != nil && nodeAt == 0 {
			nodeAt, image = n, m[1]
		}
	}
	if diagnoseAt == 0 {
		t.Errorf("README.md: no `pullpath diagnose KIND/NAME` command in the first 60 lines")
	}
	if nodeAt == 0 {
		t.Errorf("README.md: no `kubectl debug node/NAME -it --image=ghcr.io/pullpath/pullpath:VERSION -- /pullpath probe --root /host IMAGE` in the first 60 lines")
	}
	t.Logf("README.md: diagnose at line %d, the node probe command at line %d", diagnoseAt, nodeAt)

	// The image, its entrypoint and the flag are the project's own.
	root := cli.NewRootCmdWith(cli.Streams{}, features)
	probe, _, err := root.Find([]string{"probe"})
	if err != nil || probe.Flags().Lookup("root") == nil {
		t.Errorf("pullpath probe has no --root flag (%v)", err)
	}
	diag, _, err := root.Find([]string{"diagnose"})
	if err != nil {
		t.Fatal(err)
	}
	if f := diag.Flags().Lookup("probe-image"); f == nil || !strings.Contains(f.Usage+" "+f.DefValue, image+":") {
		t.Errorf("the README's node probe image %q is not diagnose's default probe image (%v)", image, f)
	}
	oci, err := os.ReadFile(filepath.Join("..", "..", "hack", "ociimage", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(oci), `Entrypoint = []string{"/pullpath"}`) {
		t.Errorf("hack/ociimage no longer makes /pullpath the image's entrypoint: fix the README's node probe command")
	}
}
