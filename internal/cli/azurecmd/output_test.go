package azurecmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/pullpath/pullpath/internal/cli"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/report/htmltest"
	"github.com/pullpath/pullpath/internal/schematest"
)

// azureCase is one az dump scenario with the target it needs and the
// verdict's cause ("" for ok).
type azureCase struct{ dir, target, cause string }

// azureCases lists every scenario under internal/azure/testdata/az, with
// the on-premises registry of internal/azure's scenario table as target.
func azureCases(t *testing.T) []azureCase {
	t.Helper()
	ents, err := os.ReadDir(azDumps)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"healthy": "", "blackhole": "route.blackhole", "no-route": "route.no-route",
		"transit-one-side": "route.gateway-transit", "transit-both-sides": "route.gateway-transit", "peering-one-way": "route.peering",
		"zone-not-linked": "dns.zone-not-linked", "custom-dns": "dns.custom-forwarder", "custom-dns-unlinked": "dns.zone-not-linked",
		"missing-data-record": "dns.missing-record", "nsg-deny": "route.nsg-deny", "return-path": "route.return-path"}
	var out []azureCase
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		cause, ok := want[e.Name()]
		if !ok {
			t.Errorf("scenario %s has no expected cause here: add it", e.Name())
			continue
		}
		target := "registry.corp.example=192.168.10.20"
		if e.Name() == "no-route" {
			target = "registry.corp.example=172.20.5.5"
		}
		out = append(out, azureCase{e.Name(), target, cause})
	}
	if len(out) != len(want) {
		t.Errorf("%d scenarios in %s, want %d", len(out), azDumps, len(want))
	}
	return out
}

