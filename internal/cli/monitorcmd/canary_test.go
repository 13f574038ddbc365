package monitorcmd

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/cli"
	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/labtest"
)

// TestMonitorCredentialCanary gives the agent credentials the way the
// DaemonSet does (docker_config: a mounted dockerconfigjson) and checks that
// no form of the password appears in what it prints (--once text and json,
// its log on stderr) or serves (/metrics is covered by the agent's labels:
// target names only), for a success, an auth failure and a blob failure.
func TestMonitorCredentialCanary(t *testing.T) {
	l := labtest.New(t, lab.Options{})
	healthy := labtest.Scenario(t, l, "healthy-auth")
	blob := labtest.Scenario(t, l, "blob-refused")
	const canary = "pp-monitor-canary-Qz81Kd0w"
	for _, rc := range []struct {
		name     string
		sc       lab.Scenario
		pass     string
		wantExit int
	}{
		{"success", healthy, healthy.Password, cli.ExitOK},
		{"auth failure", healthy, canary, cli.ExitFailure},
		{"blob failure", blob, blob.Password, cli.ExitFailure},
	} {
		for _, output := range []string{"text", "json"} {
			dir := t.TempDir()
			host := rc.sc.Image[:strings.IndexByte(rc.sc.Image, '/')]
			dc, _ := json.Marshal(map[string]any{"auths": map[string]any{host: map[string]string{
				"auth": base64.StdEncoding.EncodeToString([]byte(rc.sc.Username + ":" + rc.pass))}}})
			dcFile := filepath.Join(dir, "config.json")
			cfgFile := filepath.Join(dir, "monitor.yaml")
			if err := os.WriteFile(dcFile, dc, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(cfgFile, []byte("targets:\n  - {name: app, image: "+rc.sc.Image+"}\ntimeout: 2s\ndocker_config: "+dcFile+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			code, out, stderr := run(t, "monitor", "--once", "-o", output, "--config", cfgFile, "--root", rc.sc.Root, "--dns-port", strconv.Itoa(l.DNSPort))
			if code != rc.wantExit {
				t.Errorf("%s -o %s: exit %d, want %d\n%s%s", rc.name, output, code, rc.wantExit, out, stderr)
			}
			js, _ := json.Marshal(rc.pass)
			for _, form := range []string{rc.pass, base64.StdEncoding.EncodeToString([]byte(rc.sc.Username + ":" + rc.pass)),
				base64.StdEncoding.EncodeToString([]byte(rc.pass)), url.QueryEscape(rc.pass), strings.Trim(string(js), `"`)} {
				if strings.Contains(out+stderr, form) {
					t.Errorf("%s -o %s: the output holds the password (as %q):\n%s%s", rc.name, output, form, out, stderr)
				}
			}
		}
	}
}
