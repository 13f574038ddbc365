package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		{"bad format", dnsEvent, []string{"-o", "yaml"}, ExitUsage},
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

func TestExplainJSONOneObject(t *testing.T) {
	code, out, _ := runExplain(t, dnsEvent, "-o", "json")
	if code != ExitFailure {
		t.Fatalf("exit = %d, want %d", code, ExitFailure)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatalf("explain -o json with one message is not one object: %v\n%s", err, out)
	}
	for k, want := range map[string]string{"layer": "dns", "cause": "dns.nxdomain", "role": "registry", "owner": "dns", "endpoint": "myacr.azurecr.io:443", "host": "myacr.azurecr.io"} {
		if obj[k] != want {
			t.Errorf("explain -o json %s = %v, want %q", k, obj[k], want)
		}
	}
	v, _ := obj["verdict"].(map[string]any)
	if v["layer"] != "dns" {
		t.Errorf("explain -o json verdict.layer = %v, want dns", v["layer"])
	}
}

func TestExplainJSONArray(t *testing.T) {
	in := dnsEvent + "\n" + `Failed to pull image "r.example/a:1": rpc error: code = NotFound desc = failed to pull and unpack image "r.example/a:1": failed to resolve reference "r.example/a:1": r.example/a:1: not found` + "\n"
	_, out, _ := runExplain(t, in, "-o", "json")
	var arr []map[string]any
	if err := json.Unmarshal([]byte(out), &arr); err != nil {
		t.Fatalf("explain -o json with two messages is not an array: %v\n%s", err, out)
	}
	if len(arr) != 2 || arr[0]["cause"] != "dns.nxdomain" || arr[1]["cause"] != "manifest.unknown" {
		t.Errorf("explain -o json = %v, want dns.nxdomain then manifest.unknown", arr)
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