// TestSchemaAzureEveryScenario validates `azure -o json` of every az dump
// scenario against schema/azurereport.schema.json, checks that -o yaml is
// the same document, and that the schema rejects a drifted report.
func TestSchemaAzureEveryScenario(t *testing.T) {
	for _, tc := range azureCases(t) {
		t.Run(tc.dir, func(t *testing.T) {
			args := []string{"--from-az", azDumps + tc.dir, "--target", tc.target}
			code, out, stderr := runAzure(t, append(args, "-o", "json")...)
			if (code == cli.ExitOK) != (tc.cause == "") || (code != cli.ExitOK && code != cli.ExitFailure) {
				t.Fatalf("exit %d, want cause %q; stderr %q", code, tc.cause, stderr)
			}
			if tc.cause != "" && !strings.Contains(out, `"cause": "`+tc.cause+`"`) {
				t.Errorf("-o json does not name %s", tc.cause)
			}
			schematest.Validate(t, report.KindAzureReport, out)
			_, y, _ := runAzure(t, append(args, "-o", "yaml")...)
			schematest.SameDocument(t, out, y)
		})
	}
	// The agreement with a data-plane document, and the drift the schema
	// must reject, on a real report.
	probe := filepath.Join(t.TempDir(), "probe.json")
	if err := os.WriteFile(probe, []byte(`{"apiVersion":"pullpath.dev/v1alpha1","kind":"ProbeReport","verdict":{"ok":false,"layer":"route","cause":"route.timeout","role":"registry","owner":"network","endpoint":"registry.corp.example:443","summary":"x","next":[]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, _ := runAzure(t, "--from-az", azDumps+"blackhole", "--target", "registry.corp.example=192.168.10.20", "--data-plane", probe, "-o", "json")
	if !strings.Contains(out, `"agreement"`) {
		t.Fatalf("no agreement in:\n%s", out)
	}
	schematest.Validate(t, report.KindAzureReport, out)
	schematest.RejectsEdits(t, report.KindAzureReport, out,
		schematest.Edit{Name: "renamed field", Old: `"routes_from":`, New: `"routesFrom":`},
		schematest.Edit{Name: "removed required field", Old: `"certain": true,`, New: ``},
		schematest.Edit{Name: "Go field name", Old: `"next_hop_type":`, New: `"NextHopType":`},
		schematest.Edit{Name: "null list", Old: `"warnings": []`, New: `"warnings": null`},
		schematest.Edit{Name: "unknown step", Old: `"step": "route"`, New: `"step": "routing"`},
		schematest.Edit{Name: "ok verdict with a layer", Old: `"ok": false,
    "layer": "route"`, New: `"ok": true,
    "layer": "route"`},
		schematest.Edit{Name: "wrong source", Old: `"source": "data-plane"`, New: `"source": "control-plane"`},
		schematest.Edit{Name: "wrong kind", Old: `"AzureReport"`, New: `"AzureReports"`})
}

// TestSchemaAzureRealScenarios validates `azure -o json` of every scenario
// built from real az and ARM output, and that the schema rejects a certain
// verdict that names no dump.
func TestSchemaAzureRealScenarios(t *testing.T) {
	real := strings.TrimSuffix(azDumps, "az/") + "real/"
	ents, err := os.ReadDir(real)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if !e.IsDir() || e.Name() == "raw" {
			continue
		}
		n++
		_, out, stderr := runAzure(t, "--from-az", real+e.Name(), "--target", "registry.corp.example=10.10.0.4", "-o", "json")
		if !strings.Contains(out, `"kind": "AzureReport"`) {
			t.Fatalf("%s: no report; stderr %q", e.Name(), stderr)
		}
		schematest.Validate(t, report.KindAzureReport, out)
	}
	if n < 11 {
		t.Errorf("%d real scenarios, want at least the 11 recorded from real az and ARM output", n)
	}
	_, out, _ := runAzure(t, "--from-az", real+"udr-none", "--target", "registry.corp.example=10.10.0.4", "-o", "json")
	schematest.RejectsEdits(t, report.KindAzureReport, out,
		schematest.Edit{Name: "certain verdict without proof", Old: `"from": [
      "vnet-spoke2.json",
      "vnet-spoke2.json virtualNetworkPeerings",
      "route-table-spoke2.json"
    ]`, New: `"from": []`})
}

// TestSchemaAzureSDKPartial validates the partial report of the SDK path
// when ARM refuses every call (input mode sdk, warnings, no pool).
func TestSchemaAzureSDKPartial(t *testing.T) {
	var out, errb bytes.Buffer
	cmd := newCmdAzure(&azureOptions{streams: cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb},
		credential: func() (azcore.TokenCredential, error) { return canaryCred{}, nil }, clientOpts: armOptions(&hostileARM{})})
	cmd.SetArgs([]string{"--subscription", "00000000-0000-0000-0000-00000000c0de", "--cluster", "rg-aks/aks-prod", "--registry", "rg-hub/acrprod", "-o", "json"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	_ = cmd.ExecuteContext(context.Background())
	if !strings.Contains(out.String(), `"mode": "sdk"`) {
		t.Fatalf("no sdk report:\n%s%s", out.String(), errb.String())
	}
	schematest.Validate(t, report.KindAzureReport, out.String())
}

var failingHopRE = regexp.MustCompile(`<div class="hop [a-z-]+ failing" data-hop="([a-z]+)" data-status="([a-z-]+)" data-failing="true"`)

// TestAzureHTML renders -o html for every scenario: one self-contained
// page, one drawn path per pool, the hop of the verdict's check marked
// failing (coloured failed when Azure's configuration proves it, warning
// when it cannot), none on a healthy path, and the same verdict as -o json.
func TestAzureHTML(t *testing.T) {
	step := map[string]string{"route.blackhole": "route", "route.no-route": "route", "route.gateway-transit": "route", "route.peering": "route",
		"dns.zone-not-linked": "dns", "dns.custom-forwarder": "dns", "dns.missing-record": "dns", "route.nsg-deny": "security", "route.return-path": "return"}
	for _, tc := range azureCases(t) {
		t.Run(tc.dir, func(t *testing.T) {
			_, html, stderr := runAzure(t, "--from-az", azDumps+tc.dir, "--target", tc.target, "-o", "html")
			if !strings.HasPrefix(html, "<!DOCTYPE html>") || !strings.Contains(html, `data-kind="AzureReport"`) {
				t.Fatalf("not the page:\n%.300s%s", html, stderr)
			}
			if n := strings.Count(html, `<section class="pool-path`); n != 1 {
				t.Errorf("%d pool paths, want 1 (nodepool1)", n)
			}
			hops := failingHopRE.FindAllStringSubmatch(html, -1)
			switch {
			case tc.cause == "" && len(hops) > 0:
				t.Errorf("a working path marks %v failing", hops)
			case tc.cause != "" && (len(hops) != 1 || hops[0][1] != step[tc.cause]):
				t.Errorf("failing hops %v, want exactly %s", hops, step[tc.cause])
			case tc.cause == "dns.custom-forwarder" && hops[0][2] != report.HopWarning:
				t.Errorf("an unconfirmed verdict's hop is %s, want warning", hops[0][2])
			case tc.cause != "" && tc.cause != "dns.custom-forwarder" && hops[0][2] != report.HopFailed:
				t.Errorf("a certain verdict's hop is %s, want failed", hops[0][2])
			}
			want := tc.cause
			if want == "" {
				want = "ok"
			}
			if !regexp.MustCompile(`id="verdict" data-layer="[a-z]+" data-cause="` + regexp.QuoteMeta(want) + `"`).MatchString(html) {
				t.Errorf("the page's verdict is not %s", want)
			}
		})
	}
	code, _, stderr := runAzure(t, "--from-az", azDumps+"healthy", "-o", "xml")
	if want := `unknown output format "xml" (valid: text, json, yaml, html)`; code != cli.ExitUsage || !strings.Contains(stderr, want) {
		t.Errorf("-o xml: exit %d, stderr %q; want 2 and %q", code, stderr, want)
	}
}

