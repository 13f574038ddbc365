package report

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pullpath/pullpath/internal/probe"
	"github.com/pullpath/pullpath/internal/verdict"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func blobFailure() *probe.Report {
	v := verdict.FromError(verdict.Wrap("route.refused", verdict.RoleBlob, "deadblob.lab.test:443", errString("dial tcp 127.0.10.99:443: connect: connection refused")))
	return &probe.Report{
		Image: "registry.lab.test/blobdead/app:1.0", Reference: "registry.lab.test/blobdead/app:1.0", Root: "/host", Platform: "linux/amd64",
		Identity: `user "puller" (from --password-stdin)`, Started: time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC), Millis: 20,
		Plan: []probe.PlanHost{{Host: "registry.lab.test", Scheme: "https", Path: "/v2", Role: verdict.RoleRegistry}},
		Endpoints: []probe.Endpoint{
			{Host: "registry.lab.test", Port: 443, Role: verdict.RoleRegistry, Steps: []probe.Step{
				{Name: "dns", Target: "registry.lab.test", Status: probe.StatusOK, Detail: "→ 127.0.10.1 via 127.0.53.1:53", Millis: 0.4},
				{Name: "route", Target: "registry.lab.test -> 127.0.10.1:443", Status: probe.StatusOK, Detail: "via lo", Millis: 0.1},
				{Name: "tls", Target: "registry.lab.test -> 127.0.10.1:443", Status: probe.StatusOK, Detail: "TLS 1.3, issuer CN=pullpath lab CA, valid until 2027-11-30", Millis: 1.9},
				{Name: "http", Target: "HEAD /v2/blobdead/app/manifests/1.0", Status: probe.StatusOK, Detail: "401 Unauthorized", Millis: 4},
				{Name: "http", Target: "GET /v2/blobdead/app/blobs/sha256:655c", Status: probe.StatusOK, Detail: "307 Temporary Redirect → https://deadblob.lab.test/data?REDACTED", Millis: 3.2},
			}},
			{Host: "deadblob.lab.test", Port: 443, Role: verdict.RoleBlob, Steps: []probe.Step{
				{Name: "dns", Target: "deadblob.lab.test", Status: probe.StatusOK, Detail: "→ 127.0.10.99 via 127.0.53.1:53", Millis: 0.6},
				{Name: "route", Target: "deadblob.lab.test -> 127.0.10.99:443", Status: probe.StatusFailed, Cause: "route.refused", Detail: "dial tcp 127.0.10.99:443: connect: connection refused", Millis: 0.2},
				{Name: "tls", Target: "deadblob.lab.test", Status: probe.StatusSkipped, Detail: "blocked by route"},
			}},
		},
		Blobs: []probe.Blob{
			{Digest: "sha256:655cdffbbe464ed3ea4ee6612c0676f4761ec07dc0b936ded8edb1a38e4d9834", Size: 100, Error: "route.refused deadblob.lab.test:443: dial tcp 127.0.10.99:443: connect: connection refused"},
			{Digest: "sha256:1c72070b27811a16d6d2377a43d5298a46a64aa1112c56c713cac70de25e835c", Size: 200, Error: "skipped: cancelled after an earlier failure"},
		},
		Warnings: []verdict.Warning{{Code: "dns.hosts-entry", Endpoint: "registry.lab.test:443", Message: "registry.lab.test is answered from /etc/hosts"}},
		Verdict:  v,
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func TestProbeTextGolden(t *testing.T) {
	ok := blobFailure()
	ok.Verdict = verdict.OKVerdict("The pull path works: manifest from registry.lab.test:443, 2 blobs (300 B) downloaded and verified from blob.lab.test.")
	ok.Blobs = []probe.Blob{{Digest: "sha256:aa", Size: 100, Bytes: 100, Verified: true, Host: "blob.lab.test"}, {Digest: "sha256:bb", Size: 200, Bytes: 200, Verified: true, Host: "blob.lab.test"}}
	ok.Endpoints = ok.Endpoints[:1]
	for name, r := range map[string]*probe.Report{"probe-blob-refused": blobFailure(), "probe-ok": ok} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := ProbeText(&buf, r, Style{}); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("reading golden file (run with -update): %v", err)
			}
			if diff := cmp.Diff(string(want), buf.String()); diff != "" {
				t.Errorf("ProbeText(%s) mismatch (-want +got):\n%s", name, diff)
			}
		})
	}
}

func TestProbeTextColourOnlyWhenAsked(t *testing.T) {
	var plain, colour bytes.Buffer
	_ = ProbeText(&plain, blobFailure(), Style{})
	_ = ProbeText(&colour, blobFailure(), Style{Color: true})
	if strings.Contains(plain.String(), "\x1b[") {
		t.Error("plain text contains escape codes")
	}
	if !strings.Contains(colour.String(), "\x1b[31m") {
		t.Error("colour text has no red for the failure")
	}
}

func TestSummary(t *testing.T) {
	v := blobFailure().Verdict
	if got, want := Summary(v, 1500), "FAIL route.refused at deadblob.lab.test:443 (blob), owner network, in 1.50s"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	if got := Summary(verdict.OKVerdict("x"), 12); got != "OK in 12ms" {
		t.Errorf("Summary(ok) = %q", got)
	}
}

func TestCheckFormat(t *testing.T) {
	err := CheckFormatIn("x", AllFormats)
	if want := `unknown output format "x" (valid: text, json, yaml, html)`; err == nil || err.Error() != want {
		t.Errorf("CheckFormatIn(x) = %v, want %s", err, want)
	}
	for _, f := range DocumentFormats {
		if err := CheckFormat(f); err != nil {
			t.Errorf("CheckFormat(%s) = %v", f, err)
		}
	}
	if err := CheckFormat("html"); err == nil {
		t.Errorf("CheckFormat(html) = nil, want an error: html is only for probe and diagnose")
	}
}

func TestDocumentEnvelope(t *testing.T) {
	r := blobFailure()
	r.Plan[0].Capabilities = nil
	r.Endpoints[1].Steps[0].Facts = map[string]any{"answers": []struct {
		CNAMEs []string `json:"cnames"`
	}{{}}}
	ok := verdict.Verdict{OK: true, Summary: "fine"}
	for _, tt := range []struct {
		name string
		v    any
		want []string // substrings of the indented JSON
		not  []string
	}{
		{"probe", r, []string{`"capabilities": []`, `"cnames": []`, `"duration_ms": 20`}, []string{"null", `"ms"`}},
		{"ok verdict", &struct {
			V verdict.Verdict `json:"verdict"`
		}{ok}, []string{`"layer": "none"`, `"cause": "ok"`, `"next": []`}, []string{"null"}},
		{"empty object", &struct{}{}, []string{"\"ProbeReport\"\n}"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteDocument(&b, FormatJSON, KindProbeReport, tt.v); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if !strings.HasPrefix(out, "{\n  \"apiVersion\": \"pullpath.dev/v1alpha1\",\n  \"kind\": \"ProbeReport\"") {
				t.Errorf("document starts %.80q, want apiVersion then kind", out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("document lacks %s:\n%s", w, out)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(out, w) {
					t.Errorf("document holds %s:\n%s", w, out)
				}
			}
		})
	}
	if err := WriteDocument(io.Discard, FormatJSON, KindProbeReport, []int{1}); err == nil {
		t.Error("WriteDocument of an array = nil error, want: not a JSON object")
	}
}
