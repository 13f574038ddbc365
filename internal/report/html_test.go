package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pullpath/pullpath/internal/verdict"
)

func hopStatuses(hs []Hop) []string {
	var out []string
	for _, h := range hs {
		s := h.Kind + ":" + h.Status
		if h.Failing {
			s += "!"
		}
		out = append(out, s)
	}
	return out
}

func TestVerdictHops(t *testing.T) {
	fail := func(cause string, role verdict.Role) verdict.Verdict {
		return verdict.FromError(verdict.Errorf(cause, role, "r.example:443", ""))
	}
	for _, tt := range []struct {
		name string
		v    verdict.Verdict
		want []string
	}{
		{"ok", verdict.OKVerdict("fine"), []string{"node:ok", "resolver:ok", "registry:ok", "auth:ok", "blob:ok"}},
		{"dns", fail("dns.nxdomain", verdict.RoleRegistry), []string{"node:ok", "resolver:failed!", "registry:not-reached", "auth:not-reached", "blob:not-reached"}},
		{"route at registry", fail("route.timeout", verdict.RoleRegistry), []string{"node:ok", "resolver:ok", "registry:failed!", "auth:not-reached", "blob:not-reached"}},
		{"token host", fail("auth.no-credentials", verdict.RoleAuth), []string{"node:ok", "resolver:ok", "registry:ok", "auth:failed!", "blob:not-reached"}},
		{"blob host", fail("route.refused", verdict.RoleBlob), []string{"node:ok", "resolver:ok", "registry:ok", "auth:ok", "blob:failed!"}},
		{"config", fail("config.hosts-toml", ""), []string{"node:failed!", "resolver:not-reached", "registry:not-reached", "auth:not-reached", "blob:not-reached"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, hopStatuses(VerdictHops(tt.v, "r.example"))); diff != "" {
				t.Errorf("VerdictHops(%s) (-want +got):\n%s", tt.v.Cause, diff)
			}
		})
	}
}

func TestProbeHTMLEscapesAndMarks(t *testing.T) {
	r := blobFailure()
	r.Verdict.Evidence = `<script>alert(1)</script>`
	var b bytes.Buffer
	if err := ProbeHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "<script>alert(1)") {
		t.Error("ProbeHTML does not escape evidence")
	}
	if !strings.Contains(out, `data-hop="blob" data-status="failed" data-failing="true"`) {
		t.Errorf("ProbeHTML does not mark the blob hop failing")
	}
	if got := hopStatuses(ProbeHops(r)); !cmp.Equal(got, []string{"node:ok", "resolver:ok", "registry:ok", "blob:failed!", "auth:not-reached"}) {
		t.Errorf("ProbeHops = %v", got)
	}
}
