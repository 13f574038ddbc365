package clustercmd

import (
	"bytes"
	"context"
	"flag"
	"github.com/pullpath/pullpath/internal/cli"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/pullpath/pullpath/internal/cluster"
	"github.com/pullpath/pullpath/internal/cluster/clustertest"
	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/labtest"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/report/htmltest"
)

type htmlCase struct {
	name, html string
	failing    string // data-hop of the failing hop; "" for a working path
	screenshot string // docs/ file refreshed by -update
}

// TestHTMLReportInChromium renders probe -o html for lab scenarios and
// diagnose -o html for the AKS fixture, loads each page in a real headless
// Chromium, and checks the DOM marks the failing hop, the console is
// silent, and the screenshot shows the failure colour exactly when a hop
// failed.
func TestHTMLReportInChromium(t *testing.T) {
	bin := htmltest.Chromium(t)
	dir := t.TempDir()
	// A control page: console detection must see a script error.
	htmltest.CheckConsoleDetection(t, bin)

	l := labtest.New(t, lab.Options{})
	var cases []htmlCase
	for _, c := range []struct{ scenario, failing, shot string }{
		{"healthy", "", ""},
		{"dns-nxdomain", "resolver", ""},
		{"tls-untrusted", "registry", ""},
		{"blob-refused", "blob", "docs/report-probe.png"},
	} {
		sc := labtest.Scenario(t, l, c.scenario)
		stdin, extra := "", []string{"-o", "html"}
		if sc.Username != "" {
			stdin, extra = sc.Password+"\n", append(extra, "--username", sc.Username, "--password-stdin")
		}
		args := append([]string{"pullpath", "probe", sc.Image, "--root", sc.Root, "--platform", sc.Platform, "--timeout", "2s", "--dns-port", strconv.Itoa(l.DNSPort)}, extra...)
		var outb, errb bytes.Buffer
		code := cli.Run(context.Background(), cli.Streams{In: strings.NewReader(stdin), Out: &outb, Err: &errb}, args)
		out, stderr := outb.String(), errb.String()
		if (code == cli.ExitOK) != (c.failing == "") {
			t.Fatalf("probe %s -o html exit %d, stderr %q", c.scenario, code, stderr)
		}
		if sc.Password != "" && strings.Contains(out, sc.Password) {
			t.Errorf("probe %s -o html shows the password", c.scenario)
		}
		cases = append(cases, htmlCase{"probe-" + c.scenario, out, c.failing, c.shot})
	}
	f := clustertest.AKS(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	rep, err := cluster.Diagnose(context.Background(), clustertest.FromClientset(fake.NewSimpleClientset(f.Objects()...)),
		cluster.WorkloadRef{Kind: cluster.KindDeployment, Name: clustertest.Deployment, Namespace: clustertest.Namespace},
		cluster.DiagnoseOptions{}, cluster.WithClassifier(diagnoseClassifier))
	if rep == nil {
		t.Fatal(err)
	}
	render, _ := diagnoseRenderer("html")
	var b bytes.Buffer
	if err := render(&b, rep); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), clustertest.SecretToken) {
		t.Error("diagnose -o html shows the pull secret's password")
	}
	cases = append(cases, htmlCase{"diagnose-aks", b.String(), "registry", "docs/report-diagnose.png"})

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pg := htmltest.Load(t, bin, dir, tc.name, tc.html)
			dom, shot := pg.DOM, pg.Screenshot
			if len(pg.Console) > 0 {
				t.Errorf("console messages:\n%s", strings.Join(pg.Console, "\n"))
			}
			failing := regexp.MustCompile(`<div class="hop failed failing" data-hop="([a-z]+)" data-status="failed" data-failing="true"`).FindAllStringSubmatch(dom, -1)
			switch {
			case tc.failing == "" && len(failing) > 0:
				t.Errorf("a working path marks hop %v failing", failing)
			case tc.failing != "" && (len(failing) != 1 || failing[0][1] != tc.failing):
				t.Errorf("failing hops %v, want exactly %q", failing, tc.failing)
			case tc.failing != "" && !strings.Contains(dom, `data-failing-hop="`+tc.failing+`"`):
				// The page's script ran in the browser and found the hop.
				t.Errorf("the page's script did not mark body data-failing-hop=%q", tc.failing)
			}
			red, total := htmltest.ColourPixels(t, shot, report.FailureColor)
			green, _ := htmltest.ColourPixels(t, shot, report.OKColor)
			if tc.failing != "" && red < 2000 {
				t.Errorf("screenshot has %d of %d pixels in the failure colour, want the failing hop filled", red, total)
			}
			if tc.failing == "" && (red > 0 || green < 2000) {
				t.Errorf("screenshot of a working path: %d failure-coloured and %d ok-coloured pixels", red, green)
			}
			if *updateShots && tc.screenshot != "" {
				data, err := os.ReadFile(shot)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join("..", "..", "..", tc.screenshot), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

var updateShots = flag.Bool("update", false, "rewrite the README screenshots under docs/")
