package cli

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/labtest"
	"github.com/pullpath/pullpath/internal/probe"
)

// TestProbeRuntimeVersionFlag: probe --runtime-version (what diagnose
// passes from the node's containerRuntimeVersion) is a version source that
// beats the files, the report lists every source with the one used, and
// the document stays valid against the schema.
func TestProbeRuntimeVersionFlag(t *testing.T) {
	l := labtest.New(t, lab.Options{})
	sc := labtest.Scenario(t, l, "healthy")
	code, out, stderr := runCLI(t, "", "probe", sc.Image, "--root", sc.Root, "--platform", sc.Platform, "--timeout", "2s", "--dns-port", fmt.Sprint(l.DNSPort),
		"--blobs", "none", "--runtime-version", "containerd://1.7.27-k3s1", "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d; stderr %q", code, stderr)
	}
	validateDoc(t, "ProbeReport", out)
	var rep probe.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	rt := rep.RuntimeConfig.Runtime
	if rt.Version != "1.7.27" || rt.Assumed || len(rt.Candidates) == 0 || !rt.Candidates[0].Used || rt.Candidates[0].Version != "1.7.27-k3s1" {
		t.Fatalf("runtime %+v: want 1.7.27 from --runtime-version, listed and used", rt)
	}
}
