// Package htmltest loads pullpath's HTML reports in a real headless
// Chromium (Debian's chromium package) for the tests of every command that
// writes one: the DOM after the page's script ran, the console, and a
// screenshot whose pixels can be counted.
package htmltest

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Chromium finds the headless browser, or skips the test saying why.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("SKIPPED: the HTML report's browser test needs chromium (apt-get install -y chromium; .ci/run installs it)")
	return ""
}

// Run loads a file:// page headless with everything that could reach the
// network switched off, and returns stdout and the browser's log.
func Run(t testing.TB, bin, page string, extra ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
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

// Console returns the console messages (script errors, console.log) in a
// browser log.
func Console(log string) []string { return consoleLine.FindAllString(log, -1) }

// CheckConsoleDetection loads a page with a script error and fails the
// test unless Console sees it, so that a silent console proves something.
func CheckConsoleDetection(t testing.TB, bin string) {
	t.Helper()
	bad := filepath.Join(t.TempDir(), "bad.html")
	if err := os.WriteFile(bad, []byte(`<html><body><script>console.error("control"); undefinedFunction();</script></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, log := Run(t, bin, bad, "--dump-dom"); len(Console(log)) < 2 {
		t.Fatalf("console detection misses a page's script errors; log:\n%s", log)
	}
}

// Page is a report loaded in the browser.
type Page struct {
	DOM        string // the DOM after the page's script ran
	Console    []string
	Screenshot string // a PNG file, 1280x900
}

// Load writes html to dir/name.html, loads it in the browser, and takes a
// screenshot. It fails the test when the page names an external asset, or
// the screenshot is missing or too small to be a rendered page.
func Load(t testing.TB, bin, dir, name, html string) Page {
	t.Helper()
	for _, ext := range []string{`src="http`, `href="http`, `@import`, `url(http`} {
		if strings.Contains(html, ext) {
			t.Errorf("page loads an external asset (%s)", ext)
		}
	}
	page := filepath.Join(dir, name+".html")
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, log := Run(t, bin, page, "--dump-dom")
	shot := filepath.Join(dir, name+".png")
	Run(t, bin, page, "--hide-scrollbars", "--window-size=1280,900", "--screenshot="+shot)
	st, err := os.Stat(shot)
	if err != nil || st.Size() < 10<<10 {
		t.Fatalf("screenshot %s: %v; want a rendered page of 10 KiB or more", shot, err)
	}
	return Page{DOM: dom, Console: Console(log), Screenshot: shot}
}

// ColourPixels counts the screenshot's pixels within a small distance of
// c, and all of them.
func ColourPixels(t testing.TB, pngPath string, c [3]uint8) (int, int) {
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
