package clustercmd

import (
	"bytes"
	"context"
	"flag"
	"github.com/pullpath/pullpath/internal/cli"
	"image/png"
	"os"
	"os/exec"
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
)

// chromium finds Debian's headless browser, or skips loudly.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("SKIPPED: the HTML report's browser test needs chromium (apt-get install -y chromium; .ci/run installs it)")
	return ""
}

// runChromium loads a file:// page headless with everything that could
// reach the network switched off, and returns stdout and the log.
func runChromium(t *testing.T, bin, page string, extra ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}
	args = append(append(args, extra...), "file://"+page)
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &log
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", extra, err, log.String())
	}
	return out.String(), log.String()
}

var consoleLine = regexp.MustCompile(`(?m)^.*:CONSOLE[:(].*$`)

// colourPixels counts the screenshot's pixels within a small distance of c.
func colourPixels(t *testing.T, pngPath string, c [3]uint8) (int, int) {
	t.Helper()
	f, err := os.Open(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decoding the screenshot: %v", err)
	}
	near := func(a uint32, b uint8) bool { d := int(a>>8) - int(b); return d > -8 && d < 8 }
	n, total := 0, 0
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			total++
			if near(r, c[0]) && near(g, c[1]) && near(b, c[2]) {
				n++
			}
		}
	}
	return n, total
}

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
	bin := chromium(t)
	dir := t.TempDir()

	// A control page: console detection must see a script error.
	bad := filepath.Join(dir, "bad.html")
	if err := os.WriteFile(bad, []byte(`<html><body><script>console.error("control"); undefinedFunction();</script></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, log := runChromium(t, bin, bad, "--dump-dom"); len(consoleLine.FindAllString(log, -1)) < 2 {
		t.Fatalf("console detection misses a page's script errors; log:\n%s", log)
	}

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
			for _, ext := range []string{`src="http`, `href="http`, `@import`, `url(http`} {
				if strings.Contains(tc.html, ext) {
					t.Errorf("page loads an external asset (%s)", ext)
				}
			}
			page := filepath.Join(dir, tc.name+".html")
			if err := os.WriteFile(page, []byte(tc.html), 0o644); err != nil {
				t.Fatal(err)
			}
			dom, log := runChromium(t, bin, page, "--dump-dom")
			if c := consoleLine.FindAllString(log, -1); len(c) > 0 {
				t.Errorf("console messages:\n%s", strings.Join(c, "\n"))
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
			shot := filepath.Join(dir, tc.name+".png")
			runChromium(t, bin, page, "--hide-scrollbars", "--window-size=1280,900", "--screenshot="+shot)
			st, err := os.Stat(shot)
			if err != nil || st.Size() < 10<<10 {
				t.Fatalf("screenshot %s: %v, %d bytes; want a rendered page", shot, err, st.Size())
			}
			red, total := colourPixels(t, shot, report.FailureColor)
			green, _ := colourPixels(t, shot, report.OKColor)
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
