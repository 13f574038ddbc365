package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/labtest"
	"github.com/pullpath/pullpath/internal/probe"
)

// probeJSON is a probe report as the probe prints it, with the registry's
// dns and route steps given and the rest of a working pull after them.
func probeJSON(t *testing.T, dns, route, verdict string) *probe.Report {
	t.Helper()
	rest := `,{"name":"tls","target":"registry.lab.test -> 198.18.10.10:443","status":"ok","detail":"TLS 1.3"}`
	eps := `,{"host":"auth.lab.test","port":443,"role":"auth","steps":[{"name":"dns","target":"auth.lab.test","status":"ok"},{"name":"http","target":"GET /token","status":"ok"}]},
	{"host":"blob.lab.test","port":443,"role":"blob","steps":[{"name":"http","target":"GET /blob","status":"ok"}]}`
	if !strings.Contains(verdict, `"ok":true`) {
		rest, eps = "", ""
	}
	s := fmt.Sprintf(`{"image":"registry.lab.test/team/shop:1","verdict":%s,"plan":[],"blobs":[],"warnings":[],"started":"2026-01-01T00:00:00Z","duration_ms":1,
	"endpoints":[{"host":"registry.lab.test","port":443,"role":"registry","steps":[%s%s%s]}%s]}`, verdict, dns, route, rest, eps)
	var r probe.Report
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("%v\n%s", err, s)
	}
	return &r
}

const (
	okVerdict       = `{"ok":true,"layer":"none","summary":"pulled"}`
	nxVerdict       = `{"ok":false,"layer":"dns","cause":"dns.nxdomain","role":"registry","summary":"no such host"}`
	unreachVerdict  = `{"ok":false,"layer":"route","cause":"route.unreachable","role":"registry","summary":"no route"}`
	privateDNS      = `{"name":"dns","target":"registry.lab.test","status":"ok","detail":"→ 198.18.10.10 via 198.18.20.57:53","facts":{"source":"dns","answers":[{"server":"198.18.20.57:53","query":"registry.lab.test.shop.svc.cluster.local. A","rcode":"NXDOMAIN","addrs":null,"cnames":null,"duration_ms":1,"outcome":"nxdomain"},{"server":"198.18.20.57:53","query":"registry.lab.test. A","rcode":"NOERROR","addrs":["198.18.10.10"],"cnames":null,"duration_ms":1,"outcome":"ok"}]}}`
	nodePrivateDNS  = `{"name":"dns","target":"registry.lab.test","status":"ok","detail":"→ 198.18.10.10 via 198.18.20.53:53","facts":{"source":"dns","answers":[{"server":"198.18.20.53:53","query":"registry.lab.test. A","rcode":"NOERROR","addrs":["198.18.10.10"],"cnames":null,"duration_ms":1,"outcome":"ok"}]}}`
	publicNXDNS     = `{"name":"dns","target":"registry.lab.test","status":"failed","cause":"dns.nxdomain","detail":"no such host","facts":{"source":"dns","answers":[{"server":"198.18.20.56:53","query":"registry.lab.test. A","rcode":"NXDOMAIN","addrs":null,"cnames":null,"duration_ms":1,"outcome":"nxdomain"}]}}`
	routeOK         = `,{"name":"route","target":"registry.lab.test -> 198.18.10.10","status":"ok","detail":"via eth0 gw 198.18.111.1"}`
	podRouteOK      = `,{"name":"route","target":"registry.lab.test -> 198.18.10.10","status":"ok","detail":"via eth0 gw 10.244.11.1"}`
	routeUnreach    = `,{"name":"route","target":"registry.lab.test -> 198.18.10.10","status":"failed","cause":"route.unreachable","detail":"connect: no route to host"}`
	routeSkippedDNS = `,{"name":"route","target":"registry.lab.test","status":"skipped","detail":"blocked by dns"}`
)

