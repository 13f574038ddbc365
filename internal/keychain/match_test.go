package keychain

import "testing"

// TestMatchImage: the examples of the kubelet's documentation
// (kubernetes.io "Configure a kubelet image credential provider",
// matchImages) and of k8s.io/kubernetes pkg/credentialprovider/plugin's
// plugin_test.go and keyring_test.go.
func TestURLsMatch(t *testing.T) {
	tests := []struct {
		glob, image string
		want        bool
	}{
		// The documentation's examples.
		{"*.kubernetes.io", "abc.kubernetes.io", true},
		{"*.kubernetes.io", "abc.def.kubernetes.io", false},
		{"prefix.*.io", "prefix.kubernetes.io", true},
		{"*-good.kubernetes.io", "prefix-good.kubernetes.io", true},
		{"*.*.kubernetes.io", "abc.def.kubernetes.io", true},
		{"*.*.kubernetes.io", "abc.kubernetes.io", false},
		{"123456789.dkr.ecr.us-east-1.amazonaws.com", "123456789.dkr.ecr.us-east-1.amazonaws.com/team/app", true},
		{"*.azurecr.io", "myreg.azurecr.io/team/app", true},
		{"gcr.io", "gcr.io/project/app", true},
		{"registry.io:8080/path", "registry.io:8080/path/app", true},
		// plugin_test.go's TestCredentialProvider rows.
		{"test.registry.io", "test.registry.io/foo/bar", true},
		{"test.registry.io/foo/bar", "test.registry.io/foo/bar", true},
		{"test.registry.io", "test.registry.io", true},
		{"*.registry.io:8080", "test.registry.io:8080/foo", true},
		{"*.*.registry.io", "foo.bar.registry.io/foo/bar", true},
		{"*.registry.io", "test.registry.io", true},
		// Ports must be equal, both ways.
		{"*.registry.io", "test.registry.io:8080/foo", false},
		{"registry.io:8080", "registry.io/foo", false},
		{"registry.io:8080", "registry.io:443/foo", false},
		// Paths are string prefixes (not per segment).
		{"registry.io/foo", "registry.io/foo/bar", true},
		{"registry.io/foo", "registry.io/foobar", true},
		{"registry.io/foo/bar", "registry.io/foo", false},
		{"registry.io/foo", "registry.io/bar/foo", false},
		// A wildcard never crosses a dot and needs the same label count.
		{"*.azurecr.io", "azurecr.io/app", false},
		{"*.dkr.ecr.*.amazonaws.com", "123.dkr.ecr.eu-west-1.amazonaws.com/app", true},
		{"*.dkr.ecr.*.amazonaws.com", "123.dkr.ecr.eu-west-1.amazonaws.com.cn/app", false},
		{"*.dkr.ecr.*.amazonaws.com.cn", "123.dkr.ecr.cn-north-1.amazonaws.com.cn/app", true},
		{"*.pkg.dev", "europe-docker.pkg.dev/p/r/app", true},
		// filepath.Match syntax per label.
		{"registry-?.io", "registry-1.io/app", false},     // the kubelet parses it as a URL: "?" starts the query
		{"registry-[0-9].io", "registry-1.io/app", false}, // "[" in a host is an IPv6 literal to url.Parse
		{"reg*y.io", "registry.io/app", true},
		{"registry-[0-9].io", "registry-a.io/app", false},
		{"[.io", "x.io/app", false}, // a bad pattern matches nothing
		// Case is significant (the kubelet does not fold it).
		{"*.AzureCR.io", "myreg.azurecr.io/app", false},
	}
	for _, tt := range tests {
		if got := URLsMatch(tt.glob, tt.image); got != tt.want {
			t.Errorf("URLsMatch(%q, %q) = %v, want %v", tt.glob, tt.image, got, tt.want)
		}
	}
}

// FuzzKeyring: any key and image, added and looked up, never panics, and a
// key that matches is one URLsMatch accepts.
func FuzzKeyring(f *testing.F) {
	f.Add("*.azurecr.io", "a.azurecr.io/app")
	f.Add("https://index.docker.io/v1/", "docker.io/library/nginx")
	f.Add("[", "x")
	f.Add("registry.lab/team-a", "registry.lab/team-b/app")
	f.Fuzz(func(t *testing.T, key, image string) {
		k := &Keyring{}
		k.Add(Source{Kind: KindPodSecret}, map[string]Entry{key: {Username: "u"}})
		for _, c := range k.Lookup(image) {
			n, _ := normalizeKey(c.Key)
			if !URLsMatch(n, image) && !(isDefaultRegistry(image) && n == "index.docker.io") {
				t.Fatalf("key %q returned for %q but does not match", key, image)
			}
		}
	})
}
