package probe

import (
	"context"
	"strings"

	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/registry"
	"github.com/pullpath/pullpath/internal/runtimecfg"
)

// RuntimeConfig is what the probe read of the node runtime's configuration
// (internal/runtimecfg) and the plan it walked.
type RuntimeConfig struct {
	*runtimecfg.Config
	Plan *RuntimePlan `json:"plan,omitempty"`
}

// RuntimePlan is the runtime's plan for the image's registry, with the
// endpoint that served the manifest marked.
type RuntimePlan struct {
	*runtimecfg.Plan
	// ServedBy is the Order of the endpoint that served the manifest, 0
	// when none did.
	ServedBy int `json:"served_by_order,omitempty"`
}

// runtimeHosts reads the runtime's configuration under the node root and
// returns the hosts it would try for domain, in its order. The report
// carries the configuration, the plan and the lints; a configuration the
// runtime refuses is the returned config verdict.
func (p *prober) runtimeHosts(ctx context.Context, view *nodeview.View, image, domain, ref string) ([]nodeview.RegistryHost, error) {
	c, err := runtimecfg.Load(p.o.Root, view.Runtime, runtimecfg.Options{HostsDir: p.o.HostsDir})
	p.rep.RuntimeConfig = &RuntimeConfig{Config: c}
	p.rep.Warnings = append(p.rep.Warnings, c.Warnings...)
	if err != nil {
		return nil, err
	}
	byDigest := strings.HasPrefix(ref, "sha256:") || strings.HasPrefix(ref, "sha512:")
	plan, err := c.PlanImage(ctx, view, image, domain, byDigest)
	if plan != nil {
		p.rep.RuntimeConfig.Plan = &RuntimePlan{Plan: plan}
		p.rep.Warnings = append(p.rep.Warnings, plan.Warnings...)
	}
	if err != nil {
		if plan != nil && len(plan.Hosts) > 0 {
			return plan.Hosts, err
		}
		return nil, err
	}
	return plan.Hosts, nil
}

// markServed records which plan endpoint served the manifest.
func (p *prober) markServed() {
	rc := p.rep.RuntimeConfig
	if rc == nil || rc.Plan == nil || p.rep.ServedBy == "" {
		return
	}
	for _, e := range rc.Plan.Endpoints {
		if registry.Endpoint(e.Scheme, e.Host) == p.rep.ServedBy {
			rc.Plan.ServedBy = e.Order
			return
		}
	}
}
