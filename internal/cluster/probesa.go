package cluster

import (
	"context"
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// saTokenDir is where the probe Job's projected service-account token is
// mounted with --probe-service-account-audience.
const saTokenDir = "/var/run/pullpath/sa-token"

// skippedSAAnnotations are not passed to the probe: they are not about
// identity and can be large.
var skippedSAAnnotations = map[string]bool{"kubectl.kubernetes.io/last-applied-configuration": true}

// withWorkloadServiceAccount sets what the probe Jobs need to run a KEP-4412
// provider as for the workload's pods: the pods' service account and its
// annotations. It returns a note when that cannot be done.
func withWorkloadServiceAccount(ctx context.Context, c ServiceAccountGetter, po *ProbeOptions, template *corev1.PodSpec, workloadNS, jobNS string) string {
	if po.TokenAudience == "" {
		return ""
	}
	if jobNS != workloadNS {
		po.TokenAudience = ""
		return "--probe-service-account-audience: the probes run in namespace " + jobNS + ", the workload's service account is in " + workloadNS + "; the probes run without its token"
	}
	name := "default"
	if template != nil && template.ServiceAccountName != "" {
		name = template.ServiceAccountName
	}
	po.ServiceAccount = name
	rc, cancel := reqCtx(ctx)
	defer cancel()
	sa, err := c.GetServiceAccount(rc, workloadNS, name)
	if err != nil {
		return "--probe-service-account-audience: reading service account " + workloadNS + "/" + name + " (its annotations go to the provider): " + err.Error()
	}
	po.ServiceAccountAnnotations = map[string]string{}
	for k, v := range sa.Annotations {
		if !skippedSAAnnotations[k] {
			po.ServiceAccountAnnotations[k] = v
		}
	}
	return ""
}

// serviceAccountTokenVolume returns the projected token volume, its mount
// and the probe's flags for po.TokenAudience: the kubelet issues the Job's
// pod a token of the workload's service account for the provider's
// audience, as it does for the workload's pods (bound to the probe pod
// rather than to one of them). Nothing when po.TokenAudience is empty.
func serviceAccountTokenVolume(po ProbeOptions, namespace string) (*corev1.Volume, *corev1.VolumeMount, []string) {
	if po.TokenAudience == "" || po.ServiceAccount == "" {
		return nil, nil, nil
	}
	exp := int64(3600)
	mode := int32(0o400)
	v := &corev1.Volume{Name: "sa-token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: &mode,
		Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
			Audience: po.TokenAudience, ExpirationSeconds: &exp, Path: "token"}}},
	}}}
	m := &corev1.VolumeMount{Name: "sa-token", MountPath: saTokenDir, ReadOnly: true}
	args := []string{"--service-account", namespace + "/" + po.ServiceAccount, "--service-account-token-file", saTokenDir + "/token"}
	keys := make([]string, 0, len(po.ServiceAccountAnnotations))
	for k := range po.ServiceAccountAnnotations {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "--service-account-annotation", k+"="+po.ServiceAccountAnnotations[k])
	}
	return v, m, args
}
