package monitor

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig([]byte(`
targets:
  - name: app
    image: registry.example/team/app:1.0
  - name: base.v2
    image: mcr.microsoft.com/oss/kubernetes/pause:3.6
    platform: linux/arm64
interval: 90s
full_interval: 12h
full_byte_budget: 1048576
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Targets) != 2 || c.Targets[1].Platform != "linux/arm64" {
		t.Errorf("targets = %+v", c.Targets)
	}
	if time.Duration(c.Interval) != 90*time.Second || time.Duration(c.FullInterval) != 12*time.Hour || c.FullByteBudget != 1<<20 {
		t.Errorf("interval %v full %v budget %d", time.Duration(c.Interval), time.Duration(c.FullInterval), c.FullByteBudget)
	}
	if c.Blobs != BlobsHead || time.Duration(c.Timeout) != DefaultTimeout {
		t.Errorf("defaults not applied: blobs %q timeout %v", c.Blobs, time.Duration(c.Timeout))
	}
}

func TestParseConfigErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, "names no targets"},
		{`targets: [{name: "a b", image: x/y:1}]`, `invalid name "a b"`},
		{`targets: [{name: a, image: x/y:1}, {name: a, image: x/z:1}]`, "used twice"},
		{`targets: [{name: a, image: "UPPER/Case:1"}]`, "invalid image"},
		{`targets: [{name: a, image: x/y:1, platform: garbage}]`, "invalid platform"},
		{`{targets: [{name: a, image: x/y:1}], blobs: all}`, `invalid blobs mode "all" (valid: head, full, none)`},
		{`{targets: [{name: a, image: x/y:1}], interval: soon}`, `invalid duration "soon"`},
		{`{targets: [{name: a, image: x/y:1}], interval: 10ms}`, "want at least 1s"},
		{`{targets: [{name: a, image: x/y:1}], intervall: 5m}`, `unknown field "intervall"`},
		{"\x00\x01garbage", "parsing the monitor configuration"},
	} {
		_, err := ParseConfig([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseConfig(%q) = %v, want an error containing %q", tc.in, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), "monitor.") {
			t.Errorf("ParseConfig(%q): the error shows a Go type name: %v", tc.in, err)
		}
	}
}

func TestCamelReason(t *testing.T) {
	for in, want := range map[string]string{"dns.private-zone": "DnsPrivateZone", "route.timeout": "RouteTimeout", "": "PullPathFails"} {
		if got := CamelReason(in); got != want {
			t.Errorf("CamelReason(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestNameAndPlatformChecks: the loops that replaced two package-level
// regexps (compiled at every start of the node binary) accept exactly what
// the regexps did.
func TestNameAndPlatformChecks(t *testing.T) {
	nameRE := regexp.MustCompile(`^[A-Za-z0-9_.-]{1,63}$`)
	platRE := regexp.MustCompile(`^[a-z0-9]+/[a-z0-9]+(/[a-z0-9]+)?$`)
	inputs := []string{"", "a", "acr-prod", "A.b_c-9", strings.Repeat("x", 63), strings.Repeat("x", 64), "a b", "a/b", "ä", "a\n",
		"linux/amd64", "linux/arm64/v8", "linux/", "/amd64", "linux//v8", "linux/amd64/v8/x", "Linux/amd64", "linux/amd64/", "linux", "linux/am-d64"}
	for _, s := range inputs {
		if got, want := validTargetName(s), nameRE.MatchString(s); got != want {
			t.Errorf("validTargetName(%q) = %v, the regexp says %v", s, got, want)
		}
		if got, want := validPlatform(s), platRE.MatchString(s); got != want {
			t.Errorf("validPlatform(%q) = %v, the regexp says %v", s, got, want)
		}
	}
}

func FuzzNameAndPlatformChecks(f *testing.F) {
	nameRE := regexp.MustCompile(`^[A-Za-z0-9_.-]{1,63}$`)
	platRE := regexp.MustCompile(`^[a-z0-9]+/[a-z0-9]+(/[a-z0-9]+)?$`)
	for _, s := range []string{"acr-prod", "linux/arm64/v8", "linux//v8", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if validTargetName(s) != nameRE.MatchString(s) || validPlatform(s) != platRE.MatchString(s) {
			t.Errorf("%q: name %v/%v platform %v/%v", s, validTargetName(s), nameRE.MatchString(s), validPlatform(s), platRE.MatchString(s))
		}
	})
}
