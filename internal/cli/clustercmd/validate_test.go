package clustercmd

import (
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/cli"
)

// TestDiagnoseInvalidFlagValues: a value the user got wrong is exit 2 with
// one sentence naming the flag, before the cluster is asked anything.
func TestDiagnoseInvalidFlagValues(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"diagnose", "--probe-deadline", "-1s", "pod/x"}, `invalid value "-1s" for --probe-deadline`},
		{[]string{"diagnose", "--max-listed-images", "-5", "pod/x"}, `invalid value "-5" for --max-listed-images: want -1 (no cap), 0 or more`},
		{[]string{"diagnose", "--probe-wait", "-1m", "pod/x"}, `invalid value "-1m0s" for --probe-wait`},
	} {
		_, stderr, code := runDiagnose(t, tt.args...)
		if code != cli.ExitUsage || !strings.Contains(stderr, tt.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("pullpath %v = exit %d, stderr %q; want exit 2 and one line with %q", tt.args, code, stderr, tt.want)
		}
	}
	o := &diagnoseOptions{deadline: 1, maxImages: -1}
	if err := o.validate(); err != nil {
		t.Errorf("diagnose --max-listed-images -1 (no cap): %v, want nil", err)
	}
}
