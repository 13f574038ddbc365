package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/cli"
)

// TestNoRuntimePull: the node binary links no CRI client, so probe
// --runtime-pull is a usage error that says where it is, before any
// network step, and the flag is not in the help. (This test binary links
// what main links: internal/probe/criruntime is not among them.)
func TestNoRuntimePull(t *testing.T) {
	if features.RuntimeDialer != nil || features.ServiceAccountTokens != nil {
		t.Fatal("the node binary's features name a CRI or a Kubernetes client")
	}
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := cli.RunWith(context.Background(), cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb},
			append([]string{"pullpath-node"}, args...), features)
		return code, out.String(), errb.String()
	}
	code, out, stderr := run("probe", "--root", t.TempDir(), "--runtime-pull", "registry.lab.test/team/app:1")
	if code != cli.ExitUsage || !strings.Contains(stderr, "--runtime-pull") || !strings.Contains(stderr, "full pullpath") {
		t.Errorf("probe --runtime-pull: exit %d, stderr %q; want %d and a line naming the full pullpath", code, stderr, cli.ExitUsage)
	}
	if out != "" {
		t.Errorf("probe --runtime-pull printed a report: %q", out)
	}
	_, help, _ := run("probe", "--help")
	if !strings.Contains(help, "--as-kubelet") || strings.Contains(help, "--runtime-pull") || strings.Contains(help, "--cri-socket") {
		t.Errorf("probe --help of the node binary shows --runtime-pull or --cri-socket (or is not the probe's help):\n%s", help)
	}
}