// TestComparePaths checks the five ways the node's path and the pod's can
// stand (they part at dns, they part at the route, the same failure, both
// pull, only the pods fail) on probe reports as the probe prints them.
func TestComparePaths(t *testing.T) {
	for _, tt := range []struct {
		name      string
		node, pod *probe.Report
		div       Divergence
		parting   string
		says      []string
	}{
		{"dns", probeJSON(t, publicNXDNS, routeSkippedDNS, nxVerdict), probeJSON(t, privateDNS, podRouteOK, okVerdict), DivergenceNodeFails, HopDNS,
			[]string{"Pods resolve registry.lab.test through cluster DNS 198.18.20.57:53, which answers 198.18.10.10", "the node's resolver 198.18.20.56:53 answers NXDOMAIN", "cannot fix it"}},
		{"route", probeJSON(t, nodePrivateDNS, routeUnreach, unreachVerdict), probeJSON(t, privateDNS, podRouteOK, okVerdict), DivergenceNodeFails, HopRoute,
			[]string{"over the pod network (198.18.10.10 via eth0 gw 10.244.11.1)", "no route to host", "cannot fix it"}},
		{"same", probeJSON(t, nodePrivateDNS, routeUnreach, unreachVerdict), probeJSON(t, privateDNS, routeUnreach, unreachVerdict), DivergenceSame, "",
			[]string{"fail the same way, at route (route.unreachable)"}},
		{"ok", probeJSON(t, nodePrivateDNS, routeOK, okVerdict), probeJSON(t, privateDNS, podRouteOK, okVerdict), DivergenceOK, "",
			[]string{"the two paths agree"}},
		{"pods fail", probeJSON(t, nodePrivateDNS, routeOK, okVerdict), probeJSON(t, publicNXDNS, routeSkippedDNS, nxVerdict), DivergencePodsFail, HopDNS,
			[]string{"the pull is fine", "a separate check (the application's connectivity after start is its own check)"}},
		{"both differ", probeJSON(t, publicNXDNS, routeSkippedDNS, nxVerdict), probeJSON(t, privateDNS, routeUnreach, unreachVerdict), DivergenceBothDiffer, HopDNS,
			[]string{"Both fail, differently: the node at dns (dns.nxdomain), pods at route"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			node := &ProbeResult{Status: ProbeDone, Report: tt.node, Verdict: tt.node.Verdict}
			pv := &PodView{ProbeResult: ProbeResult{Status: ProbeDone, Report: tt.pod, Verdict: tt.pod.Verdict}}
			ComparePaths(node, pv)
			if pv.Divergence != tt.div || pv.PartingHop != tt.parting {
				t.Errorf("divergence %s parting %q, want %s %q; hops %+v", pv.Divergence, pv.PartingHop, tt.div, tt.parting, pv.Hops)
			}
			for _, s := range tt.says {
				if !strings.Contains(pv.Consequence, s) {
					t.Errorf("consequence %q lacks %q", pv.Consequence, s)
				}
			}
			if len(pv.Hops) != len(hopOrder) {
				t.Errorf("%d hops, want %d", len(pv.Hops), len(hopOrder))
			}
			for _, h := range pv.Hops {
				if h.Name == pv.PartingHop && !h.Differs {
					t.Errorf("parting hop %s not marked as differing", h.Name)
				}
				if tt.parting == "" && h.Differs {
					t.Errorf("hop %s differs with no parting hop: %+v", h.Name, h)
				}
			}
		})
	}
}

// TestComparePathsWithoutReport: a pod-view probe that did not run says so
// and compares nothing.
func TestComparePathsWithoutReport(t *testing.T) {
	node := &ProbeResult{Status: ProbeDone, Report: probeJSON(t, nodePrivateDNS, routeOK, okVerdict)}
	pv := &PodView{ProbeResult: ProbeResult{Status: ProbeTimeout, Error: "the probe did not finish in 3m0s"}}
	ComparePaths(node, pv)
	if pv.Divergence != DivergenceUnknown || len(pv.Hops) != 0 || !strings.Contains(pv.Consequence, "did not finish") {
		t.Errorf("got %s %q %+v", pv.Divergence, pv.Consequence, pv.Hops)
	}
	ComparePaths(nil, pv)
	if pv.Divergence != DivergenceUnknown {
		t.Errorf("nil node probe: %s", pv.Divergence)
	}
}

