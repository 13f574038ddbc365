package monitor

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/pullpath/pullpath/internal/tiers"
)

const (
	chartDir    = "../../deploy/chart/pullpath-monitor"
	manifestDir = "../../deploy/monitor"
)

// objects splits multi-document YAML into objects keyed kind/namespace/name.
// ConfigMap data that is itself YAML is parsed too, so that key order and
// comments do not count.
func objects(t *testing.T, docs ...string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, d := range docs {
		for _, part := range strings.Split(d, "\n---") {
			var obj map[string]any
			if err := yaml.Unmarshal([]byte(part), &obj); err != nil {
				t.Fatalf("parsing %q: %v", part, err)
			}
			if len(obj) == 0 {
				continue
			}
			md, _ := obj["metadata"].(map[string]any)
			if obj["kind"] == "ConfigMap" {
				data, _ := obj["data"].(map[string]any)
				for k, v := range data {
					var parsed any
					if err := yaml.Unmarshal([]byte(v.(string)), &parsed); err == nil {
						data[k] = parsed
					}
				}
			}
			key := obj["kind"].(string) + "/" + str(md["namespace"]) + "/" + str(md["name"])
			if _, dup := out[key]; dup {
				t.Fatalf("%s is defined twice", key)
			}
			out[key] = obj
		}
	}
	return out
}

func str(v any) string { s, _ := v.(string); return s }

func render(t *testing.T, values map[string]any) map[string]string {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("loading the chart: %v", err)
	}
	vals, err := chartutil.ToRenderValues(ch, values, chartutil.ReleaseOptions{Name: "pullpath-monitor", Namespace: "pullpath", IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		t.Fatalf("rendering the chart: %v", err)
	}
	return files
}

