package cluster

import (
	"context"
	"testing"

	"github.com/pullpath/pullpath/internal/cluster/clustertest"
	"github.com/pullpath/pullpath/internal/probe"
	"github.com/pullpath/pullpath/internal/verdict"
)

// TestPoolIdentities: per pool, the identity its probe found running the
// kubelet's credential provider, or the expected provider when not probed.
func TestPoolIdentities(t *testing.T) {
	f := clustertest.AKS(fixtureNow)
	in, err := Gather(context.Background(), fakeClientset(f), WorkloadRef{Kind: KindDeployment, Name: clustertest.Deployment, Namespace: clustertest.Namespace})
	if err != nil {
		t.Fatal(err)
	}
	for _, pl := range Analyze(in, WithClassifier(classify), WithNow(fixtureNow)).Pools {
		if want := "pull secret acr-pull"; pl.Identity != want {
			t.Errorf("pool %s with the fixture's pull secret: identity %q, want %q", pl.Name, pl.Identity, want)
		}
	}
	in.PullSecrets = nil // none readable: no secret matches
	unprobed := Analyze(in, WithClassifier(classify), WithNow(fixtureNow))
	for _, pl := range unprobed.Pools {
		if want := "kubelet credential provider acr-credential-provider expected (not probed)"; pl.Identity != want {
			t.Errorf("unprobed pool %s: identity %q, want %q", pl.Name, pl.Identity, want)
		}
	}
	cfg := "/var/lib/kubelet/credential-provider-config.yaml"
	result := func(cause string, cp *probe.CredentialProvider, id string) *ProbeResult {
		v := verdict.OKVerdict("the pull path works")
		if cause != "" {
			v = verdict.FromError(verdict.Errorf(cause, verdict.RoleRegistry, "myacr.azurecr.io:443", ""))
		}
		return &ProbeResult{Job: "j", Status: ProbeDone, Verdict: v, Report: &probe.Report{Verdict: v, Identity: id, CredentialProvider: cp}}
	}
	in.Probes = map[string]*ProbeResult{
		"aks-user1-23456789-vmss000002": result("", &probe.CredentialProvider{Config: cfg, Matched: []string{"acr-credential-provider"}, Provider: "acr-credential-provider"},
			`user "00000000-0000-0000-0000-000000000000" (from kubelet credential provider acr-credential-provider)`),
		clustertest.NewNode: result("auth.provider-timeout", &probe.CredentialProvider{Config: cfg, Matched: []string{"acr-credential-provider"}, Provider: "acr-credential-provider",
			Error: "auth.provider-timeout: error execing credential provider plugin acr-credential-provider: context deadline exceeded"}, "anonymous"),
		clustertest.NewNode2: result("auth.provider-timeout", nil, "anonymous"),
		"aks-system-12345678-vmss000000": result("auth.no-credentials", &probe.CredentialProvider{Config: cfg, Matched: []string{},
			Error: "config.credential-provider: reading the kubelet's credential provider config " + cfg + ": no such file or directory"}, "anonymous"),
		"aks-armpool-45678901-vmss000000": result("auth.provider-no-match", &probe.CredentialProvider{Config: cfg, Matched: []string{}, Error: "no provider matches the image"}, "anonymous"),
	}
	r := Analyze(in, WithClassifier(classify), WithNow(fixtureNow))
	want := map[string]string{
		"user1":   "kubelet credential provider acr-credential-provider (probed on aks-user1-23456789-vmss000002)",
		"user2":   "anonymous: kubelet credential provider acr-credential-provider gave nothing: auth.provider-timeout (probed on " + clustertest.NewNode + ")",
		"system":  "not known: the probe on aks-system-12345678-vmss000000 could not use the kubelet's credential provider setup (config.credential-provider: reading the kubelet's credential provider config " + cfg + ": no such file or directory)",
		"armpool": "anonymous: no kubelet credential provider in " + cfg + " matches the image (probed on aks-armpool-45678901-vmss000000)",
	}
	got := map[string]string{}
	for _, pl := range r.Pools {
		got[pl.Name] = pl.Identity
	}
	for pool, w := range want {
		if got[pool] != w {
			t.Errorf("pool %s: identity %q, want %q", pool, got[pool], w)
		}
	}
}
