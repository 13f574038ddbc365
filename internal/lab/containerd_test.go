package lab

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/containerd/containerd/v2/core/remotes/docker"
	"github.com/containerd/containerd/v2/core/remotes/docker/config"
	"github.com/containerd/platforms"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/internal/nodeview"
)

// containerdPull pulls s.Image the way containerd's CRI plugin fetches it:
// containerd's own docker resolver and fetcher, hosts from the scenario
// root's etc/containerd/certs.d (so mirrors apply), the root's CA bundle,
// the scenario's credentials, and the node platform; every blob is read and
// its digest verified. Names resolve through the lab's dialer (the lab zone
// plus the hosts-entry name), not through the scenario's resolv.conf.
func containerdPull(ctx context.Context, l *Lab, s Scenario) (dialed []string, err error) {
	var mu sync.Mutex
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		mu.Lock()
		dialed = append(dialed, address)
		mu.Unlock()
		return l.DialContext(ctx, network, address)
	}
	return dialed, containerdFetch(ctx, l, s, dial)
}

func containerdFetch(ctx context.Context, l *Lab, s Scenario, dial func(context.Context, string, string) (net.Conn, error)) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(l.CAPEM)
	hosts := config.ConfigureHosts(ctx, config.HostOptions{
		HostDir: config.HostDirFromRoot(filepath.Join(s.Root, "etc", "containerd", "certs.d")),
		Credentials: func(string) (string, string, error) {
			return s.Username, s.Password, nil
		},
		DefaultTLS: &tls.Config{RootCAs: pool},
		UpdateClient: func(c *http.Client) error {
			tr, ok := c.Transport.(*http.Transport)
			if !ok {
				return fmt.Errorf("unexpected transport %T", c.Transport)
			}
			tr.DialContext = dial
			// containerd's transport takes its proxy from the service's
			// environment (http.ProxyFromEnvironment): the root's unit.
			px := nodeProxy(s.Root)
			tr.Proxy = func(r *http.Request) (*url.URL, error) { return px.For(r.URL) }
			return nil
		},
	})
	resolver := docker.NewResolver(docker.ResolverOptions{Hosts: hosts})
	name, desc, err := resolver.Resolve(ctx, s.Image)
	if err != nil {
		return fmt.Errorf("failed to resolve reference %q: %w", s.Image, err)
	}
	fetcher, err := resolver.Fetcher(ctx, name)
	if err != nil {
		return err
	}
	fetch := func(d ocispec.Descriptor) ([]byte, error) {
		rc, err := fetcher.Fetch(ctx, d)
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		b, err := io.ReadAll(io.LimitReader(rc, d.Size+1))
		if err != nil {
			return nil, fmt.Errorf("failed to copy: %w", err)
		}
		if int64(len(b)) != d.Size || digest.FromBytes(b) != d.Digest {
			// containerd's content writer says this on Commit.
			return nil, fmt.Errorf("failed to copy: unexpected commit digest %s, expected %s: failed precondition", digest.FromBytes(b), d.Digest)
		}
		return b, nil
	}
	b, err := fetch(desc)
	if err != nil {
		return err
	}
	if desc.MediaType == ocispec.MediaTypeImageIndex {
		var idx ocispec.Index
		if err := json.Unmarshal(b, &idx); err != nil {
			return err
		}
		want, err := platforms.Parse(s.Platform)
		if err != nil {
			return err
		}
		match := platforms.Only(want)
		found := false
		for _, m := range idx.Manifests {
			if m.Platform != nil && match.Match(*m.Platform) {
				desc, found = m, true
				break
			}
		}
		if !found {
			return fmt.Errorf("no match for platform in manifest: not found")
		}
		if b, err = fetch(desc); err != nil {
			return err
		}
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	for _, d := range append([]ocispec.Descriptor{m.Config}, m.Layers...) {
		if _, err := fetch(d); err != nil {
			return err
		}
	}
	return nil
}

// TestContainerdPulls runs every scenario through containerd's own resolver
// and checks the error names the failing endpoint the scenario expects. The
// error texts are logged: they are what containerd says in the field.
func TestContainerdPulls(t *testing.T) {
	for _, s := range shared.Scenarios {
		t.Run(s.Name, func(t *testing.T) {
			if s.Name == "dns-resolver-down" || s.Name == "dns-private-zone" {
				t.Skip("the scenario lives in the root's resolv.conf / the public answer; the lab dialer resolves with the lab zone and refuses to dial the public address")
			}
			dialed, err := containerdPull(t.Context(), shared, s)
			t.Logf("containerd: %v", err)
			if s.Name == "mirror-fallback" {
				// The dead mirror was tried first, then the registry.
				if len(dialed) < 2 || dialed[0] != shared.Endpoint(hDeadMirror) {
					t.Errorf("containerd dialed %v, want %s first, then the registry", dialed, shared.Endpoint(hDeadMirror))
				}
			}
			if s.Expect.OK {
				if err != nil {
					t.Errorf("containerd pull of %s: %v, want success", s.Image, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("containerd pull of %s succeeded, want a %s failure", s.Image, s.Expect.Cause)
			}
			// explain must give containerd's own words the verdict the
			// probe gives the scenario: the same layer and role.
			res := explain.Classify(fmt.Sprintf("failed to pull and unpack image %q: %v", s.Image, err))
			if res.Verdict.Layer != s.Expect.Layer {
				t.Errorf("explain(containerd's error) layer = %q (%s), want %q", res.Verdict.Layer, res.Verdict.Cause, s.Expect.Layer)
			}
			if res.Verdict.Role != "" && res.Verdict.Role != s.Expect.Role {
				t.Errorf("explain(containerd's error) role = %q, want %q", res.Verdict.Role, s.Expect.Role)
			}
			want := wantInContainerdError(s)
			for _, w := range want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("containerd pull of %s: error %q lacks %q", s.Image, err, w)
				}
			}
		})
	}
}

// wantInContainerdError is what containerd's error must mention for each
// failing scenario: the failing host (or the status it got).
func wantInContainerdError(s Scenario) []string {
	host := func() string {
		h := s.Expect.Endpoint
		h = strings.TrimSuffix(h, ":443")
		return h
	}
	switch s.Expect.Cause {
	case "dns.nxdomain":
		return []string{host(), "no such host"}
	case "route.refused":
		return []string{host(), "connection refused"}
	case "tls.untrusted":
		return []string{"certificate signed by unknown authority"}
	case "tls.name":
		return []string{"certificate is valid for other.lab.test"}
	case "tls.expired":
		return []string{"certificate has expired"}
	case "auth.no-credentials":
		return []string{"failed to fetch anonymous token", "401"}
	case "auth.bad-credentials":
		return []string{"401"}
	case "authz.denied":
		if strings.Contains(s.Image, "denied/") {
			return []string{"403"}
		}
		return []string{"authorization failed"}
	case "manifest.unknown":
		return []string{"not found"}
	case "route.proxy":
		if strings.Contains(s.Name, "denied") {
			return []string{"Forbidden"}
		}
		return []string{"proxyconnect tcp", "connection refused"}
	case "manifest.platform":
		return []string{"no match for platform"}
	case "transfer.digest":
		return []string{"unexpected commit digest"}
	case "registry.ratelimit":
		return []string{"429"}
	case "registry.unavailable":
		return []string{"503"}
	}
	return []string{s.Expect.Cause}
}

// nodeProxy is the proxy environment of containerd's service under root.
func nodeProxy(root string) nodeview.Proxy {
	v, _ := nodeview.Load(root)
	return v.Proxy
}
