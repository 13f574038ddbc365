package keychain

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pullpath/pullpath/internal/verdict"
)

func users(cs []Credential) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Username)
	}
	return out
}

// TestKeyringKeyShapes: pull-secret key shapes (host, path-scoped,
// wildcard, with a port), each alone in a pull secret, looked up for registry.lab/lab/multi: only the kubelet's rule
// decides (the probe's old first-slash rule sent the credential for the
// two "no" rows).
func TestKeyringKeyShapes(t *testing.T) {
	tests := []struct {
		key  string
		want bool
	}{
		{"registry.lab", true},
		{"https://registry.lab", true},
		{"registry.lab/lab", true},
		{"registry.lab/lab/multi", true},
		{"https://registry.lab/v2/", true},
		{"*.lab", true},
		{"registry.lab:443", false},
		{"registry.lab/other", false},
		{"registry.lab/lab/multi2", false},
		{"myreg.azurecr.io/team-a", false},
	}
	for _, tt := range tests {
		k := &Keyring{}
		k.Add(Source{Kind: KindPodSecret, Name: "s"}, map[string]Entry{tt.key: {Username: "u", Password: "p"}})
		if got := len(k.Lookup("registry.lab/lab/multi")) > 0; got != tt.want {
			t.Errorf("key %q for registry.lab/lab/multi: matched %v, want %v", tt.key, got, tt.want)
		}
	}
	k := &Keyring{}
	k.Add(Source{Kind: KindPodSecret, Name: "s"}, map[string]Entry{"myreg.azurecr.io/team-a": {Username: "a"}})
	if got := k.Lookup("myreg.azurecr.io/team-b/app"); len(got) != 0 {
		t.Errorf("team-a key used for team-b: %v", users(got))
	}
}

func TestKeyringOrder(t *testing.T) {
	k := &Keyring{}
	k.Add(Source{Kind: KindPodSecret, Name: "one"}, map[string]Entry{
		"quay.io": {Username: "quay"}, "quay.io/coreos": {Username: "coreos"}, "https://index.docker.io/v1/": {Username: "hub"}})
	k.Add(Source{Kind: KindPodSecret, Name: "two"}, map[string]Entry{"quay.io": {Username: "quay2"}})
	if diff := cmp.Diff([]string{"coreos", "quay", "quay2"}, users(k.Lookup("quay.io/coreos/etcd"))); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"hub"}, users(k.Lookup("docker.io/library/nginx"))); diff != "" {
		t.Errorf("Docker Hub (-want +got):\n%s", diff)
	}
}

func TestKubeletOrderAndNotes(t *testing.T) {
	node := &Keyring{}
	node.Add(Source{Kind: KindNodeConfig, Name: "/var/lib/kubelet/config.json"}, map[string]Entry{"*.lab.test": {Username: "node"}})
	prov := &Keyring{}
	prov.Add(Source{Kind: KindProvider, Name: "lab-provider"}, map[string]Entry{"registry.lab.test": {Username: "prov"}})
	k := Kubelet{
		PodSecrets: []Secret{
			{Name: "a", Auths: map[string]Entry{"registry.lab.test/team-a": {Username: "team-a"}, "registry.lab.test/team-b": {Username: "team-b"}}},
			{Name: "b", Auths: map[string]Entry{"registry.lab.test": {Username: "pod"}}},
		},
		ServiceAccountSecrets: []Secret{{Name: "sa", Auths: map[string]Entry{"registry.lab.test": {Username: "sa"}}}},
		Node:                  node, Providers: prov,
	}
	r := k.Resolve("registry.lab.test/team-a/app")
	if diff := cmp.Diff([]string{"team-a", "pod", "node", "prov"}, users(r.Credentials)); diff != "" {
		t.Errorf("credentials (-want +got):\n%s", diff)
	}
	for _, c := range r.Credentials {
		if c.ServerAddress != "" {
			t.Errorf("%s has server address %q; the kubelet sets none", c.Name(), c.ServerAddress)
		}
	}
	codes := map[string]int{}
	for _, n := range r.Notes {
		codes[n.Code]++
		if strings.Contains(n.Message, "team-b\"") && n.Code != CodeKeyDockerDiffer {
			t.Errorf("team-b key: %s %s", n.Code, n.Message)
		}
	}
	if codes[CodeSAUnused] != 1 || codes[CodeKeyDockerDiffer] != 1 {
		t.Errorf("notes %+v", r.Notes)
	}
	// Without pod secrets, the service account's count.
	k.PodSecrets = nil
	r = k.Resolve("registry.lab.test/team-a/app")
	if diff := cmp.Diff([]string{"sa", "node", "prov"}, users(r.Credentials)); diff != "" {
		t.Errorf("with the service account's secret (-want +got):\n%s", diff)
	}
	if r.Credentials[0].Source.Kind != KindServiceAccount {
		t.Errorf("source %v", r.Credentials[0].Source)
	}
	// Nothing matches: anonymous, and why.
	r = Kubelet{PodSecrets: []Secret{{Name: "a", Auths: map[string]Entry{"registry.lab.test:443": {Username: "x", Password: "pw-secret"}}}}}.Resolve("registry.lab.test/app")
	if len(r.Credentials) != 0 || !strings.Contains(r.Anonymous, `key "registry.lab.test:443"`) || strings.Contains(r.Anonymous, "pw-secret") {
		t.Errorf("anonymous: %+v", r)
	}
	if r = (Kubelet{}).Resolve("registry.lab.test/app"); r.Anonymous == "" || r.Credentials == nil {
		t.Errorf("no source: %+v", r)
	}
}

