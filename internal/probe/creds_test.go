package probe

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/verdict"
)

func TestMatchAuth(t *testing.T) {
	auths := map[string]dockerAuth{
		"https://index.docker.io/v1/": {Username: "hub"},
		"*.azurecr.io":                {Username: "acr-wildcard"},
		"myreg.azurecr.io":            {Username: "acr-exact"},
		"registry.example:5000":       {Username: "with-port"},
		"https://ghcr.io":             {Username: "gh"},
	}
	tests := []struct{ host, want string }{
		{"registry-1.docker.io", "hub"},
		{"docker.io", "hub"},
		{"myreg.azurecr.io", "acr-exact"},
		{"other.azurecr.io", "acr-wildcard"},
		{"a.b.azurecr.io", ""},
		{"registry.example:5000", "with-port"},
		{"registry.example", ""},
		{"ghcr.io", "gh"},
		{"quay.io", ""},
	}
	for _, tt := range tests {
		_, got, ok := MatchAuth(auths, tt.host)
		if got.Username != tt.want || ok != (tt.want != "") {
			t.Errorf("MatchAuth(%q) = %q, %v, want %q", tt.host, got.Username, ok, tt.want)
		}
	}
}

func TestLoadPullSecret(t *testing.T) {
	dir := t.TempDir()
	cfg := `{"auths":{"registry.lab.test":{"auth":"` + base64.StdEncoding.EncodeToString([]byte("puller:s3cret")) + `"}}}`
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	yamlSecret := write("secret.yaml", "apiVersion: v1\nkind: Secret\ntype: kubernetes.io/dockerconfigjson\ndata:\n  .dockerconfigjson: "+base64.StdEncoding.EncodeToString([]byte(cfg))+"\n")
	jsonSecret := write("secret.json", `{"apiVersion":"v1","kind":"Secret","type":"kubernetes.io/dockerconfigjson","stringData":{".dockerconfigjson":`+strquote(cfg)+`}}`)
	bare := write("config.json", cfg)
	for _, f := range []string{yamlSecret, jsonSecret, bare} {
		c, err := LoadPullSecret(f, "registry.lab.test")
		if err != nil || c == nil || c.Username != "puller" || c.Password != "s3cret" {
			t.Errorf("LoadPullSecret(%s) = %+v, %v", filepath.Base(f), c, err)
			continue
		}
		if strings.Contains(c.Describe(), "s3cret") {
			t.Errorf("Describe leaks the password: %q", c.Describe())
		}
	}
	if c, err := LoadPullSecret(bare, "other.example"); err != nil || c != nil {
		t.Errorf("LoadPullSecret for an unlisted host = %+v, %v, want nil, nil", c, err)
	}
	for name, content := range map[string]string{
		"garbage":   "\x00\x01 not json",
		"bad-b64":   "kind: Secret\ndata:\n  .dockerconfigjson: '%%%'\n",
		"no-key":    "kind: Secret\ndata:\n  other: eA==\n",
		"bad-auth":  `{"auths":{"registry.lab.test":{"auth":"!!"}}}`,
		"no-colon":  `{"auths":{"registry.lab.test":{"auth":"` + base64.StdEncoding.EncodeToString([]byte("nocolon")) + `"}}}`,
		"too-large": strings.Repeat(" ", maxCredsFile+10),
	} {
		_, err := LoadPullSecret(write(name, content), "registry.lab.test")
		ve, ok := verdict.AsError(err)
		if !ok || ve.Cause != "config.credentials" {
			t.Errorf("LoadPullSecret(%s) error = %v, want config.credentials", name, err)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("error leaks a secret: %v", err)
		}
	}
	if _, err := LoadPullSecret(filepath.Join(dir, "missing"), "x"); err == nil {
		t.Error("LoadPullSecret(missing file) did not fail")
	}
}

func strquote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }
