package clustercmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/cli"
	"github.com/pullpath/pullpath/internal/cluster/clustertest"
	"github.com/pullpath/pullpath/internal/schematest"
)

func runDiagnose(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	streams := cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}
	// The real root and the real command, as cmd/pullpath builds them.
	root := cli.NewRootCmd(streams, NewCmdDiagnose)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	code = cli.ExitOK
	if err != nil {
		code = cli.ExitInternal
		if ee, ok := err.(*cli.ExitError); ok {
			code = ee.Code
		}
		if ee, ok := err.(*cli.ExitError); !ok || ee.Err != nil {
			errb.WriteString(err.Error())
		}
	}
	return out.String(), errb.String(), code
}

// TestDiagnoseEndToEnd runs `pullpath diagnose` against a real API server
// loaded with the AKS fixture, through a kubeconfig file like a user would.
func TestDiagnoseEndToEnd(t *testing.T) {
	srv := clustertest.Start(t)
	f := clustertest.AKS(time.Now())
	if err := clustertest.Load(context.Background(), srv.Clientset, f); err != nil {
		t.Fatalf("loading the fixture: %v", err)
	}
	kc := "--kubeconfig=" + srv.Kubeconfig

	t.Run("text", func(t *testing.T) {
		out, errOut, code := runDiagnose(t, "diagnose", "deployment/app", "-n", clustertest.Namespace, kc)
		if code != cli.ExitFailure {
			t.Fatalf("exit code = %d, want %d (a failure was diagnosed); stderr: %s", code, cli.ExitFailure, errOut)
		}
		for _, want := range []string{
			"Verdict:   ✘ route (route.timeout) at myacr.azurecr.io:443, owner network",
			"Landed on: " + clustertest.NewNode,
			"Trigger:   scale-up",
			"healthy only because the image is cached on 3 old node(s)",
			"credentials are irrelevant here",
			"pull secret legacy-pull (from serviceaccount): missing",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, clustertest.SecretToken) || strings.Contains(errOut, clustertest.SecretToken) {
			t.Errorf("output contains the pull secret's password")
		}
		if os.Getenv("PULLPATH_SHOW_DIAGNOSE") != "" {
			t.Logf("diagnose output:\n%s", out)
		}
	})

	t.Run("json contract", func(t *testing.T) {
		out, errOut, code := runDiagnose(t, "diagnose", "deploy", "app", "-n", clustertest.Namespace, kc, "-o", "json")
		if code != cli.ExitFailure {
			t.Fatalf("exit code = %d, want %d; stderr: %s", code, cli.ExitFailure, errOut)
		}
		schematest.Validate(t, "DiagnoseReport", out)
		// The docs/contract.md fields, read generically so a renamed field fails.
		var got map[string]any
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("output is not one JSON object: %v\n%s", err, out)
		}
		for _, k := range []string{"workload", "namespace", "image", "verdict", "events", "trigger", "pools", "nodes"} {
			if _, ok := got[k]; !ok {
				t.Errorf("JSON lacks %q", k)
			}
		}
		if got["workload"] != "deployment/app" || got["namespace"] != clustertest.Namespace || got["image"] != clustertest.Image {
			t.Errorf("workload, namespace, image = %v, %v, %v", got["workload"], got["namespace"], got["image"])
		}
		v := got["verdict"].(map[string]any)
		for _, k := range []string{"ok", "layer", "cause", "role", "owner", "endpoint", "summary", "next"} {
			if _, ok := v[k]; !ok {
				t.Errorf("verdict lacks %q", k)
			}
		}
		tr := got["trigger"].(map[string]any)
		if tr["kind"] != "scale-up" || tr["node"] != clustertest.NewNode {
			t.Errorf("trigger = %v", tr)
		}
		if _, err := time.Parse(time.RFC3339, tr["time"].(string)); err != nil {
			t.Errorf("trigger time %v is not RFC 3339", tr["time"])
		}
		for _, p := range got["pools"].([]any) {
			pm := p.(map[string]any)
			for _, k := range []string{"name", "eligible", "nodes", "cached"} {
				if _, ok := pm[k]; !ok {
					t.Errorf("pool lacks %q: %v", k, pm)
				}
			}
		}
		for _, n := range got["nodes"].([]any) {
			nm := n.(map[string]any)
			for _, k := range []string{"name", "pool", "created", "cached", "eligible"} {
				if _, ok := nm[k]; !ok {
					t.Errorf("node lacks %q: %v", k, nm)
				}
			}
		}
		evs := got["events"].([]any)
		if len(evs) == 0 {
			t.Fatalf("no events")
		}
		if strings.Contains(out, clustertest.SecretToken) {
			t.Errorf("JSON contains the pull secret's password")
		}
	})

	t.Run("healthy pod exits 0", func(t *testing.T) {
		_, errOut, code := runDiagnose(t, "diagnose", "pod", "app-7d9f8c6b5d-4hj2k", "-n", clustertest.Namespace, kc)
		if code != cli.ExitOK {
			t.Errorf("exit code = %d, want 0; stderr: %s", code, errOut)
		}
	})

	t.Run("missing workload is a usage error", func(t *testing.T) {
		_, errOut, code := runDiagnose(t, "diagnose", "nope", "-n", clustertest.Namespace, kc)
		if code != cli.ExitUsage || !strings.Contains(errOut, "pod/nope") {
			t.Errorf("exit code = %d, stderr %q; want %d naming pod/nope", code, errOut, cli.ExitUsage)
		}
	})

	t.Run("completion lists names from the cluster", func(t *testing.T) {
		for _, args := range [][]string{{"__complete", "diagnose", kc, "-n", clustertest.Namespace, "deploy", ""}, {"__complete", "diagnose", kc, "-n", clustertest.Namespace, "deployment/"}} {
			out, errOut, code := runDiagnose(t, args...)
			want := clustertest.Deployment
			if strings.HasSuffix(args[len(args)-1], "/") {
				want = "deployment/" + clustertest.Deployment
			}
			if code != cli.ExitOK || !strings.Contains("\n"+out, "\n"+want+"\n") {
				t.Errorf("%v: exit %d, output %q (stderr %q), want the line %q", args, code, out, errOut, want)
			}
		}
		out, _, _ := runDiagnose(t, "__complete", "diagnose", kc, "-n", clustertest.Namespace, "pod", "")
		if !strings.Contains(out, clustertest.FailingPod) {
			t.Errorf("pod completion %q lacks %s", out, clustertest.FailingPod)
		}
	})

	t.Run("cleanup with nothing to clean", func(t *testing.T) {
		_, errOut, code := runDiagnose(t, "diagnose", "--cleanup", "-n", clustertest.Namespace, kc)
		if code != cli.ExitOK || !strings.Contains(errOut, "no probe jobs") {
			t.Errorf("exit code = %d, stderr %q", code, errOut)
		}
	})
}

func TestDiagnoseUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"no workload", []string{"diagnose"}},
		{"bad output", []string{"diagnose", "pod/x", "-o", "xml"}},
		{"bad kind", []string{"diagnose", "service/x"}},
		{"cleanup with workload", []string{"diagnose", "--cleanup", "pod/x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// An unreachable kubeconfig: usage errors must come first.
			_, errOut, code := runDiagnose(t, append(tt.args, "--kubeconfig=/nonexistent")...)
			if code != cli.ExitUsage {
				t.Errorf("diagnose %q exit code = %d (%s), want %d", tt.args, code, errOut, cli.ExitUsage)
			}
		})
	}
}

// TestDiagnoseNoKubeconfig: no kubeconfig anywhere is a usage error (exit 2)
// that says where it looked, like kubectl, and an unreadable --kubeconfig
// names the file.
func TestDiagnoseNoKubeconfig(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"none", []string{"diagnose", "pod/x"}, "no kubeconfig found ($KUBECONFIG is not set, looked at " + home + "/.kube/config (no such file)"},
		{"missing --kubeconfig", []string{"diagnose", "pod/x", "--kubeconfig", home + "/nope"}, "reading kubeconfig " + home + "/nope"},
		{"cleanup", []string{"diagnose", "--cleanup"}, "no kubeconfig found"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runDiagnose(t, tt.args...)
			if code != cli.ExitUsage || !strings.Contains(errOut, tt.want) || out != "" {
				t.Errorf("diagnose %q = exit %d, stdout %q, stderr %q; want exit %d and %q", tt.args, code, out, errOut, cli.ExitUsage, tt.want)
			}
		})
	}
}
