package nodeview

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMatching(t *testing.T) {
	cfg := CredentialProviderConfig{Providers: []CredentialProvider{
		{Name: "acr", MatchImages: []string{"*.azurecr.io"}},
		{Name: "all-registry-io", MatchImages: []string{"*.registry.io", "registry.io"}},
		{Name: "foo-only", MatchImages: []string{"test.registry.io/foo"}},
	}}
	tests := []struct {
		image string
		want  []string
	}{
		{"myreg.azurecr.io/app", []string{"acr"}},
		{"test.registry.io/foo/bar", []string{"all-registry-io", "foo-only"}},
		{"test.registry.io/bar", []string{"all-registry-io"}},
		{"docker.io/library/nginx", nil},
	}
	for _, tt := range tests {
		var got []string
		for _, p := range cfg.Matching(tt.image) {
			got = append(got, p.Name)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Matching(%q) (-want +got):\n%s", tt.image, diff)
		}
	}
}

// TestLookupAuth: the keyring's rules for a response's auth keys
// (keyring_test.go's TestDockerKeyringForGlob and friends).
func TestLookupAuth(t *testing.T) {
	a := func(u string) AuthConfig { return AuthConfig{Username: u, Password: "pw-" + u} }
	tests := []struct {
		name  string
		auth  map[string]AuthConfig
		image string
		want  []string // usernames, in the kubelet's order
	}{
		{"host", map[string]AuthConfig{"registry.io": a("host")}, "registry.io/app", []string{"host"}},
		{"scheme and /v2/ dropped", map[string]AuthConfig{"https://registry.io/v2/": a("v2")}, "registry.io/app", []string{"v2"}},
		{"/v1/ path of a scheme-less key", map[string]AuthConfig{"registry.io/v1/": a("v1")}, "registry.io/app", []string{"v1"}},
		{"glob", map[string]AuthConfig{"*.registry.io": a("glob")}, "test.registry.io/app", []string{"glob"}},
		{"more specific path first", map[string]AuthConfig{"quay.io": a("quay"), "quay.io/coreos": a("coreos")}, "quay.io/coreos/etcd", []string{"coreos", "quay"}},
		{"other path", map[string]AuthConfig{"quay.io/coreos": a("coreos")}, "quay.io/other/etcd", nil},
		{"other host", map[string]AuthConfig{"registry.io": a("host")}, "other.io/app", nil},
		{"port must match", map[string]AuthConfig{"registry.io:5000": a("port")}, "registry.io/app", nil},
		{"port matches", map[string]AuthConfig{"registry.io:5000": a("port")}, "registry.io:5000/app", []string{"port"}},
		{"Docker Hub's index key", map[string]AuthConfig{"https://index.docker.io/v1/": a("hub")}, "docker.io/library/nginx", []string{"hub"}},
		{"Docker Hub, bare name", map[string]AuthConfig{"index.docker.io": a("hub")}, "library/nginx", []string{"hub"}},
		{"not Docker Hub", map[string]AuthConfig{"index.docker.io": a("hub")}, "registry.io/library/nginx", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys, creds := LookupAuth(tt.auth, tt.image)
			var got []string
			for _, c := range creds {
				got = append(got, c.Username)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("LookupAuth(%v, %q) (-want +got):\n%s", tt.auth, tt.image, diff)
			}
			if len(keys) != len(creds) {
				t.Errorf("%d keys for %d credentials", len(keys), len(creds))
			}
		})
	}
}

// TestMergeResults: several matching providers' answers are one keyring,
// as in the kubelet: keys in reverse lexical order (the more specific path
// first), and under the same key the earlier provider's entry first. The
// kubelet tries them all in this order.
func TestMergeResults(t *testing.T) {
	a := &ProviderResult{Provider: "acr-credential-provider", auth: map[string]AuthConfig{
		"myreg.azurecr.io":         {Username: "a", Password: "pa"},
		"https://other.azurecr.io": {Username: "a2", Password: "pa2"},
	}}
	b := &ProviderResult{Provider: "lab-provider", auth: map[string]AuthConfig{
		"myreg.azurecr.io":          {Username: "b", Password: "pb"},
		"myreg.azurecr.io/team":     {Username: "b-team", Password: "pbt"},
		"myreg.azurecr.io/v2/":      {Username: "b-v2", Password: "pbv"},
		"myreg.azurecr.io/teamless": {Username: "b-x", Password: "pbx"},
	}}
	got := MergeResults([]*ProviderResult{a, nil, b}, "myreg.azurecr.io/team/app")
	var order []string
	for _, c := range got {
		order = append(order, c.Provider+":"+c.Key+":"+c.Cred.Username)
	}
	want := []string{
		"lab-provider:myreg.azurecr.io/team:b-team",
		"acr-credential-provider:myreg.azurecr.io:a",
		"lab-provider:myreg.azurecr.io:b",
		"lab-provider:myreg.azurecr.io/v2/:b-v2",
	}
	if !slices.Equal(order, want) {
		t.Errorf("MergeResults order\n got %q\nwant %q", order, want)
	}
	if got := MergeResults([]*ProviderResult{b, a}, "myreg.azurecr.io/app"); len(got) != 3 || got[0].Provider != "lab-provider" {
		t.Errorf("provider order decides under one key: %+v", got)
	}
	if got := MergeResults([]*ProviderResult{a}, "third.azurecr.io/app"); len(got) != 0 {
		t.Errorf("no key matches: %+v", got)
	}
	if s := b.Secrets(); len(s) != 4 {
		t.Errorf("Secrets() = %d values, want every password of the answer (4)", len(s))
	}
}
