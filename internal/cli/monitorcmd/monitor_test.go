package monitorcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/pullpath/pullpath/internal/cli"
	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/schematest"
)

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Run(context.Background(), cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, append([]string{"pullpath-node"}, args...), NewCmdMonitor)
	return code, out.String(), errb.String()
}

// TestMonitorOnce runs `monitor --once` against the embedded lab: a healthy
// target and a broken one give exit 1, with both verdicts in the JSON.
func TestMonitorOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l, err := lab.Start(ctx, lab.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	healthy, _ := l.Scenario("healthy")
	nx, _ := l.Scenario("blob-nxdomain")
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	body := "targets:\n  - {name: app, image: " + healthy.Image + "}\n  - {name: blobnx, image: " + nx.Image + "}\ntimeout: 2s\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run(t, "monitor", "--once", "-o", "json", "--config", cfg, "--root", healthy.Root, "--dns-port", strconv.Itoa(l.DNSPort), "--node", "n1", "--pool", "p1")
	if code != cli.ExitFailure {
		t.Fatalf("exit %d, want 1 (blobnx needs credentials and its blob host does not resolve); stderr:\n%s", code, stderr)
	}
	var doc struct {
		Kind    string `json:"kind"`
		Results []struct {
			Target  string `json:"target"`
			Verdict struct {
				OK    bool   `json:"ok"`
				Cause string `json:"cause"`
			} `json:"verdict"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if doc.Kind != "MonitorResults" || len(doc.Results) != 2 || !doc.Results[0].Verdict.OK || doc.Results[1].Verdict.OK {
		t.Fatalf("results: %+v", doc)
	}
	schematest.Validate(t, "MonitorResults", out)
	schematest.RejectsEdits(t, "MonitorResults", out,
		schematest.Edit{Name: "renamed duration", Old: `"duration_ms":`, New: `"ms":`},
		schematest.Edit{Name: "removed since", Old: `"since":`, New: `"Since":`},
		schematest.Edit{Name: "null list", Old: `"next": [`, New: `"next": null, "x": [`},
		schematest.Edit{Name: "wrong kind", Old: `"MonitorResults"`, New: `"MonitorResult"`})
	// -o yaml is the same document (the times and durations of a second
	// round differ, so compare the shape and the verdicts).
	code, y, stderr := run(t, "monitor", "--once", "-o", "yaml", "--config", cfg, "--root", healthy.Root, "--dns-port", strconv.Itoa(l.DNSPort), "--node", "n1", "--pool", "p1")
	j, err := yaml.YAMLToJSON([]byte(y))
	if code != cli.ExitFailure || err != nil {
		t.Fatalf("-o yaml: exit %d, %v\n%s%s", code, err, y, stderr)
	}
	schematest.Validate(t, "MonitorResults", string(j))
	var ydoc struct {
		Kind    string `json:"kind"`
		Results []struct {
			Target  string          `json:"target"`
			Verdict json.RawMessage `json:"verdict"`
		} `json:"results"`
	}
	if err := json.Unmarshal(j, &ydoc); err != nil || ydoc.Kind != "MonitorResults" || len(ydoc.Results) != 2 || ydoc.Results[1].Target != "blobnx" {
		t.Errorf("-o yaml: %v %+v", err, ydoc)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"monitor"}, "--config is required"},
		{[]string{"monitor", "--config", cfg, "-o", "html"}, `unknown output format "html" (valid: text, json, yaml)`},
		{[]string{"monitor", "--config", filepath.Join(t.TempDir(), "nope.yaml")}, "reading the monitor configuration"},
		{[]string{"monitor", "--config", cfg, "--root", "/nonexistent-root"}, `invalid value "/nonexistent-root" for --root`},
	} {
		code, _, stderr := run(t, tc.args...)
		if code != cli.ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
