package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/labtest"
	"github.com/pullpath/pullpath/internal/probe/criruntime"
)

// TestRuntimePullMissingSocket: --runtime-pull with no CRI socket at the
// path fails at once naming the path and the OS error, exits 1, and the
// last line does not say OK although the probe's own path works.
func TestRuntimePullMissingSocket(t *testing.T) {
	l := labtest.New(t, lab.Options{})
	sc := labtest.Scenario(t, l, "healthy")
	sock := filepath.Join(t.TempDir(), "containerd.sock")
	// The features of the full binary: probe --runtime-pull has a CRI client.
	full := Features{RuntimeDialer: criruntime.Dial}
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := RunWith(context.Background(), Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, append([]string{"pullpath"}, args...), full)
		return code, out.String(), errb.String()
	}
	code, out, stderr := run(probeArgs(l, sc, "--runtime-pull", "--cri-socket", sock)...)
	if code != ExitFailure {
		t.Errorf("probe --runtime-pull (missing socket) exit = %d, want %d; stderr %q", code, ExitFailure, stderr)
	}
	if !strings.Contains(out, sock) || !strings.Contains(out, "no such file or directory") {
		t.Errorf("probe --runtime-pull output does not name %s and the OS error:\n%s", sock, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if last := lines[len(lines)-1]; strings.HasPrefix(last, "OK") || !strings.HasPrefix(last, "FAIL") {
		t.Errorf("last line = %q, want FAIL when the exit code is 1", last)
	}
	// The runtime part alone, from -o json: well inside the 5 s dial timeout.
	_, jout, _ := run(probeArgs(l, sc, "--runtime-pull", "--cri-socket", sock, "-o", "json")...)
	var rep struct {
		Runtime struct {
			Millis int64  `json:"ms"`
			Error  string `json:"error"`
		} `json:"runtime"`
	}
	if err := json.Unmarshal([]byte(jout), &rep); err != nil {
		t.Fatalf("probe -o json: %v", err)
	}
	if rep.Runtime.Error == "" || rep.Runtime.Millis > 3000 {
		t.Errorf("runtime pull = %+v, want an error within 3 s, not the 5 s wait for the socket", rep.Runtime)
	}
}