// TestChartMatchesManifests renders the chart with the Helm SDK and its
// default values and checks that it makes exactly the objects of
// deploy/monitor (less the Namespace, which `helm install --create-namespace`
// makes), and that the PrometheusRule holds the rules of rules.yaml.
func TestChartMatchesManifests(t *testing.T) {
	files := render(t, map[string]any{"prometheusRule": map[string]any{"enabled": true}, "podMonitor": map[string]any{"enabled": true}})
	var rendered []string
	var rule string
	for name, content := range files {
		if strings.HasSuffix(name, "prometheusrule.yaml") {
			rule = content
			continue
		}
		if strings.HasSuffix(name, ".yaml") {
			rendered = append(rendered, content)
		}
	}
	var plain []string
	for _, f := range []string{"rbac.yaml", "configmap.yaml", "daemonset.yaml", "podmonitor.yaml"} {
		b, err := os.ReadFile(filepath.Join(manifestDir, f))
		if err != nil {
			t.Fatal(err)
		}
		plain = append(plain, string(b))
	}
	got, want := objects(t, rendered...), objects(t, plain...)
	keys := func(m map[string]map[string]any) []string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return ks
	}
	if !reflect.DeepEqual(keys(got), keys(want)) {
		t.Fatalf("the chart makes %v, deploy/monitor has %v", keys(got), keys(want))
	}
	for k := range want {
		if !reflect.DeepEqual(got[k], want[k]) {
			g, _ := yaml.Marshal(got[k])
			w, _ := yaml.Marshal(want[k])
			t.Errorf("%s differs:\nchart:\n%s\ndeploy/monitor:\n%s", k, g, w)
		}
	}
	ds := want["DaemonSet/pullpath/pullpath-monitor"]
	spec := ds["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	if spec["hostNetwork"] != true || spec["dnsPolicy"] != "Default" || !strings.Contains(toYAML(spec["tolerations"]), "operator: Exists") {
		t.Errorf("the DaemonSet must run with hostNetwork, dnsPolicy Default and tolerate every taint: %v", spec)
	}

	// The PrometheusRule carries the plain rules file's groups.
	var pr struct {
		Spec map[string]any `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(rule), &pr); err != nil || pr.Spec == nil {
		t.Fatalf("the PrometheusRule does not parse: %v\n%s", err, rule)
	}
	b, err := os.ReadFile(filepath.Join(manifestDir, "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rules map[string]any
	if err := yaml.Unmarshal(b, &rules); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(pr.Spec, rules) {
		t.Errorf("the PrometheusRule's groups differ from rules.yaml:\n%s\nvs\n%s", toYAML(pr.Spec), toYAML(rules))
	}

	// Values change what they say.
	off := render(t, map[string]any{"nodeCondition": false, "priorityClassName": ""})
	all := strings.Join(mapValues(off), "\n")
	if strings.Contains(all, "nodes/status") || strings.Contains(all, "priorityClassName") || !strings.Contains(all, "--node-condition=false") {
		t.Errorf("nodeCondition=false, priorityClassName='' still renders the condition's RBAC or the priority class")
	}
	if strings.Contains(all, "PodMonitor") || strings.Contains(all, "PrometheusRule") {
		t.Errorf("the default values render a PodMonitor or a PrometheusRule: both need prometheus-operator's CRDs and are opt-in")
	}
	sel := strings.Join(mapValues(render(t, map[string]any{"podMonitor": map[string]any{"enabled": true, "labels": map[string]any{"release": "kube-prometheus-stack"}, "interval": "30s"}})), "\n")
	if !strings.Contains(sel, "release: kube-prometheus-stack") || !strings.Contains(sel, "interval: 30s") {
		t.Errorf("podMonitor.labels and podMonitor.interval do not reach the PodMonitor")
	}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func toYAML(v any) string { b, _ := yaml.Marshal(v); return string(b) }

// TestChartLint runs Helm's own linter over the chart.
func TestChartLint(t *testing.T) {
	res := lint.All(chartDir, nil, "pullpath", false)
	for _, m := range res.Messages {
		if m.Severity >= support.WarningSev {
			t.Errorf("helm lint: %s", m)
		}
	}
}

// TestPromtoolRules runs the alerting rules' unit tests with promtool
// (Debian's prometheus package): the prometheus tier.
func TestPromtoolRules(t *testing.T) {
	tiers.Require(t, tiers.Prometheus)
	pt := tiers.PromtoolBin
	var out bytes.Buffer
	cmd := exec.Command(pt, "test", "rules", "rules_test.yaml")
	cmd.Dir = manifestDir
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out.String())
	}
	cmd = exec.Command(pt, "check", "rules", "rules.yaml")
	cmd.Dir = manifestDir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, b)
	}
}

// TestShippedDiscoveryAndPrivileges checks what the alert rules and the
// docs say of the shipped DaemonSet and PodMonitor (deploy/monitor): the
// pod label both discoveries turn into app_kubernetes_io_name (the label
// PullPathAgentDown matches, rules_test.yaml), the annotations naming the
// metrics port, the PodMonitor's job label and relabelling, and the
// container's privileges: root, every capability dropped but SYS_CHROOT
// (the kubelet's credential provider runs chrooted into /host), no
// privilege escalation, a read-only root filesystem and /host read-only.
func TestShippedDiscoveryAndPrivileges(t *testing.T) {
	read := func(f string) []byte {
		b, err := os.ReadFile(filepath.Join(manifestDir, f))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var ds appsv1.DaemonSet
	if err := yaml.UnmarshalStrict(read("daemonset.yaml"), &ds); err != nil {
		t.Fatal(err)
	}
	tpl := ds.Spec.Template
	if got := tpl.Labels["app.kubernetes.io/name"]; got != "pullpath-monitor" {
		t.Errorf("the agent pods' app.kubernetes.io/name is %q, want pullpath-monitor (the rules match app_kubernetes_io_name=\"pullpath-monitor\")", got)
	}
	c := tpl.Spec.Containers[0]
	var metricsPort int32
	for _, p := range c.Ports {
		if p.Name == "metrics" {
			metricsPort = p.ContainerPort
		}
	}
	a := tpl.Annotations
	if a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != fmt.Sprint(metricsPort) || a["prometheus.io/path"] != "/metrics" {
		t.Errorf("scrape annotations %v, want scrape true, port %d (the metrics port), path /metrics", a, metricsPort)
	}
	sc := c.SecurityContext
	if sc == nil || sc.Capabilities == nil || sc.RunAsUser == nil || *sc.RunAsUser != 0 ||
		!reflect.DeepEqual(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || !reflect.DeepEqual(sc.Capabilities.Add, []corev1.Capability{"SYS_CHROOT"}) ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.Privileged != nil && *sc.Privileged {
		t.Errorf("the agent's securityContext %s: want root, drop ALL, add only SYS_CHROOT, no privilege escalation, read-only root filesystem", toYAML(sc))
	}
	for _, m := range c.VolumeMounts {
		if strings.HasPrefix(m.MountPath, "/host") && !m.ReadOnly {
			t.Errorf("%s is mounted writable: the chroot into /host must open nothing the agent cannot already read", m.MountPath)
		}
	}
	if tpl.Spec.HostPID || tpl.Spec.HostIPC {
		t.Errorf("the agent shares the host's PID or IPC namespace")
	}

	var pm struct {
		Spec struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			JobLabel  string `json:"jobLabel"`
			Endpoints []struct {
				Port        string `json:"port"`
				Path        string `json:"path"`
				Relabelings []struct {
					SourceLabels []string `json:"sourceLabels"`
					TargetLabel  string   `json:"targetLabel"`
				} `json:"relabelings"`
			} `json:"podMetricsEndpoints"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(read("podmonitor.yaml"), &pm); err != nil {
		t.Fatal(err)
	}
	for k, v := range pm.Spec.Selector.MatchLabels {
		if tpl.Labels[k] != v {
			t.Errorf("the PodMonitor selects %s=%s, which the agent pods do not carry", k, v)
		}
	}
	if job := tpl.Labels[pm.Spec.JobLabel]; job != "pullpath-monitor" {
		t.Errorf("the PodMonitor's jobLabel %q gives job %q, want pullpath-monitor", pm.Spec.JobLabel, job)
	}
	if len(pm.Spec.Endpoints) != 1 || pm.Spec.Endpoints[0].Port != "metrics" || pm.Spec.Endpoints[0].Path != "/metrics" {
		t.Fatalf("the PodMonitor's endpoints %+v, want the metrics port's /metrics", pm.Spec.Endpoints)
	}
	relabelled := false
	for _, r := range pm.Spec.Endpoints[0].Relabelings {
		if r.TargetLabel == "app_kubernetes_io_name" && reflect.DeepEqual(r.SourceLabels, []string{"__meta_kubernetes_pod_label_app_kubernetes_io_name"}) {
			relabelled = true
		}
	}
	if !relabelled {
		t.Errorf("the PodMonitor does not copy the pod's app.kubernetes.io/name into app_kubernetes_io_name, which PullPathAgentDown matches")
	}
	if rules := string(read("rules.yaml")); !strings.Contains(rules, `up{app_kubernetes_io_name="pullpath-monitor"} == 0`) {
		t.Errorf("PullPathAgentDown does not match app_kubernetes_io_name=\"pullpath-monitor\"")
	}
}
