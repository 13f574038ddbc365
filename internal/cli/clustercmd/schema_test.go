package clustercmd

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/pullpath/pullpath/internal/cluster"
	"github.com/pullpath/pullpath/internal/cluster/clustertest"
	"github.com/pullpath/pullpath/internal/probe"
	"github.com/pullpath/pullpath/internal/schematest"
	"github.com/pullpath/pullpath/internal/verdict"
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

// podViewReport is the AKS fixture's diagnosis with a pod view on its
// first node, compared by cluster.ComparePaths: the node's resolver
// answers NXDOMAIN, the pod's cluster DNS the private address.
func podViewReport(t *testing.T) *cluster.Report {
	t.Helper()
	f := clustertest.AKS(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	ref := cluster.WorkloadRef{Kind: cluster.KindDeployment, Name: clustertest.Deployment, Namespace: clustertest.Namespace}
	rep, err := cluster.Diagnose(context.Background(), clustertest.FromClientset(fake.NewSimpleClientset(f.Objects()...)), ref, cluster.DiagnoseOptions{},
		cluster.WithClassifier(diagnoseClassifier))
	if rep == nil || len(rep.Nodes) == 0 {
		t.Fatalf("Diagnose: %v", err)
	}
	ep := func(status probe.Status, cause string) []probe.Endpoint {
		return []probe.Endpoint{{Host: "myacr.azurecr.io", Port: 443, Role: verdict.RoleRegistry, Steps: []probe.Step{
			{Name: "dns", Target: "myacr.azurecr.io", Status: status, Cause: cause, Detail: "→ 10.1.2.3 via 10.0.0.10:53"}}}}
	}
	nodeRep := &probe.Report{Image: rep.Image, Verdict: verdict.Verdict{Layer: "dns", Cause: "dns.nxdomain", Summary: "s", Next: []string{}}, Plan: []probe.PlanHost{}, Endpoints: ep(probe.StatusFailed, "dns.nxdomain"), Blobs: []probe.Blob{}, Warnings: []verdict.Warning{}}
	podRep := &probe.Report{Image: rep.Image, Verdict: verdict.OKVerdict("pulled"), Plan: []probe.PlanHost{}, Endpoints: ep(probe.StatusOK, ""), Blobs: []probe.Blob{}, Warnings: []verdict.Warning{}}
	pv := &cluster.PodView{ProbeResult: cluster.ProbeResult{Job: "pullpath-podview-x", Status: cluster.ProbeDone, Verdict: podRep.Verdict, Report: podRep}}
	node := &cluster.ProbeResult{Job: "pullpath-probe-x", Status: cluster.ProbeDone, Verdict: nodeRep.Verdict, Report: nodeRep, PodView: pv}
	cluster.ComparePaths(node, pv)
	if pv.PartingHop != cluster.HopDNS {
		t.Fatalf("parting hop %q, want dns", pv.PartingHop)
	}
	rep.Nodes[0].Probe = node
	return rep
}

// TestSchemaDiagnosePodView validates a DiagnoseReport whose probed node
// carries a pod view (diagnose --probe --pod-view) and checks the schema
// rejects an unknown parting hop.
func TestSchemaDiagnosePodView(t *testing.T) {
	rep := podViewReport(t)
	render, err := diagnoseRenderer("json")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := render(&b, rep); err != nil {
		t.Fatal(err)
	}
	schematest.Validate(t, "DiagnoseReport", b.String())
	ss, err := schematest.Compile()
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(b.String(), `"parting_hop": "dns"`, `"parting_hop": "dnz"`, 1)
	if bad == b.String() {
		t.Fatal("no parting hop in the rendered report")
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(bad))
	if err != nil {
		t.Fatal(err)
	}
	if ss["DiagnoseReport"].Validate(doc) == nil {
		t.Error("the schema accepts an unknown parting hop")
	}
}

// TestDiagnoseHTMLPodView checks the HTML report draws the node's path and
// the pod's one above the other with the parting hop marked in both.
func TestDiagnoseHTMLPodView(t *testing.T) {
	rep := podViewReport(t)
	render, err := diagnoseRenderer("html")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := render(&b, rep); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, s := range []string{`data-compare="` + rep.Nodes[0].Name + `"`, `data-divergence="node-fails"`, `data-parting-hop="dns"`, `<div data-row="node">`, `<div data-row="pod">`, "cannot fix it"} {
		if !strings.Contains(out, s) {
			t.Errorf("HTML lacks %s", s)
		}
	}
	node, pod, _ := strings.Cut(out[strings.Index(out, `<div data-row="node">`):], `<div data-row="pod">`)
	if strings.Count(node, `data-parting="true"`) != 1 || strings.Count(pod[:strings.Index(pod, "</section>")], `data-parting="true"`) != 1 {
		t.Errorf("want the parting hop marked once in each row")
	}
	if strings.Index(out, `data-row="node"`) > strings.Index(out, `data-row="pod"`) {
		t.Errorf("the node's path is not drawn above the pod's")
	}
}
