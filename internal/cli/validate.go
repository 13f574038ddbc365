package cli

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/containerd/platforms"
)

// Flag validation: a value the user got wrong is exit 2 and one sentence
// naming the flag and what it accepts, worded one way:
//
//	invalid value "x" for --platform: want os/arch[/variant], e.g. linux/amd64
//
// never a verdict that blames someone else, and never silently ignored.

// InvalidFlag is the usage error for flag set to value, for the commands
// that live outside this package.
func InvalidFlag(flag, value, want string) error { return invalidFlag(flag, value, want) }

// CheckPositiveDuration accepts d > 0 (see checkPositiveDuration).
func CheckPositiveDuration(flag string, d time.Duration) error { return checkPositiveDuration(flag, d) }

// CheckOptionalDuration accepts d >= 0 (see checkOptionalDuration).
func CheckOptionalDuration(flag string, d time.Duration) error { return checkOptionalDuration(flag, d) }

// invalidFlag is the usage error for flag set to value.
func invalidFlag(flag, value, want string) error {
	return usageErrorf("invalid value %q for --%s: want %s", value, flag, want)
}

// knownOS and knownArch are the operating systems and architectures Go
// (and so containerd's platform matcher) knows.
var (
	knownOS   = []string{"aix", "android", "darwin", "dragonfly", "freebsd", "illumos", "ios", "js", "linux", "netbsd", "openbsd", "plan9", "solaris", "wasip1", "windows"}
	knownArch = []string{"386", "amd64", "arm", "arm64", "loong64", "mips", "mips64", "mips64le", "mipsle", "ppc64", "ppc64le", "riscv64", "s390x", "wasm"}
)

// checkPlatform accepts "" (this machine's) and os/arch[/variant] with an
// operating system and architecture that exist, parsed by containerd.
func checkPlatform(p string) error {
	if p == "" {
		return nil
	}
	const want = "os/arch[/variant], e.g. linux/amd64 or linux/arm64/v8"
	spec, err := platforms.Parse(p)
	if err != nil || strings.Count(p, "/") > 2 || !slices.Contains(knownOS, spec.OS) || !slices.Contains(knownArch, spec.Architecture) {
		return invalidFlag("platform", p, want)
	}
	return nil
}

// checkPositiveInt accepts n >= 1.
func checkPositiveInt(flag string, n int) error {
	if n < 1 {
		return invalidFlag(flag, strconv.Itoa(n), "a whole number of at least 1")
	}
	return nil
}

// checkPositiveDuration accepts d > 0.
func checkPositiveDuration(flag string, d time.Duration) error {
	if d <= 0 {
		return invalidFlag(flag, d.String(), "a duration greater than zero, e.g. 5s or 2m")
	}
	return nil
}

// checkOptionalDuration accepts d >= 0, where 0 means the default.
func checkOptionalDuration(flag string, d time.Duration) error {
	if d < 0 {
		return invalidFlag(flag, d.String(), "a duration of zero (the default) or more, e.g. 5s or 2m")
	}
	return nil
}

// validate checks probe's flags before anything is read or sent.
func (o *probeOptions) validate() error {
	if err := checkPlatform(o.opts.Platform); err != nil {
		return err
	}
	if err := checkPositiveInt("jobs", o.opts.Jobs); err != nil {
		return err
	}
	if err := checkPositiveDuration("timeout", o.opts.Timeout); err != nil {
		return err
	}
	if o.compareNode && (o.opts.Root == "" || filepath.Clean(o.opts.Root) == "/") {
		return usageErrorf("--compare-node needs --root pointing at the node's files (e.g. --root /host): with --root / both resolvers are the pod's own")
	}
	return checkPositiveDuration("deadline", o.opts.Deadline)
}
