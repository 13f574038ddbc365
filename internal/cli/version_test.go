package cli

import (
	"runtime"
	"strings"
	"testing"
)

func TestVersionDocument(t *testing.T) {
	code, out, stderr := runCLI(t, "", "version", "-o", "json")
	if code != ExitOK {
		t.Fatalf("version exit %d, stderr %q", code, stderr)
	}
	validateDoc(t, "VersionInfo", out)
	if !strings.Contains(out, `"go_version": "`+runtime.Version()+`"`) || !strings.Contains(out, `"platform": "`+runtime.GOOS+"/"+runtime.GOARCH+`"`) {
		t.Errorf("version -o json lacks the Go version or platform:\n%s", out)
	}
	old := [3]string{Version, Commit, BuildDate}
	Version, Commit, BuildDate = "v1.2.3", "0123abcd", "2026-12-01T00:00:00Z"
	defer func() { Version, Commit, BuildDate = old[0], old[1], old[2] }()
	_, text, _ := runCLI(t, "", "version")
	_, flag, _ := runCLI(t, "", "--version")
	for _, want := range []string{"pullpath v1.2.3", "commit:    0123abcd", "built:     2026-12-01T00:00:00Z", "platform:  " + runtime.GOOS + "/" + runtime.GOARCH} {
		if !strings.Contains(text, want) {
			t.Errorf("pullpath version lacks %q:\n%s", want, text)
		}
	}
	if flag != text {
		t.Errorf("pullpath --version = %q, want what pullpath version prints, %q", flag, text)
	}
}
