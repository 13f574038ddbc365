package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func runExplain(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	streams := Streams{In: strings.NewReader(stdin), Out: &out, Err: &errb}
	code = Run(context.Background(), streams, append([]string{"pullpath", "explain"}, args...))
	return code, out.String(), errb.String()
}

const dnsEvent = `Failed to pull image "myacr.azurecr.io/app:v1": rpc error: code = Unknown desc = failed to pull and unpack image "myacr.azurecr.io/app:v1": failed to resolve reference "myacr.azurecr.io/app:v1": failed to do request: Head "https://myacr.azurecr.io/v2/app/manifests/v1": dial tcp: lookup myacr.azurecr.io on 168.63.129.16:53: no such host`

func TestExplainExitCodes(t *testing.T) {
	tests := []struct {
		name  string
		stdin string
		args  []string
		want  int
	}{
		{"failure", dnsEvent, nil, ExitFailure},
		{"failure from dash", dnsEvent, []string{"-"}, ExitFailure},
		{"no failure", "Pulling image \"nginx:1\"\n", nil, ExitOK},
		{"binary", "\x00\x01\x02\x03\x00", nil, ExitUsage},
		{"empty", "", nil, ExitUsage},
		{"missing file", "", []string{"/nonexistent/pullpath-explain-input"}, ExitUsage},
		{"bad format", dnsEvent, []string{"-o", "xml"}, ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runExplain(t, tt.stdin, tt.args...)
			if code != tt.want {
				t.Errorf("explain %v exit = %d, want %d (stderr %q)", tt.args, code, tt.want, stderr)
			}
		})
	}
}

// explainDoc is the part of an ExplainReport these tests read.
type explainDoc struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Input      struct {
		Lines int `json:"lines"`
		Bytes int `json:"bytes"`
	} `json:"input"`
	Findings []map[string]any `json:"findings"`
}

func decodeExplain(t *testing.T, out string) explainDoc {
	t.Helper()
	var d explainDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("explain -o json is not one object: %v\n%s", err, out)
	}
	if d.APIVersion != "pullpath.dev/v1alpha1" || d.Kind != "ExplainReport" {
		t.Errorf("explain -o json apiVersion, kind = %q, %q; want pullpath.dev/v1alpha1, ExplainReport", d.APIVersion, d.Kind)
	}
	if !strings.HasPrefix(out, "{\n  \"apiVersion\": \"pullpath.dev/v1alpha1\",\n  \"kind\": \"ExplainReport\"") {
		t.Errorf("explain -o json does not start with apiVersion then kind:\n%.200s", out)
	}
	return d
}

func TestExplainJSONOneFinding(t *testing.T) {
	code, out, _ := runExplain(t, dnsEvent, "-o", "json")
	if code != ExitFailure {
		t.Fatalf("exit = %d, want %d", code, ExitFailure)
	}
	d := decodeExplain(t, out)
	if len(d.Findings) != 1 {
		t.Fatalf("explain -o json findings = %d, want 1\n%s", len(d.Findings), out)
	}
	f := d.Findings[0]
	if f["host"] != "myacr.azurecr.io" || f["count"] != 1.0 {
		t.Errorf("explain -o json finding host, count = %v, %v; want myacr.azurecr.io, 1", f["host"], f["count"])
	}
	for _, k := range []string{"layer", "cause", "owner", "summary", "next"} {
		if _, dup := f[k]; dup {
			t.Errorf("explain -o json repeats verdict field %q at the finding's top level", k)
		}
	}
	v, _ := f["verdict"].(map[string]any)
	for k, want := range map[string]string{"layer": "dns", "cause": "dns.nxdomain", "role": "registry", "owner": "dns", "endpoint": "myacr.azurecr.io:443"} {
		if v[k] != want {
			t.Errorf("explain -o json verdict.%s = %v, want %q", k, v[k], want)
		}
	}
	if d.Input.Bytes != len(dnsEvent) || d.Input.Lines != strings.Count(strings.TrimSuffix(dnsEvent, "\n"), "\n")+1 {
		t.Errorf("explain -o json input = %+v, want %d bytes", d.Input, len(dnsEvent))
	}
}

func TestExplainJSONManyAndNone(t *testing.T) {
	in := dnsEvent + "\n" + `Failed to pull image "r.example/a:1": rpc error: code = NotFound desc = failed to pull and unpack image "r.example/a:1": failed to resolve reference "r.example/a:1": r.example/a:1: not found` + "\n"
	_, out, _ := runExplain(t, in, "-o", "json")
	d := decodeExplain(t, out)
	var causes []string
	for _, f := range d.Findings {
		causes = append(causes, f["verdict"].(map[string]any)["cause"].(string))
	}
	if strings.Join(causes, ",") != "dns.nxdomain,manifest.unknown" {
		t.Errorf("explain -o json causes = %v, want dns.nxdomain then manifest.unknown", causes)
	}
	code, out, _ := runExplain(t, "all quiet\n", "-o", "json")
	if code != ExitOK {
		t.Errorf("explain of no failure exit = %d, want 0", code)
	}
	if d := decodeExplain(t, out); d.Findings == nil || len(d.Findings) != 0 || !strings.Contains(out, `"findings": []`) {
		t.Errorf("explain -o json of no failure: findings want [], got\n%s", out)
	}
}