// TestAzureHTMLInChromium loads the blackhole and the unconfirmed
// custom-DNS pages in a real headless Chromium: the failing hop is marked
// after the page's script ran, the console is silent, and the screenshot
// holds the failure colour only where Azure's configuration proves the
// fault. The SDK path's page (ARM echoing the token back) must not show the
// token.
func TestAzureHTMLInChromium(t *testing.T) {
	bin := htmltest.Chromium(t)
	htmltest.CheckConsoleDetection(t, bin)
	dir := t.TempDir()
	for _, tc := range []struct {
		dir, hop string
		red      bool
		shot     string
	}{
		{"blackhole", "route", true, "docs/report-azure.png"},
		{"custom-dns", "dns", false, ""},
		{"healthy", "", false, ""},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			_, html, _ := runAzure(t, "--from-az", azDumps+tc.dir, "--target", "registry.corp.example=192.168.10.20", "-o", "html")
			pg := htmltest.Load(t, bin, dir, tc.dir, html)
			if len(pg.Console) > 0 {
				t.Errorf("console messages:\n%s", strings.Join(pg.Console, "\n"))
			}
			marked := regexp.MustCompile(`data-path="nodepool1"[^>]*data-failing-hop="([a-z]+)"`).FindStringSubmatch(pg.DOM)
			switch {
			case tc.hop == "" && marked != nil:
				t.Errorf("a working path has failing hop %s", marked[1])
			case tc.hop != "" && (marked == nil || marked[1] != tc.hop):
				t.Errorf("the page's script marked %v, want %s", marked, tc.hop)
			}
			// A filled hop is about 150x90 pixels; the failing verdict's
			// border alone is a few thousand.
			red, total := htmltest.ColourPixels(t, pg.Screenshot, report.FailureColor)
			orange, _ := htmltest.ColourPixels(t, pg.Screenshot, report.WarningColor)
			green, _ := htmltest.ColourPixels(t, pg.Screenshot, report.OKColor)
			t.Logf("screenshot: %d pixels, %d failure-, %d warning-, %d ok-coloured", total, red, orange, green)
			if tc.red != (red >= 10000) || green < 10000 || (tc.hop != "" && !tc.red && orange < 10000) {
				t.Errorf("screenshot: %d failure-coloured pixels (want a failed hop: %v), %d warning-coloured, %d ok-coloured", red, tc.red, orange, green)
			}
			if *updateAzure && tc.shot != "" {
				data, err := os.ReadFile(pg.Screenshot)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join("..", "..", "..", tc.shot), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	t.Run("sdk token canary", func(t *testing.T) {
		arm := &hostileARM{}
		var out, errb bytes.Buffer
		cmd := newCmdAzure(&azureOptions{streams: cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb},
			credential: func() (azcore.TokenCredential, error) { return canaryCred{}, nil }, clientOpts: armOptions(arm)})
		cmd.SetArgs([]string{"--subscription", "00000000-0000-0000-0000-00000000c0de", "--cluster", "rg-aks/aks-prod", "--registry", "rg-hub/acrprod", "-o", "html"})
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		_ = cmd.ExecuteContext(context.Background())
		if arm.seen == 0 || !strings.Contains(out.String(), "401") {
			t.Fatalf("the token never reached ARM, or the page does not name the 401:\n%.2000s", out.String())
		}
		for _, part := range strings.Split(canaryJWT, ".") {
			if strings.Contains(out.String()+errb.String(), part) {
				t.Fatalf("token part %q in the page", part)
			}
		}
		pg := htmltest.Load(t, bin, dir, "sdk-canary", out.String())
		if len(pg.Console) > 0 {
			t.Errorf("console messages:\n%s", strings.Join(pg.Console, "\n"))
		}
	})
}

// The page names the proof of a certain verdict and the command that
// settles an uncertain one, as the text does.
func TestAzureHTMLProofAndSettle(t *testing.T) {
	_, html, _ := runAzure(t, "--from-az", azDumps+"blackhole", "--target", "registry.corp.example=192.168.10.20", "-o", "html")
	if !strings.Contains(html, "Proof: routes-nodepool1.json") {
		t.Errorf("blackhole page lacks its proof")
	}
	_, html, _ = runAzure(t, "--from-az", azDumps+"custom-dns", "-o", "html")
	if !strings.Contains(html, "Settle: on each of 10.0.2.4, 10.0.2.5") {
		t.Errorf("custom-dns page lacks the command that settles it")
	}
}
