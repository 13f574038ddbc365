package probe_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/demo"
	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/probe"
	"github.com/pullpath/pullpath/internal/verdict"
)

// TestLabScenarios is the lab tier: every fault of the embedded lab, probed
// for real (TLS registry, token host, redirecting blob host, DNS server on
// loopback), must give the scenario's expected layer, cause, role and
// endpoint.
func TestLabScenarios(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel) // after the parallel subtests
	l, err := lab.Start(ctx, lab.Options{})
	if err != nil {
		t.Fatalf("starting the lab: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	if len(l.Scenarios) < 15 {
		t.Fatalf("the lab has %d scenarios, want at least 15", len(l.Scenarios))
	}
	for _, sc := range l.Scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			res := demo.RunOne(ctx, l, sc, 2*time.Second)
			for _, m := range res.Mismatches {
				t.Errorf("probe %s: %s", sc.Image, m)
			}
			if t.Failed() && res.Report != nil {
				t.Logf("verdict: %+v", res.Report.Verdict)
			}
			rep := res.Report
			if rep == nil {
				return
			}
			checkReportInvariants(t, sc, rep)
		})
	}
}

// checkReportInvariants asserts what must hold of every report: a failing
// verdict names a recorded failing step (or a blob/HTTP error), an OK
// verdict on a full pull verified every blob, and no secret leaks.
func checkReportInvariants(t *testing.T, sc lab.Scenario, rep *probe.Report) {
	t.Helper()
	if rep.Verdict.OK {
		if len(rep.Blobs) == 0 {
			t.Errorf("OK verdict with no blobs")
		}
		for _, b := range rep.Blobs {
			if !b.Verified || b.Bytes != b.Size {
				t.Errorf("OK verdict but blob %s verified=%v bytes=%d size=%d", b.Digest, b.Verified, b.Bytes, b.Size)
			}
		}
	} else {
		if rep.Verdict.Owner == "" && rep.Verdict.Layer != verdict.LayerUnknown {
			t.Errorf("failing verdict without owner: %+v", rep.Verdict)
		}
		if len(rep.Verdict.Next) == 0 || rep.Verdict.Summary == "" {
			t.Errorf("failing verdict without summary or next steps")
		}
	}
	if sc.Password != "" {
		for _, s := range []string{rep.Verdict.Summary, rep.Verdict.Evidence, strings.Join(rep.Verdict.Next, " "), rep.Identity} {
			if strings.Contains(s, sc.Password) {
				t.Errorf("the report leaks the password: %q", s)
			}
		}
		for _, ep := range rep.Endpoints {
			for _, st := range ep.Steps {
				if strings.Contains(st.Detail, sc.Password) || strings.Contains(st.Target, sc.Password) {
					t.Errorf("step %s %s leaks the password", st.Name, st.Target)
				}
			}
		}
	}
	if rep.Verdict.Cause == "dns.private-zone" {
		// The public answer must never be dialled (network rule, and the
		// node would leave the private path).
		for _, ep := range rep.Endpoints {
			for _, st := range ep.Steps {
				if st.Name == "route" && st.Status != probe.StatusSkipped {
					t.Errorf("private-zone verdict but %s was dialled: %s", ep.Host, st.Target)
				}
			}
		}
	}
	switch rep.Verdict.Layer {
	case verdict.LayerDNS, verdict.LayerRoute, verdict.LayerTLS:
		if !strings.Contains(strings.Join(rep.Verdict.Next, " "), "Credentials are irrelevant") {
			t.Errorf("transport failure without the sentence that credentials are irrelevant")
		}
		found := false
		for _, ep := range rep.Endpoints {
			for _, st := range ep.Steps {
				if st.Status == probe.StatusFailed && st.Cause == rep.Verdict.Cause {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("verdict %s names no failed step in the trace", rep.Verdict.Cause)
		}
	case verdict.LayerAuth, verdict.LayerAuthz:
		if !strings.Contains(strings.Join(rep.Verdict.Next, " "), "Identity used:") {
			t.Errorf("identity failure does not say which identity was used")
		}
	}
}
