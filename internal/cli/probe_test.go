package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/labtest"
	"github.com/pullpath/pullpath/internal/probe"
)

func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), Streams{In: strings.NewReader(stdin), Out: &out, Err: &errb}, append([]string{"pullpath"}, args...))
	return code, out.String(), errb.String()
}

func probeArgs(l *lab.Lab, sc lab.Scenario, extra ...string) []string {
	args := []string{"probe", sc.Image, "--root", sc.Root, "--platform", sc.Platform, "--timeout", "2s", "--dns-port", fmt.Sprint(l.DNSPort)}
	return append(args, extra...)
}

// TestProbeJSONContract runs the real command against the lab and checks the
// JSON fields docs/contract.md promises, and the exit codes.
func TestProbeJSONContract(t *testing.T) {
	l := labtest.New(t, lab.Options{})
	healthy := labtest.Scenario(t, l, "healthy-auth")

	code, out, stderr := runCLI(t, healthy.Password+"\n", probeArgs(l, healthy, "-o", "json", "--username", healthy.Username, "--password-stdin")...)
	if code != ExitOK {
		t.Fatalf("probe healthy exit %d, stderr %q", code, stderr)
	}
	if strings.Contains(out, healthy.Password) || strings.Contains(stderr, healthy.Password) {
		t.Fatal("the output shows the password")
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("probe -o json is not JSON: %v", err)
	}
	for _, k := range []string{"image", "verdict", "endpoints", "blobs", "warnings"} {
		if _, ok := rep[k]; !ok {
			t.Errorf("probe JSON lacks %q", k)
		}
	}
	v := rep["verdict"].(map[string]any)
	for _, k := range []string{"ok", "layer", "summary", "next"} {
		if _, ok := v[k]; !ok {
			t.Errorf("verdict lacks %q", k)
		}
	}
	eps := rep["endpoints"].([]any)
	roles := map[string]bool{}
	for _, e := range eps {
		m := e.(map[string]any)
		for _, k := range []string{"host", "port", "role", "steps"} {
			if _, ok := m[k]; !ok {
				t.Errorf("endpoint lacks %q", k)
			}
		}
		roles[m["role"].(string)] = true
	}
	for _, r := range []string{"registry", "auth", "blob"} {
		if !roles[r] {
			t.Errorf("endpoint roles %v lack %q", roles, r)
		}
	}
	for _, b := range rep["blobs"].([]any) {
		m := b.(map[string]any)
		if m["verified"] != true || m["host"] == "" || m["digest"] == "" {
			t.Errorf("blob %v not verified from a host", m)
		}
	}

	failing := labtest.Scenario(t, l, "blob-refused")
	code, out, _ = runCLI(t, failing.Password+"\n", probeArgs(l, failing, "-o", "json", "--username", failing.Username, "--password-stdin")...)
	if code != ExitFailure {
		t.Errorf("probe blob-refused exit %d, want %d", code, ExitFailure)
	}
	var frep struct {
		Verdict struct {
			OK       bool   `json:"ok"`
			Layer    string `json:"layer"`
			Cause    string `json:"cause"`
			Role     string `json:"role"`
			Owner    string `json:"owner"`
			Endpoint string `json:"endpoint"`
		} `json:"verdict"`
	}
	if err := json.Unmarshal([]byte(out), &frep); err != nil {
		t.Fatal(err)
	}
	if frep.Verdict.Layer != string(failing.Expect.Layer) || frep.Verdict.Role != "blob" || frep.Verdict.Owner != "network" || frep.Verdict.Endpoint != failing.Expect.Endpoint {
		t.Errorf("probe blob-refused verdict = %+v, want %+v", frep.Verdict, failing.Expect)
	}
}

