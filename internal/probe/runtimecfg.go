package probe

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/registry"
	"github.com/pullpath/pullpath/internal/runtimecfg"
	"github.com/pullpath/pullpath/internal/verdict"
)

// criVersionTimeout bounds the CRI Version call.
const criVersionTimeout = 3 * time.Second

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
	ro := runtimecfg.Options{HostsDir: p.o.HostsDir, RuntimeVersion: p.o.RuntimeVersion, Namespace: p.o.PodNamespace, NodeOS: p.o.NodeOS}
	if p.o.CRIVersion != nil {
		// Read-only: the CRI Version call changes nothing on the node. A
		// socket that is not there or does not answer leaves the other
		// sources.
		vctx, cancel := context.WithTimeout(ctx, criVersionTimeout)
		ro.CRISocket, ro.CRIVersion, _ = p.o.CRIVersion(vctx, p.o.Root)
		cancel()
	}
	c, err := runtimecfg.Load(p.o.Root, view.Runtime, ro)
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

// markServed records which plan endpoint served the manifest, and lints
// the plan against what the pull saw.
func (p *prober) markServed() {
	rc := p.rep.RuntimeConfig
	if rc == nil || rc.Plan == nil || p.rep.ServedBy == "" {
		return
	}
	p.lintInsecureTLS(rc.Plan.Plan)
	for _, e := range rc.Plan.Endpoints {
		if registry.Endpoint(e.Scheme, e.Host) == p.rep.ServedBy {
			rc.Plan.ServedBy = e.Order
			return
		}
	}
}

// lintInsecureTLS warns for every CRI-O endpoint marked insecure
// (registries.conf insecure = true, crio.image.insecure_registries) on
// which the pull completed a TLS handshake: TLS is offered, but
// containers/image verifies nothing there and retries over plain http.
func (p *prober) lintInsecureTLS(plan *runtimecfg.Plan) {
	if plan.CRIO == nil {
		return
	}
	for _, e := range plan.Endpoints {
		if !e.TLS.SkipVerify {
			continue
		}
		host, port := e.Host, 443
		if h, ps, err := net.SplitHostPort(e.Host); err == nil {
			host = h
			port, _ = strconv.Atoi(ps)
		}
		for _, ep := range p.tr.endpoints() {
			if ep.Host != host || ep.Port != port {
				continue
			}
			for _, st := range ep.Steps {
				if st.Name == "tls" && st.Status == StatusOK {
					p.tr.warn(verdict.Warning{Code: verdict.CodeConfigRegistriesInsecureTLS, Endpoint: registry.Endpoint("https", e.Host),
						Message: fmt.Sprintf("%s is marked insecure (%s) but offers TLS (%s): containers/image verifies no certificate there and retries over plain http when https fails; give its CA in /etc/containers/certs.d/%s/ca.crt and drop insecure", e.Host, e.Source, st.Target, e.Host)})
					break
				}
			}
		}
	}
}

// runtimeName names the node's runtime for messages ("containerd" unless
// the configuration says otherwise).
// runtimeConfig is the node runtime's configuration as read, nil when
// none was (runtimecfg's methods take nil as containerd 1.6's defaults).
func (p *prober) runtimeConfig() *runtimecfg.Config {
	if rc := p.rep.RuntimeConfig; rc != nil {
		return rc.Config
	}
	return nil
}

func (p *prober) runtimeName() string {
	if rc := p.rep.RuntimeConfig; rc != nil && rc.Config != nil && rc.Runtime.Name == runtimecfg.CRIO {
		return "CRI-O"
	}
	return "containerd"
}

// crioFailure is the verdict when every source of a CRI-O plan failed:
// containers/image returns the last source's error (the primary's) and
// only mentions the mirrors' ("(Mirrors also failed: [...])",
// docker/docker_image_src.go newImageSource), so that is the verdict, and
// each mirror's failure is a warning.
func (p *prober) crioFailure(errs, failedMirrors []*verdict.Error) *verdict.Error {
	last := errs[len(errs)-1]
	for _, m := range failedMirrors {
		if m == last {
			continue
		}
		p.tr.warn(verdict.Warning{Code: verdict.CodeMirrorUnreachable, Endpoint: m.Endpoint,
			Message: fmt.Sprintf("the mirror failed too (%s): containers/image tried it before %s and reports it only as \"Mirrors also failed\"", m.Cause, last.Endpoint)})
	}
	return last
}
