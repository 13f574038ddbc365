package report

import (
	"testing"

	"github.com/pullpath/pullpath/internal/probe"
	"github.com/pullpath/pullpath/internal/runtimecfg"
)

func TestRuntimeLineCRIO(t *testing.T) {
	rc := &probe.RuntimeConfig{Config: &runtimecfg.Config{Runtime: runtimecfg.Runtime{Name: runtimecfg.CRIO}},
		Plan: &probe.RuntimePlan{Plan: &runtimecfg.Plan{CRIO: &runtimecfg.CRIOFacts{
			Registry: "lab.test/team", RegistrySource: "/etc/containers/registries.conf:3",
			ShortName: "alias \"app\" = \"lab.test/team/app\"",
			Policy:    &runtimecfg.PolicyFact{File: "/etc/containers/policy.json", Requirements: []string{"signedBy"}},
		}}}}
	want := `runtime cri-o · registries.conf [[registry]] lab.test/team at /etc/containers/registries.conf:3 · short name: alias "app" = "lab.test/team/app" · policy signedBy (/etc/containers/policy.json)`
	if got := runtimeLine(rc); got != want {
		t.Errorf("runtimeLine = %q\nwant %q", got, want)
	}
	rc.Plan.CRIO = &runtimecfg.CRIOFacts{}
	if got := runtimeLine(rc); got != "runtime cri-o · registries.conf: no [[registry]] matches" {
		t.Errorf("runtimeLine = %q", got)
	}
}
