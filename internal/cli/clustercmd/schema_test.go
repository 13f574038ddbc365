package clustercmd

import (
	"bytes"
	"context"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/pullpath/pullpath/internal/cluster"
	"github.com/pullpath/pullpath/internal/cluster/clustertest"
	"github.com/pullpath/pullpath/internal/schematest"
)

// TestSchemaDiagnoseFixture validates diagnose's DiagnoseReport, rendered
// by the command's own renderer, for each workload of the AKS fixture read
// through client-go's fake clientset. (TestDiagnoseEndToEnd validates the
// whole command against a real API server when that tier runs.)
func TestSchemaDiagnoseFixture(t *testing.T) {
	f := clustertest.AKS(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	render, err := diagnoseRenderer("json")
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []cluster.WorkloadRef{
		{Kind: cluster.KindDeployment, Name: clustertest.Deployment, Namespace: clustertest.Namespace},
		{Kind: cluster.KindPod, Name: clustertest.FailingPod, Namespace: clustertest.Namespace},
		{Kind: cluster.KindPod, Name: clustertest.BarePod, Namespace: clustertest.Namespace},
		{Kind: cluster.KindPod, Name: "app-7d9f8c6b5d-4hj2k", Namespace: clustertest.Namespace},
	} {
		t.Run(ref.String(), func(t *testing.T) {
			rep, err := cluster.Diagnose(context.Background(), clustertest.FromClientset(fake.NewSimpleClientset(f.Objects()...)), ref, cluster.DiagnoseOptions{},
				cluster.WithClassifier(diagnoseClassifier))
			if rep == nil {
				t.Fatalf("Diagnose(%s): %v", ref, err)
			}
			var b bytes.Buffer
			if err := render(&b, rep); err != nil {
				t.Fatal(err)
			}
			schematest.Validate(t, "DiagnoseReport", b.String())
		})
	}
}
