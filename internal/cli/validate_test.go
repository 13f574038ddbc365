package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestInvalidFlagValues: each value the user got wrong is exit 2 with one
// sentence naming the flag, the value and what the flag accepts, before
// anything is probed.
func TestInvalidFlagValues(t *testing.T) {
	img := "127.0.0.1:1/team/app:1"
	tests := []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"probe", "--platform", "garbage", img}, `invalid value "garbage" for --platform: want os/arch[/variant]`},
		{[]string{"probe", "--platform", "linux/garbage", img}, `invalid value "linux/garbage" for --platform`},
		{[]string{"probe", "--platform", "foo/amd64", img}, `invalid value "foo/amd64" for --platform`},
		{[]string{"probe", "--jobs", "0", img}, `invalid value "0" for --jobs: want a whole number of at least 1`},
		{[]string{"probe", "--jobs", "-1", img}, `invalid value "-1" for --jobs`},
		{[]string{"probe", "--timeout", "0", img}, `invalid value "0s" for --timeout: want a duration greater than zero`},
		{[]string{"probe", "--timeout", "-1s", img}, `invalid value "-1s" for --timeout`},
		{[]string{"probe", "--deadline", "0", img}, `invalid value "0s" for --deadline`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Run(context.Background(), Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, append([]string{"pullpath"}, tt.args...))
			if code != ExitUsage || !strings.Contains(errb.String(), tt.want) {
				t.Errorf("pullpath %v = exit %d, stderr %q; want exit %d and %q", tt.args, code, errb.String(), ExitUsage, tt.want)
			}
			if n := strings.Count(strings.TrimSpace(errb.String()), "\n"); n > 0 {
				t.Errorf("pullpath %v stderr has %d lines, want one sentence: %q", tt.args, n+1, errb.String())
			}
			if out.Len() != 0 {
				t.Errorf("pullpath %v printed a report for a usage error: %q", tt.args, out.String())
			}
		})
	}
}

func TestValidFlagValues(t *testing.T) {
	for _, p := range []string{"", "linux/amd64", "linux/arm64/v8", "windows/amd64", "linux/arm/v7", "linux"} {
		if err := checkPlatform(p); err != nil {
			t.Errorf("checkPlatform(%q) = %v, want nil", p, err)
		}
	}
}