func TestExplainYAMLIsTheSameDocument(t *testing.T) {
	_, js, _ := runExplain(t, dnsEvent, "-o", "json")
	_, ym, _ := runExplain(t, dnsEvent, "-o", "yaml")
	var a, b any
	if err := json.Unmarshal([]byte(js), &a); err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON([]byte(ym))
	if err != nil {
		t.Fatalf("explain -o yaml is not YAML: %v\n%s", err, ym)
	}
	if err := json.Unmarshal(j, &b); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("explain -o yaml differs from -o json (-json +yaml):\n%s", diff)
	}
	if !strings.HasPrefix(ym, "apiVersion: pullpath.dev/v1alpha1\n") {
		t.Errorf("explain -o yaml starts %.60q, want apiVersion first", ym)
	}
}

func TestExplainTextFromFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "msg.txt")
	msg := `failed to copy: httpReadSeeker: failed open: failed to do request: Get "https://x.blob.core.windows.net/a/docker/registry/v2/blobs/sha256/ab/cd/data?se=2024&sig=TOPSECRETSIG": dial tcp 20.1.1.1:443: i/o timeout`
	if err := os.WriteFile(p, []byte(msg), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runExplain(t, "", "--no-color", p)
	if code != ExitFailure {
		t.Fatalf("exit = %d, want %d", code, ExitFailure)
	}
	for _, want := range []string{"route.timeout", "role: blob", "x.blob.core.windows.net:443", "Only the manifest endpoint is reachable", "Credentials are irrelevant", "next:"} {
		if !strings.Contains(out, want) {
			t.Errorf("explain text output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "TOPSECRETSIG") || strings.Contains(out, "\x1b[") {
		t.Errorf("explain text output leaks a signature or colours with --no-color:\n%s", out)
	}
}

// TestExplainSandboxAndEndpoints checks that explain's JSON and text name
// the sandbox image of a sandbox pull and every endpoint of a message that
// names several, and that the JSON keeps to the schema.
func TestExplainSandboxAndEndpoints(t *testing.T) {
	sandbox := `Warning  FailedCreatePodSandBox  2m  kubelet  Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox image "mcr.example/oss/kubernetes/pause:3.6": failed to pull image "mcr.example/oss/kubernetes/pause:3.6": failed to pull and unpack image "mcr.example/oss/kubernetes/pause:3.6": failed to resolve reference "mcr.example/oss/kubernetes/pause:3.6": failed to do request: Head "https://mcr.example/v2/oss/kubernetes/pause/manifests/3.6": dial tcp 10.1.1.1:443: connect: connection refused`
	mirrors := `rpc error: code = Unknown desc = initializing source docker://r.example/app:1: (Mirrors also failed: [m.example/app:1: manifest unknown]): r.example/app:1: reading manifest 1 in r.example/app: denied: requested access to the resource is denied`
	code, out, stderr := runExplain(t, sandbox+"\n"+mirrors+"\n", "-o", "json")
	if code != ExitFailure {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	validateDoc(t, "ExplainReport", out)
	var rep struct {
		Findings []struct {
			Image     string `json:"image"`
			Sandbox   bool   `json:"sandbox"`
			Endpoints []struct {
				Endpoint, Role, Cause string
			} `json:"endpoints"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 2 {
		t.Fatalf("%d findings, want 2: %s", len(rep.Findings), out)
	}
	if f := rep.Findings[0]; !f.Sandbox || f.Image != "mcr.example/oss/kubernetes/pause:3.6" {
		t.Errorf("sandbox finding: sandbox %v image %q", f.Sandbox, f.Image)
	}
	eps := rep.Findings[1].Endpoints
	if len(eps) != 2 || eps[0].Endpoint != "m.example:443" || eps[0].Role != "mirror" || eps[0].Cause != "manifest.unknown" ||
		eps[1].Endpoint != "r.example:443" || eps[1].Role != "registry" || eps[1].Cause != "authz.denied" {
		t.Errorf("endpoints = %+v", eps)
	}
	_, text, _ := runExplain(t, sandbox+"\n"+mirrors+"\n")
	for _, want := range []string{"(the node's sandbox image", "endpoints (in the order the runtime tried them):", "m.example:443 mirror: manifest.unknown", "r.example:443 registry: authz.denied"} {
		if !strings.Contains(text, want) {
			t.Errorf("text output lacks %q:\n%s", want, text)
		}
	}
}
