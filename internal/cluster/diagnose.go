package cluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/pullpath/pullpath/internal/cluster/kube"
)

// DiagnoseOptions are the inputs of Diagnose beyond the workload.
type DiagnoseOptions struct {
	// Probe runs probe Jobs on the nodes when not nil (--probe).
	Probe *ProbeOptions
	// Progress, when set, is told what Diagnose is doing (for stderr).
	Progress func(msg string)
}

// Diagnose reads the workload from the cluster, runs the probes when asked,
// and analyses it all. On a partial failure it returns the partial report
// with the error; a nil report means nothing could be read.
func Diagnose(ctx context.Context, cs kube.Interface, ref WorkloadRef, do DiagnoseOptions, opts ...Option) (*Report, error) {
	progress := do.Progress
	if progress == nil {
		progress = func(string) {}
	}
	progress("reading " + ref.String() + " in namespace " + ref.Namespace)
	in, err := Gather(ctx, cs, ref)
	if err != nil {
		return nil, err
	}
	rep := Analyze(in, opts...)
	if do.Probe == nil {
		return rep, nil
	}
	po := *do.Probe
	po.defaults()
	po.PodNamespace = ref.Namespace
	ns := po.Namespace
	if ns == "" {
		ns = ref.Namespace
	}
	secret := ""
	if po.UsePullSecret {
		secret = pickPullSecret(rep)
		switch {
		case secret == "":
			in.Errors = append(in.Errors, "--use-pull-secret: no readable kubernetes.io/dockerconfigjson pull secret with an entry for "+rep.Registry+"; the probes run anonymously")
		case ns != ref.Namespace:
			in.Errors = append(in.Errors, "--use-pull-secret: the probes run in namespace "+ns+", the pull secret is in "+ref.Namespace+"; the probes run anonymously")
			secret = ""
		}
	}
	if note := withWorkloadServiceAccount(ctx, ClientsetTokens(cs), &po, in.Template, ref.Namespace, ns); note != "" {
		in.Errors = append(in.Errors, note)
	}
	targets := withLayouts(withProviderPaths(ProbeTargets(rep), in.Nodes, po), in.Nodes)
	if len(targets) == 0 {
		in.Errors = append(in.Errors, "--probe: no node to probe (no failing pod on a node and no eligible pool)")
		return Analyze(in, opts...), nil
	}
	progress(fmt.Sprintf("probing %d node(s) with Jobs in namespace %s (run %s)", len(targets), ns, po.RunID))
	o := buildOptions(opts)
	results, perr := RunProbes(ctx, cs, targets, rep.Image, ns, secret, po, o.classify)
	in.Probes = results
	if perr != nil {
		in.Errors = append(in.Errors, perr.Error())
	}
	return Analyze(in, opts...), perr
}

// pickPullSecret returns the first readable dockerconfigjson pull secret
// with an entry for the registry.
func pickPullSecret(r *Report) string {
	for _, ps := range r.Identity.PullSecrets {
		if ps.Found && ps.Matches && ps.Type == string(corev1.SecretTypeDockerConfigJson) {
			return ps.Name
		}
	}
	return ""
}
