package monitor

import (
	"bytes"
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
	"sigs.k8s.io/yaml"
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
	files := render(t, map[string]any{"prometheusRule": map[string]any{"enabled": true}})
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
	for _, f := range []string{"rbac.yaml", "configmap.yaml", "daemonset.yaml"} {
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
// (Debian's prometheus package); it says so when promtool is missing.
func TestPromtoolRules(t *testing.T) {
	pt, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool test rules: skipped: promtool is not installed (apt-get install prometheus)")
	}
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