// TestPodViewJob checks the pod-view Job is an ordinary, unprivileged pod
// on the probed node, cleaned up like the probe Jobs.
func TestPodViewJob(t *testing.T) {
	po := ProbeOptions{Image: "mcr.example/pullpath:1", RunID: "abc", PodView: true}
	j := PodViewJob(ProbeTarget{Node: "n1", Platform: "linux/amd64"}, "reg.example/app:1", "shop", po, "pull")
	ps := j.Spec.Template.Spec
	c := ps.Containers[0]
	switch {
	case ps.NodeName != "n1", ps.HostNetwork, ps.DNSPolicy != corev1.DNSClusterFirst:
		t.Errorf("node %s hostNetwork %v dns %s", ps.NodeName, ps.HostNetwork, ps.DNSPolicy)
	case c.Image != po.Image, c.SecurityContext.RunAsNonRoot == nil || !*c.SecurityContext.RunAsNonRoot, *c.SecurityContext.AllowPrivilegeEscalation, !*c.SecurityContext.ReadOnlyRootFilesystem:
		t.Errorf("container %+v", c)
	case len(c.SecurityContext.Capabilities.Add) != 0:
		t.Errorf("capabilities added: %v", c.SecurityContext.Capabilities.Add)
	case j.Labels[LabelComponent] != "probe" || j.Labels[LabelRun] != "abc" || j.Labels[LabelView] != ViewPod:
		t.Errorf("labels %v: Cleanup would not find it", j.Labels)
	case j.Name == jobName("abc", "n1"):
		t.Errorf("pod-view job has the node probe's name %s", j.Name)
	case j.Spec.TTLSecondsAfterFinished == nil || j.Spec.ActiveDeadlineSeconds == nil:
		t.Errorf("no TTL or deadline")
	}
	for _, v := range ps.Volumes {
		if v.HostPath != nil {
			t.Errorf("host mount %s", v.HostPath.Path)
		}
	}
	if strings.Contains(strings.Join(c.Args, " "), "--root") {
		t.Errorf("args %v: the pod view reads the pod's own /etc", c.Args)
	}
	if nj := ProbeJob(ProbeTarget{Node: "n1"}, "reg.example/app:1", "shop", po, ""); nj.Labels[LabelView] != ViewNode {
		t.Errorf("node probe labels %v", nj.Labels)
	}
}

// TestComparePathsOnLabProbes compares two real probe runs against the
// loopback lab, one image: the "node" reads a root whose resolv.conf names
// a nameserver where nothing listens, the "pod" the lab DNS. The paths part
// at dns, the node fails there, the pod pulls.
func TestComparePathsOnLabProbes(t *testing.T) {
	l := labtest.New(t, lab.Options{})
	pod := labtest.Scenario(t, l, "healthy")
	node := labtest.Scenario(t, l, "dns-resolver-down")
	run := func(root string) *ProbeResult {
		rep, err := probe.Run(context.Background(), pod.Image, probe.Options{Root: root, Platform: pod.Platform, Timeout: 2 * time.Second, DNSPort: l.DNSPort})
		if err != nil {
			t.Fatal(err)
		}
		return &ProbeResult{Status: ProbeDone, Report: rep, Verdict: rep.Verdict}
	}
	nr, pr := run(node.Root), run(pod.Root)
	pv := &PodView{ProbeResult: *pr}
	ComparePaths(nr, pv)
	if pv.Divergence != DivergenceNodeFails || pv.PartingHop != HopDNS {
		t.Fatalf("divergence %s parting %q, want node-fails at dns; hops %+v", pv.Divergence, pv.PartingHop, pv.Hops)
	}
	h := pv.hop(HopDNS)
	if h.Node.Status != "failed" || h.Pod.Status != "ok" || !strings.Contains(h.Pod.Text, l.Addrs.Registry.String()) {
		t.Errorf("dns hop %+v", h)
	}
	for _, name := range []string{HopToken, HopBlob} {
		if h := pv.hop(name); h.Pod.Status != "ok" || h.Node.Status != "skipped" {
			t.Errorf("%s hop %+v: want the pod's host reached, the node's not", name, h)
		}
	}
	t.Logf("real probes, loopback lab: %s\n%+v", pv.Consequence, pv.Hops)
}