func TestProbeBlobModes(t *testing.T) {
	l := labtest.New(t, lab.Options{})
	sc := labtest.Scenario(t, l, "healthy")
	for _, mode := range []string{"head", "none"} {
		code, out, stderr := runCLI(t, "", probeArgs(l, sc, "-o", "json", "--blobs", mode)...)
		if code != ExitOK {
			t.Fatalf("--blobs %s exit %d: %s", mode, code, stderr)
		}
		var rep struct {
			Blobs []struct {
				Bytes    int64 `json:"bytes"`
				Verified bool  `json:"verified"`
			} `json:"blobs"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Blobs) < 2 {
			t.Errorf("--blobs %s lists %d blobs, want config and layers", mode, len(rep.Blobs))
		}
		for _, b := range rep.Blobs {
			if b.Bytes != 0 || b.Verified {
				t.Errorf("--blobs %s downloaded or verified a blob: %+v", mode, b)
			}
		}
	}
}

func TestProbeUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"probe"},
		{"probe", "a", "b"},
		{"probe", "registry.example/app:1", "-o", "xml"},
		{"probe", "registry.example/app:1", "--blobs", "some"},
		{"probe", "registry.example/app:1", "--username", "u"},
		{"probe", "registry.example/app:1", "--password-stdin"},
		{"probe", "--no-such-flag", "x"},
		{"probe", "registry.example/app:1", "--root", "/nonexistent/root"},
		{"no-such-command"},
	} {
		code, _, stderr := runCLI(t, "", args...)
		if code != ExitUsage {
			t.Errorf("pullpath %v exit %d, want %d (stderr %q)", args, code, ExitUsage, stderr)
		}
		if !strings.HasPrefix(stderr, "pullpath: ") {
			t.Errorf("pullpath %v stderr %q, want one error line", args, stderr)
		}
	}
}

func TestProbeMalformedReferenceIsDiagnosed(t *testing.T) {
	root := t.TempDir()
	code, out, _ := runCLI(t, "", "probe", "UPPER/Case::x", "--root", root)
	if code != ExitFailure || !strings.Contains(out, "config.reference") {
		t.Errorf("malformed reference: exit %d, output %q; want exit 1 with config.reference", code, out)
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, "", "version")
	if code != ExitOK || !strings.HasPrefix(out, "pullpath ") {
		t.Errorf("version: exit %d, %q", code, out)
	}
}

func TestCompletionAndPluginName(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		code, out, _ := runCLI(t, "", "completion", shell)
		if code != ExitOK || !strings.Contains(out, "pullpath") {
			t.Errorf("completion %s: exit %d, %d bytes", shell, code, len(out))
		}
	}
	var out, errb bytes.Buffer
	code := Run(context.Background(), Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, []string{"/usr/local/bin/kubectl-pullpath", "--help"})
	if code != ExitOK || !strings.Contains(out.String(), "kubectl pullpath") {
		t.Errorf("as kubectl-pullpath: exit %d, help %q", code, out.String())
	}
}

// TestProbeCompareNode runs probe --compare-node against the lab: the
// node's files (--root) name a nameserver where nothing listens, the pod's
// own (--compare-pod-root, "/" in a real pod) the lab DNS. Both resolvers'
// answers are printed side by side, in text and JSON, and differ.
func TestProbeCompareNode(t *testing.T) {
	l := labtest.New(t, lab.Options{})
	pod := labtest.Scenario(t, l, "healthy")
	node := labtest.Scenario(t, l, "dns-resolver-down")
	args := []string{"probe", pod.Image, "--root", node.Root, "--compare-node", "--compare-pod-root", pod.Root, "--platform", pod.Platform, "--timeout", "2s", "--dns-port", fmt.Sprint(l.DNSPort)}
	code, out, stderr := runCLI(t, "", append(args, "-o", "json")...)
	if code != ExitFailure {
		t.Fatalf("exit %d, want %d (the node cannot resolve); stderr %q", code, ExitFailure, stderr)
	}
	validateDoc(t, "ProbeReport", out)
	var rep probe.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.CompareNode) == 0 {
		t.Fatalf("no compare_node in %s", out)
	}
	c := rep.CompareNode[0]
	if !c.Differs || c.Node.Cause == "" || c.Pod.Cause != "" || len(c.Pod.Addrs) == 0 || !strings.HasSuffix(c.Pod.Resolv, "etc/resolv.conf") {
		t.Errorf("compare_node[0] = %+v, want the node failing and the pod answering", c)
	}
	code, out, _ = runCLI(t, "", args...)
	t.Logf("probe --compare-node (text):\n%s", out)
	if code != ExitFailure || !strings.Contains(out, "resolvers: node (--root) vs this pod") || !strings.Contains(out, "≠ "+c.Host) || !strings.Contains(out, c.Pod.Addrs[0]) {
		t.Errorf("text (exit %d):\n%s", code, out)
	}
	if code, _, stderr := runCLI(t, "", "probe", pod.Image, "--compare-node"); code != ExitUsage || !strings.Contains(stderr, "--root") {
		t.Errorf("--compare-node without --root: exit %d %q, want a usage error naming --root", code, stderr)
	}
}