func TestRoute(t *testing.T) {
	hosts := []Host{PlanHost{Host: "mirror.lab.test", Mirror: true}, PlanHost{Host: "registry.lab.test"}}
	up := &Credential{Source: Source{Kind: KindPodSecret, Name: "s"}, Key: "registry.lab.test", Username: "up", Password: "p"}
	name := func(rs []Routed) []string {
		var out []string
		for _, r := range rs {
			if r.Credential == nil {
				out = append(out, r.Host+"=anonymous")
			} else {
				out = append(out, r.Host+"="+r.Credential.Username)
			}
		}
		return out
	}
	fb := Fallbacks{ConfigAuth: map[string]Credential{"mirror.lab.test": {Username: "cfg"}},
		AuthFile: map[string]Entry{"mirror.lab.test/team-a": {Username: "file-a"}, "https://mirror.lab.test": {Username: "file"}}, AuthFileName: "/etc/crio/auth.json"}
	tests := []struct {
		name string
		rt   Runtime
		cred *Credential
		repo string
		want []string
	}{
		{"containerd: empty server address reaches the mirror", Containerd16, up, "team-a/app", []string{"mirror.lab.test=up", "registry.lab.test=up"}},
		{"containerd: server address with scheme", Containerd16, &Credential{Username: "up", ServerAddress: "https://registry.lab.test"}, "app", []string{"mirror.lab.test=anonymous", "registry.lab.test=up"}},
		{"containerd: server address without scheme names no host", Containerd16, &Credential{Username: "up", ServerAddress: "registry.lab.test"}, "app", []string{"mirror.lab.test=anonymous", "registry.lab.test=anonymous"}},
		{"containerd: no AuthConfig, config.toml auth", Containerd16, nil, "app", []string{"mirror.lab.test=cfg", "registry.lab.test=anonymous"}},
		{"containers/image: mirror from the auth file, namespace first", ContainersImage, up, "team-a/app", []string{"mirror.lab.test=file-a", "registry.lab.test=up"}},
		{"containers/image: host key", ContainersImage, up, "team-b/app", []string{"mirror.lab.test=file", "registry.lab.test=up"}},
		{"containers/image: no auth file", ContainersImage, up, "app", []string{"mirror.lab.test=anonymous", "registry.lab.test=up"}},
	}
	for _, tt := range tests {
		f := fb
		if strings.HasSuffix(tt.name, "no auth file") {
			f.AuthFile = nil
		}
		got := Route(tt.rt, "registry.lab.test", tt.repo, hosts, tt.cred, f)
		if diff := cmp.Diff(tt.want, name(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
		for _, r := range got {
			if r.Why == "" {
				t.Errorf("%s: %s has no reason", tt.name, r.Host)
			}
		}
	}
	got := Route(ContainersImage, "registry.lab.test", "app", hosts, up, Fallbacks{})
	if n := MirrorAnonymous(got); len(n) != 1 || n[0].Code != CodeMirrorAnonymous {
		t.Errorf("MirrorAnonymous = %+v", n)
	}
	if n := MirrorAnonymous(Route(Containerd16, "registry.lab.test", "app", hosts, up, Fallbacks{})); len(n) != 0 {
		t.Errorf("containerd sends it to the mirror, no warning: %+v", n)
	}
}

func TestParseSecret(t *testing.T) {
	cfg := `{"auths":{"registry.lab.test":{"auth":"` + base64.StdEncoding.EncodeToString([]byte("puller:s3cret")) + `"}}}`
	yamlSecret := "apiVersion: v1\nkind: Secret\ntype: kubernetes.io/dockerconfigjson\ndata:\n  .dockerconfigjson: " + base64.StdEncoding.EncodeToString([]byte(cfg)) + "\n"
	for _, in := range []string{cfg, yamlSecret, `{"registry.lab.test":{"username":"puller","password":"s3cret"}}`} {
		got, err := ParseSecret([]byte(in), "x")
		if err != nil || got["registry.lab.test"] != (Entry{"puller", "s3cret"}) {
			t.Errorf("ParseSecret = %+v, %v", got, err)
		}
	}
	for _, bad := range []string{"\x00 s3cret", `{"auths":{"r":{"auth":"!!"}}}`, "kind: Secret\ndata:\n  other: eA==\n"} {
		_, err := ParseSecret([]byte(bad), "x")
		if ve, ok := verdict.AsError(err); !ok || ve.Cause != "config.credentials" || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("ParseSecret(bad) = %v", err)
		}
	}
	if !slices.Contains([]bool{DockerMatches("registry.lab.test/team-a", "registry.lab.test/team-b/app")}, true) ||
		DockerMatches("*.lab.test", "registry.lab.test/app") || !DockerMatches("https://index.docker.io/v1/", "docker.io/library/nginx") {
		t.Error("DockerMatches")
	}
}
