package cluster

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pullpath/pullpath/internal/cluster/clustertest"
)

// TestAnalyzeDeploymentWithoutPods: a Deployment whose ReplicaSet cannot
// create pods (quota) or that is scaled to zero says no pod exists and
// why; it never says "no pull failure".
func TestAnalyzeDeploymentWithoutPods(t *testing.T) {
	quota := `pods "app-7d9f8c6b5d-abcde" is forbidden: exceeded quota: compute, requested: cpu=2, used: cpu=8, limited: cpu=8`
	zero := int32(0)
	for _, tt := range []struct {
		name     string
		edit     func(f *clustertest.Fixture)
		want     string
		evidence string
	}{
		{"quota", func(f *clustertest.Fixture) {
			f.Events = append(f.Events, corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{Name: "rs-failedcreate", Namespace: clustertest.Namespace, CreationTimestamp: metav1.NewTime(f.Now)},
				InvolvedObject: corev1.ObjectReference{Kind: "ReplicaSet", Name: clustertest.ReplicaSet, Namespace: clustertest.Namespace},
				Reason:         "FailedCreate", Type: "Warning", Message: "Error creating: " + quota, Count: 7,
				FirstTimestamp: metav1.NewTime(f.Now), LastTimestamp: metav1.NewTime(f.Now),
			})
		}, "replicaset/" + clustertest.ReplicaSet + " reports FailedCreate: Error creating: " + quota, quota},
		{"scaled to zero", func(f *clustertest.Fixture) { f.Deployments[0].Spec.Replicas = &zero }, "its spec.replicas is 0", ""},
		{"no event", func(*clustertest.Fixture) {}, "no event says why", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := clustertest.AKS(fixtureNow)
			f.Pods = nil
			tt.edit(f)
			r := diagnoseFake(t, f, WorkloadRef{Kind: KindDeployment, Name: clustertest.Deployment, Namespace: clustertest.Namespace})
			if r.Verdict.OK || r.Verdict.Cause != CauseNoPod || !r.Failed() {
				t.Errorf("verdict = %+v, want %s, not ok", r.Verdict, CauseNoPod)
			}
			for _, s := range []string{r.Verdict.Summary, r.Summary} {
				if !strings.Contains(s, "No pod of deployment/app exists") || !strings.Contains(s, tt.want) {
					t.Errorf("summary %q, want no pod exists and %q", s, tt.want)
				}
				if strings.Contains(strings.ToLower(s), "no pull failure") || strings.Contains(s, "no container is failing") {
					t.Errorf("summary %q says there is no pull failure", s)
				}
			}
			if r.Verdict.Evidence != tt.evidence && !strings.Contains(r.Verdict.Evidence, tt.evidence) {
				t.Errorf("evidence %q, want %q", r.Verdict.Evidence, tt.evidence)
			}
		})
	}
}
