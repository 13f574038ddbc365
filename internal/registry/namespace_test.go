package registry

import (
	"strings"
	"testing"
)

// TestNamespaceQuery: a request carries ?ns=<registry> exactly when
// containerd's would (core/remotes/docker/registry.go isProxy): to a
// mirror, never to the registry itself, and not to registry-1.docker.io
// for docker.io, which is docker.io's own endpoint.
func TestNamespaceQuery(t *testing.T) {
	for _, tc := range []struct {
		ns, host, want string
	}{
		{"docker.io", "registry-1.docker.io", "https://registry-1.docker.io/v2/library/alpine/manifests/3"},
		{"docker.io", "mirror.gcr.io", "https://mirror.gcr.io/v2/library/alpine/manifests/3?ns=docker.io"},
		{"docker.io", "docker.io", "https://docker.io/v2/library/alpine/manifests/3"},
		{"registry.lab:5000", "registry.lab:5000", "https://registry.lab:5000/v2/library/alpine/manifests/3"},
		{"registry.lab:5000", "mirror.lab", "https://mirror.lab/v2/library/alpine/manifests/3?ns=registry.lab%3A5000"},
		// registry-1.docker.io is a mirror like any other for another registry
		{"quay.io", "registry-1.docker.io", "https://registry-1.docker.io/v2/library/alpine/manifests/3?ns=quay.io"},
		{"", "mirror.lab", "https://mirror.lab/v2/library/alpine/manifests/3"},
	} {
		s := &Session{Host: Host{Host: tc.host, Scheme: "https", Path: "/v2", Namespace: tc.ns}, Repo: "library/alpine"}
		got := s.url("manifests", "3")
		if got != tc.want {
			t.Errorf("ns %q host %q: %s, want %s", tc.ns, tc.host, got, tc.want)
		}
		if blob := s.url("blobs", "sha256:ab"); strings.Contains(blob, "ns=") != strings.Contains(tc.want, "ns=") {
			t.Errorf("ns %q host %q: blob URL %s disagrees with the manifest URL on ns", tc.ns, tc.host, blob)
		}
	}
}
