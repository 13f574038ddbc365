package probe

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/keychain"
	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/verdict"
)

// TestCredentialsKubeletRule: the probe's credentials for an image are the
// kubelet's (internal/keychain), from a pull secret in any of its forms.
// By that rule a key for team-a is not sent for team-b, nor registry.lab/other
// or registry.lab/lab/multi2 for registry.lab/lab/multi.
func TestCredentialsKubeletRule(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cfg := `{"auths":{"registry.lab.test":{"auth":"` + base64.StdEncoding.EncodeToString([]byte("puller:s3cret")) + `"}}}`
	yamlSecret := write("secret.yaml", "apiVersion: v1\nkind: Secret\ntype: kubernetes.io/dockerconfigjson\ndata:\n  .dockerconfigjson: "+base64.StdEncoding.EncodeToString([]byte(cfg))+"\n")
	jsonSecret := write("secret.json", `{"apiVersion":"v1","kind":"Secret","type":"kubernetes.io/dockerconfigjson","stringData":{".dockerconfigjson":`+strquote(cfg)+`}}`)
	bare := write("config.json", cfg)
	for _, f := range []string{yamlSecret, jsonSecret, bare} {
		res, err := Credentials("registry.lab.test/app:1", Options{PullSecret: f})
		if err != nil || len(res.Credentials) != 1 || res.Credentials[0].Username != "puller" || res.Credentials[0].Password != "s3cret" {
			t.Errorf("Credentials(%s) = %+v, %v", filepath.Base(f), res, err)
			continue
		}
		if strings.Contains(res.Credentials[0].Name(), "s3cret") {
			t.Errorf("Name leaks the password: %q", res.Credentials[0].Name())
		}
	}
	if res, err := Credentials("other.example/app", Options{PullSecret: bare}); err != nil || len(res.Credentials) != 0 || res.Anonymous == "" {
		t.Errorf("an unlisted host = %+v, %v, want anonymous with a reason", res, err)
	}
	for _, tt := range []struct{ key, image string }{
		{"myreg.azurecr.io/team-a", "myreg.azurecr.io/team-b/app"},
		{"registry.lab/other", "registry.lab/lab/multi:v1"},
		{"registry.lab/lab/multi2", "registry.lab/lab/multi:v1"},
		{"registry.lab:443", "registry.lab/lab/multi:v1"},
	} {
		f := write("k.json", `{"auths":{"`+tt.key+`":{"username":"u","password":"p"}}}`)
		res, err := Credentials(tt.image, Options{PullSecret: f})
		if err != nil || len(res.Credentials) != 0 {
			t.Errorf("key %q for %s: %+v, %v; the kubelet sends nothing", tt.key, tt.image, res.Credentials, err)
		}
	}
	for name, content := range map[string]string{
		"garbage":   "\x00\x01 not json",
		"bad-b64":   "kind: Secret\ndata:\n  .dockerconfigjson: '%%%'\n",
		"no-key":    "kind: Secret\ndata:\n  other: eA==\n",
		"bad-auth":  `{"auths":{"registry.lab.test":{"auth":"!!"}}}`,
		"no-colon":  `{"auths":{"registry.lab.test":{"auth":"` + base64.StdEncoding.EncodeToString([]byte("nocolon")) + `"}}}`,
		"too-large": strings.Repeat(" ", keychain.MaxFile+10),
	} {
		_, err := Credentials("registry.lab.test/app", Options{PullSecret: write(name, content)})
		ve, ok := verdict.AsError(err)
		if !ok || ve.Cause != "config.credentials" {
			t.Errorf("Credentials(%s) error = %v, want config.credentials", name, err)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("error leaks a secret: %v", err)
		}
	}
	if _, err := Credentials("x/y", Options{PullSecret: filepath.Join(dir, "missing")}); err == nil {
		t.Error("a missing pull secret did not fail")
	}
}

func strquote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

func TestPodViewWarning(t *testing.T) {
	for _, tt := range []struct {
		search []string
		want   bool
	}{
		{[]string{"team.svc.cluster.local", "svc.cluster.local", "cluster.local"}, true},
		{[]string{"svc.cluster.local."}, true},
		{[]string{"internal.cloudapp.net"}, false},
		{nil, false},
	} {
		v := &nodeview.View{Resolv: nodeview.ResolvConf{Search: tt.search}}
		if _, got := podView(v); got != tt.want {
			t.Errorf("podView(search %v) = %v, want %v", tt.search, got, tt.want)
		}
	}
}
