package azurecmd

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/pullpath/pullpath/internal/cli"
)

const azDumps = "../../azure/testdata/az/"

func runAzure(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Run(context.Background(), cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, append([]string{"pullpath", "azure"}, args...), NewCmdAzure)
	return code, out.String(), errb.String()
}

func TestAzureOfflineJSON(t *testing.T) {
	code, out, stderr := runAzure(t, "--from-az", azDumps+"blackhole", "--target", "registry.corp.example=192.168.10.20", "-o", "json")
	if code != cli.ExitFailure {
		t.Fatalf("exit = %d, want %d (stderr %q)", code, cli.ExitFailure, stderr)
	}
	var doc struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Source     string `json:"source"`
		Input      struct {
			Mode string `json:"mode"`
		} `json:"input"`
		Verdict struct {
			Layer, Cause, Owner, Endpoint, Source, Setting string
		} `json:"verdict"`
		Pools    []json.RawMessage `json:"pools"`
		Warnings []any             `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("-o json is not one object: %v\n%s", err, out)
	}
	if doc.APIVersion != "pullpath.dev/v1alpha1" || doc.Kind != "AzureReport" || doc.Source != "control-plane" || doc.Input.Mode != "az" {
		t.Errorf("envelope = %q %q %q %q", doc.APIVersion, doc.Kind, doc.Source, doc.Input.Mode)
	}
	v := doc.Verdict
	if v.Layer != "route" || v.Cause != "route.blackhole" || v.Owner != "network" || v.Endpoint != "registry.corp.example:443" ||
		v.Source != "control-plane" || !strings.Contains(v.Setting, "route table rt-aks, route to-onprem") {
		t.Errorf("verdict = %+v", v)
	}
	if len(doc.Pools) != 1 || doc.Warnings == nil {
		t.Errorf("pools %d, warnings %v (want [] not null)", len(doc.Pools), doc.Warnings)
	}
}

// The example: route.timeout on the node and route to-onprem with
// next hop None in rt-aks are the same fault.
func TestAzureAgreesWithDataPlane(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	timeout := write("probe.json", `{"apiVersion":"pullpath.dev/v1alpha1","kind":"ProbeReport","verdict":{"ok":false,"layer":"route","cause":"route.timeout","role":"registry","owner":"network","endpoint":"registry.corp.example:443","summary":"x","next":[]}}`)
	authz := write("diagnose.json", `{"apiVersion":"pullpath.dev/v1alpha1","kind":"DiagnoseReport","nodes":[{"name":"aks-nodepool1-12345678-vmss000003","pool":"nodepool1","probe":{"verdict":{"ok":false,"layer":"authz","cause":"authz.denied","summary":"x","next":[]}}}]}`)
	tests := []struct {
		name, dir, file string
		agree           bool
		want            []string
	}{
		{"same fault", "blackhole", timeout, true, []string{"Same fault: route.timeout on the node and route.blackhole", "route table rt-aks, route to-onprem"}},
		{"consistent", "healthy", authz, true, []string{"not a network setting", "on aks-nodepool1-12345678-vmss000003"}},
		{"disagree", "healthy", timeout, false, []string{"cannot see"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, out, stderr := runAzure(t, "--from-az", azDumps+tt.dir, "--target", "registry.corp.example=192.168.10.20", "--data-plane", tt.file, "--no-color")
			word := "disagree"
			if tt.agree {
				word = "agree"
			}
			if !strings.Contains(out, "): "+word+" — ") {
				t.Errorf("output does not say %q:\n%s%s", word, out, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestAzureUsage(t *testing.T) {
	for _, args := range [][]string{
		{}, // neither --cluster nor --from-az
		{"--subscription", "s", "--cluster", "nogroup", "--registry", "rg/r"},
		{"--subscription", "s", "--cluster", "rg/c"}, // no registry or target
		{"--from-az", azDumps + "healthy", "--target", "noequals"},
		{"--from-az", azDumps + "healthy", "-o", "xml"},
		{"--from-az", "/nonexistent/pullpath-az"},
		{"--from-az", azDumps + "healthy", "--data-plane", "/nonexistent/probe.json"},
	} {
		t.Setenv("AZURE_SUBSCRIPTION_ID", "")
		if code, _, stderr := runAzure(t, args...); code != cli.ExitUsage {
			t.Errorf("azure %v exit = %d, want %d (stderr %q)", args, code, cli.ExitUsage, stderr)
		}
	}
}

// canaryJWT is shaped like the ARM access token it stands for.
const canaryJWT = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJjYW5hcnkiOiJhcm0tdG9rZW4tN2YzYSJ9.Y2FuYXJ5LXNpZ25hdHVyZS05YzFlNWIyZA"

type canaryCred struct{}

func (canaryCred) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: canaryJWT, ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// hostileARM answers every request with 401 and echoes the bearer token it
// received in the error code and message, as a hostile or buggy endpoint
// could; it also records that the token did arrive.
type hostileARM struct {
	mu   sync.Mutex
	seen int
}

func (h *hostileARM) Do(req *http.Request) (*http.Response, error) {
	auth := req.Header.Get("Authorization")
	h.mu.Lock()
	if auth == "Bearer "+canaryJWT {
		h.seen++
	}
	h.mu.Unlock()
	body, _ := json.Marshal(map[string]any{"error": map[string]string{
		"code": "InvalidAuthenticationToken " + auth, "message": "The access token " + strings.TrimPrefix(auth, "Bearer ") + " is invalid: token=" + canaryJWT}})
	return &http.Response{StatusCode: http.StatusUnauthorized, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(body)), Request: req}, nil
}

// The canary: the credential's token goes to ARM and nowhere else, even
// when ARM echoes it back in its errors.
func TestAzureTokenNeverInOutput(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			arm := &hostileARM{}
			var out, errb bytes.Buffer
			streams := cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}
			cmd := newCmdAzure(&azureOptions{streams: streams,
				credential: func() (azcore.TokenCredential, error) { return canaryCred{}, nil },
				clientOpts: armOptions(arm)})
			cmd.SetArgs([]string{"--subscription", "00000000-0000-0000-0000-00000000c0de", "--cluster", "rg-aks/aks-prod",
				"--registry", "rg-hub/acrprod", "-o", format})
			cmd.SilenceUsage, cmd.SilenceErrors = true, true
			cmd.SetOut(&out)
			cmd.SetErr(&errb)
			err := cmd.ExecuteContext(context.Background())
			if arm.seen == 0 {
				t.Fatal("the token never reached ARM: the canary proves nothing")
			}
			all := out.String() + errb.String()
			if err != nil {
				all += err.Error()
			}
			for _, part := range strings.Split(canaryJWT, ".") {
				if strings.Contains(all, part) {
					t.Fatalf("token part %q in output:\n%s", part, all)
				}
			}
			if !strings.Contains(all, "401") {
				t.Errorf("output does not name the 401:\n%s", all)
			}
		})
	}
}

func armOptions(t policy.Transporter) *arm.ClientOptions {
	return &arm.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: t, Retry: policy.RetryOptions{MaxRetries: -1}}}
}

// The examples of docs/azure.md are real output: every line shown must be
// a line of the command's output today.
func TestAzureDocExamples(t *testing.T) {
	b, err := os.ReadFile("../../../docs/azure.md")
	if err != nil {
		t.Fatal(err)
	}
	sec := string(b)
	n := 0
	for _, block := range strings.Split(sec, "```\n$ pullpath azure ")[1:] {
		body, _, _ := strings.Cut(block, "```")
		lines := strings.Split(strings.TrimRight(body, "\n"), "\n")
		args := strings.Fields(strings.Replace(strings.Replace(lines[0], "internal/azure/testdata/az/", azDumps, 1),
			"internal/azure/testdata/real/", strings.TrimSuffix(azDumps, "az/")+"real/", 1))
		_, out, _ := runAzure(t, append(args, "--no-color")...)
		have := map[string]bool{}
		for _, l := range strings.Split(out, "\n") {
			have[l] = true
		}
		for _, l := range lines[1:] {
			if !have[l] {
				t.Errorf("docs/azure.md example %q shows a line the command does not print:\n%s", lines[0], l)
			}
		}
		n++
	}
	if n < 7 {
		t.Errorf("docs/azure.md shows %d examples, want one per scenario kind (7)", n)
	}
}

var updateAzure = flag.Bool("update-azure", false, "rewrite testdata/azure-*.golden")

// The text rendering of two reports, as golden files: a failure with its
// data-plane agreement, and an unconfirmed DNS verdict.
func TestAzureTextGolden(t *testing.T) {
	dir := t.TempDir()
	probe := filepath.Join(dir, "probe.json")
	if err := os.WriteFile(probe, []byte(`{"kind":"ProbeReport","verdict":{"ok":false,"layer":"route","cause":"route.timeout","endpoint":"registry.corp.example:443","summary":"x","next":[]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"blackhole", []string{"--from-az", azDumps + "blackhole", "--target", "registry.corp.example=192.168.10.20", "--data-plane", probe}},
		{"custom-dns", []string{"--from-az", azDumps + "custom-dns"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, out, _ := runAzure(t, append(tt.args, "--no-color")...)
			out = strings.ReplaceAll(out, probe, "probe.json")
			golden := filepath.Join("testdata", "azure-"+tt.name+".golden")
			if *updateAzure {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update-azure)", err)
			}
			if out != string(want) {
				t.Errorf("text output differs from %s (run with -update-azure):\n%s", golden, out)
			}
		})
	}
}
