package cluster

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pullpath/pullpath/internal/probe"
)

// TestDiagnoseAndProbeAgreeOnCredentials runs diagnose's and probe's
// credential answers through the same rows (the kubelet's key shapes:
// paths, ports and globs, as in the netlab credential lab): for each pull secret and image, the key
// diagnose names as the pull secret's entry must be the key of the first
// credential the probe sends, and "no match" on one side must be
// "anonymous" on the other.
func TestDiagnoseAndProbeAgreeOnCredentials(t *testing.T) {
	rows := []struct {
		name  string
		keys  []string
		image string
		want  string // the key both must name, "" for none
	}{
		{"upstream only", []string{"registry.lab.test"}, "registry.lab.test/team-a/app:1", "registry.lab.test"},
		{"both keys", []string{"registry.lab.test", "mirror.lab.test"}, "registry.lab.test/team-a/app:1", "registry.lab.test"},
		{"path team-a for team-a", []string{"registry.lab.test/team-a", "registry.lab.test/team-b"}, "registry.lab.test/team-a/app:1", "registry.lab.test/team-a"},
		{"path team-b for team-b", []string{"registry.lab.test/team-a", "registry.lab.test/team-b"}, "registry.lab.test/team-b/app:1", "registry.lab.test/team-b"},
		{"team-a key only, team-b image", []string{"myreg.azurecr.io/team-a"}, "myreg.azurecr.io/team-b/app:1", ""},
		{"wildcard", []string{"*.lab.test"}, "registry.lab.test/team-a/app:1", "*.lab.test"},
		{"key with a port", []string{"registry.lab.test:443"}, "registry.lab.test/team-a/app:1", ""},
		{"more specific path first", []string{"registry.lab.test", "registry.lab.test/team-a"}, "registry.lab.test/team-a/app:1", "registry.lab.test/team-a"},
		{"other path", []string{"registry.lab/other"}, "registry.lab/lab/multi:v1", ""},
		{"longer sibling path", []string{"registry.lab/lab/multi2"}, "registry.lab/lab/multi:v1", ""},
		{"/v2/ is no path", []string{"https://registry.lab/v2/"}, "registry.lab/lab/multi:v1", "https://registry.lab/v2/"},
		{"Docker Hub", []string{"https://index.docker.io/v1/"}, "nginx:1.25", "https://index.docker.io/v1/"},
	}
	dir := t.TempDir()
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			auths := map[string]map[string]string{}
			for _, k := range row.keys {
				auths[k] = map[string]string{"username": "u-" + k, "password": "p"}
			}
			cfg, _ := json.Marshal(map[string]any{"auths": auths})
			secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "regcred", Namespace: "shop"}, Type: corev1.SecretTypeDockerConfigJson,
				Data: map[string][]byte{corev1.DockerConfigJsonKey: cfg}}

			// probe --pull-secret with the same secret.
			f := filepath.Join(dir, "secret.json")
			b, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Secret", "type": string(secret.Type),
				"data": map[string][]byte{corev1.DockerConfigJsonKey: cfg}})
			if err := os.WriteFile(f, b, 0o600); err != nil {
				t.Fatal(err)
			}
			res, err := probe.Credentials(row.image, probe.Options{PullSecret: f})
			if err != nil {
				t.Fatal(err)
			}
			probeKey := ""
			if len(res.Credentials) > 0 {
				probeKey = res.Credentials[0].Key
			}

			// diagnose on a pod with that secret.
			spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: row.image}},
				ImagePullSecrets: []corev1.LocalObjectReference{{Name: "regcred"}}}
			in := &Input{Workload: WorkloadRef{Kind: "Pod", Name: "app", Namespace: "shop"}, Template: &spec,
				Pods:        []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "shop"}, Spec: spec}},
				PullSecrets: map[string]SecretInfo{"regcred": summariseSecret(secret)}}
			rep := Analyze(in)
			if len(rep.Identity.PullSecrets) != 1 {
				t.Fatalf("diagnose pull secrets: %+v", rep.Identity.PullSecrets)
			}
			ps := rep.Identity.PullSecrets[0]
			diagKey := ""
			if ps.Matches {
				diagKey = ps.Entry
			}
			if diagKey != probeKey || probeKey != row.want {
				t.Errorf("diagnose names %q (%s), probe sends %q (anonymous: %q); want %q", diagKey, ps.Problem, probeKey, res.Anonymous, row.want)
			}
			if (probeKey == "") != (res.Anonymous != "") {
				t.Errorf("probe: key %q with anonymous reason %q", probeKey, res.Anonymous)
			}
		})
	}
}
