package clustercmd

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/pullpath/pullpath/internal/cluster"
	"github.com/pullpath/pullpath/internal/cluster/clustertest"
)

var updateText = flag.Bool("update-text", false, "rewrite testdata/aks-deployment.golden")

var fixtureNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// diagnoseFixture is diagnose's analysis of the fixture's workload, read
// through client-go's fake clientset, at the fixture's time.
func diagnoseFixture(t *testing.T, f *clustertest.Fixture, ref cluster.WorkloadRef) *cluster.Report {
	t.Helper()
	in, err := cluster.Gather(context.Background(), clustertest.FromClientset(fake.NewSimpleClientset(f.Objects()...)), ref)
	if err != nil {
		t.Fatalf("Gather(%s): %v", ref, err)
	}
	return cluster.Analyze(in, cluster.WithClassifier(diagnoseClassifier), cluster.WithNow(f.Now))
}

// TestDiagnoseTextGolden renders the fixture's diagnosis as text; refresh
// with -update-text.
func TestDiagnoseTextGolden(t *testing.T) {
	f := clustertest.AKS(fixtureNow)
	r := diagnoseFixture(t, f, cluster.WorkloadRef{Kind: cluster.KindDeployment, Name: clustertest.Deployment, Namespace: clustertest.Namespace})
	var buf bytes.Buffer
	if err := WriteDiagnoseText(&buf, r); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "aks-deployment.golden")
	if *updateText {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("reading golden file (run with -update-text): %v", err)
	}
	if diff := cmp.Diff(string(want), buf.String()); diff != "" {
		t.Errorf("WriteDiagnoseText (-want +got):\n%s", diff)
	}
	if strings.Contains(buf.String(), clustertest.SecretToken) {
		t.Errorf("text output contains the pull secret's password")
	}
}

// TestDiagnoseCredentialCanary gives diagnose a pull secret whose password
// is the fixture's canary and events in which a runtime or proxy echoed the
// credentials back (Go's header-map form, a dumped header, a form body, the
// signature of a signed blob URL), and greps every output format's report for the password in each form it
// can take: as it is, base64 of user:password, URL-encoded and
// JSON-escaped.
func TestDiagnoseCredentialCanary(t *testing.T) {
	f := clustertest.AKS(fixtureNow)
	const user = "00000000-0000-0000-0000-000000000000"
	basic := base64.StdEncoding.EncodeToString([]byte(user + ":" + clustertest.SecretToken))
	echoes := []string{
		" (request headers map[Authorization:[Basic " + basic + "] User-Agent:[containerd/2.0]])",
		"; proxy said: Authorization: Basic " + basic,
		"; body grant_type=password&username=" + user + "&password=" + url.QueryEscape(clustertest.SecretToken),
	}
	sas := `; failed to do request: Get "https://myacr.blob.core.windows.net/x/data?sv=2020&se=2026&sig=` + url.QueryEscape(clustertest.SecretToken) + `": dial tcp 10.0.0.9:443: i/o timeout`
	n := 0
	for i := range f.Events {
		if f.Events[i].Message == clustertest.FailedPullMessage || f.Events[i].Message == clustertest.UnauthorizedMessage {
			f.Events[i].Message += echoes[n%len(echoes)] + sas
			n++
		}
	}
	if n == 0 {
		t.Fatal("the fixture has no failed-pull event to echo credentials into")
	}
	js, _ := json.Marshal(clustertest.SecretToken)
	forms := []string{clustertest.SecretToken, basic, url.QueryEscape(clustertest.SecretToken), strings.Trim(string(js), `"`)}
	for _, ref := range []cluster.WorkloadRef{
		{Kind: cluster.KindDeployment, Name: "app", Namespace: clustertest.Namespace},
		{Kind: cluster.KindPod, Name: clustertest.BarePod, Namespace: clustertest.Namespace},
	} {
		r := diagnoseFixture(t, f, ref)
		for _, format := range diagnoseFormats {
			render, err := diagnoseRenderer(format)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := render(&out, r); err != nil {
				t.Fatal(err)
			}
			for _, form := range forms {
				if strings.Contains(out.String(), form) {
					t.Errorf("diagnose %s -o %s shows the pull secret's password as %q", ref, format, form)
				}
			}
		}
	}
}

// TestDiagnoseTextPoolIdentity: the text names the identity each pool
// pulls as.
func TestDiagnoseTextPoolIdentity(t *testing.T) {
	r := diagnoseFixture(t, clustertest.AKS(fixtureNow), cluster.WorkloadRef{Kind: cluster.KindDeployment, Name: clustertest.Deployment, Namespace: clustertest.Namespace})
	if len(r.Pools) == 0 {
		t.Fatal("the fixture's diagnosis has no pools")
	}
	r.Pools[0].Identity = "kubelet credential provider acr-credential-provider (probed on n1)"
	var buf bytes.Buffer
	if err := WriteDiagnoseText(&buf, r); err != nil {
		t.Fatal(err)
	}
	if want := "pool " + r.Pools[0].Name + " pulls as: kubelet credential provider acr-credential-provider (probed on n1)"; !strings.Contains(buf.String(), want) {
		t.Errorf("text output lacks %q:\n%s", want, buf.String())
	}
}

// TestDiagnoseTextPodView: the text shows the node's path and the pod's
// side by side and marks the parting hop, and marks none when the paths
// agree.
func TestDiagnoseTextPodView(t *testing.T) {
	rep := podViewReport(t)
	var b bytes.Buffer
	if err := WriteDiagnoseText(&b, rep); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "Pod view vs node on "+rep.Nodes[0].Name) || !strings.Contains(out, ", parting hop dns") {
		t.Errorf("no pod view with its parting hop:\n%s", out)
	}
	var dnsRow string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "dns ") {
			dnsRow = l
		}
	}
	if !strings.HasSuffix(strings.TrimSpace(dnsRow), "◀ parting hop") {
		t.Errorf("the dns row is not marked as the parting hop: %q\n%s", dnsRow, out)
	}
	pv := rep.Nodes[0].Probe.PodView
	pv.PartingHop = ""
	for i := range pv.Hops {
		pv.Hops[i].Differs = false
	}
	b.Reset()
	if err := WriteDiagnoseText(&b, rep); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "parting") || strings.Contains(b.String(), "differs") {
		t.Errorf("paths that agree are shown parting:\n%s", b.String())
	}
}
