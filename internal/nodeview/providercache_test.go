package nodeview

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/nodeview/credtest"
	"github.com/pullpath/pullpath/internal/verdict"
)

// TestProviderCache runs the test provider through a ProviderCache with a
// clock the test moves, and counts the provider's runs in its request log:
// an answer is kept for its cacheDuration under its cacheKeyType's key, as
// the kubelet keeps it, and a failed run is not kept.
func TestProviderCache(t *testing.T) {
	binDir := t.TempDir() // root "/": no chroot, so no root needed
	bin, err := os.ReadFile(credtest.Build(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(binDir, "lab-provider"), bin, 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "requests")
	runs := func() int {
		b, _ := os.ReadFile(log)
		return strings.Count(string(b), "\n")
	}
	provider := func(mode, keyType, duration string) CredentialProvider {
		return CredentialProvider{Name: "lab-provider", APIVersion: "credentialprovider.kubelet.k8s.io/v1", MatchImages: []string{"*.lab.test"},
			DefaultCacheDuration: &Duration{10 * time.Minute}, Args: []string{mode},
			Env: []ExecEnvVar{{"PP_KEY", "registry.lab.test"}, {"PP_USER", "puller"}, {"PP_PASS", "pw"},
				{"PP_CACHE_KEY_TYPE", keyType}, {"PP_CACHE_DURATION", duration}}}
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	o := ExecOptions{Timeout: 10 * time.Second, Environ: []string{"PP_REQUEST_LOG=" + log}}
	const shop, cart = "registry.lab.test/team/shop", "registry.lab.test/team/cart"
	steps := []struct {
		name     string
		p        CredentialProvider
		image    string
		advance  time.Duration // before the run
		wantRuns int           // total, after the step
		cached   bool
		cause    string
	}{
		{name: "first run", p: provider("good", "Registry", "30s"), image: shop, wantRuns: 1},
		{name: "same image within 30s: kept", p: provider("good", "Registry", "30s"), image: shop, advance: 10 * time.Second, wantRuns: 1, cached: true},
		{name: "other image, same registry: the Registry key serves it", p: provider("good", "Registry", "30s"), image: cart, advance: 10 * time.Second, wantRuns: 1, cached: true},
		{name: "30s after the answer: expired, runs again", p: provider("good", "Registry", "30s"), image: shop, advance: 10 * time.Second, wantRuns: 2},
		{name: "other registry: runs (no key for it)", p: provider("good", "Registry", "30s"), image: "other.lab.test/x", wantRuns: 3, cause: "auth.provider-no-credentials"},
	}
	c := &ProviderCache{Now: func() time.Time { return now }}
	for _, s := range steps {
		now = now.Add(s.advance)
		res, err := c.Run(context.Background(), "/", binDir, s.p, s.image, o)
		if s.cause != "" {
			if ve, ok := verdict.AsError(err); !ok || ve.Cause != s.cause {
				t.Errorf("%s: err %v, want cause %s", s.name, err, s.cause)
			}
		} else if err != nil || res == nil || len(res.Creds) != 1 || res.Creds[0].Username != "puller" {
			t.Errorf("%s: %+v, %v; want puller's credentials", s.name, res, err)
		}
		if res != nil && res.Cached != s.cached {
			t.Errorf("%s: Cached = %v, want %v", s.name, res.Cached, s.cached)
		}
		if res != nil && res.Image != s.image {
			t.Errorf("%s: result for image %s, want %s", s.name, res.Image, s.image)
		}
		if got := runs(); got != s.wantRuns {
			t.Errorf("%s: the provider ran %d times in all, want %d", s.name, got, s.wantRuns)
		}
	}

	// Image keys serve only their image; Global every image; a zero
	// duration and a failure keep nothing.
	for _, tt := range []struct {
		name        string
		p           CredentialProvider
		second      string
		wantRunsAdd int
	}{
		{"Image key, other image", provider("good", "Image", "1m"), cart, 2},
		{"Image key, same image", provider("good", "Image", "1m"), shop, 1},
		{"Global key, other image", provider("good", "Global", "1m"), cart, 1},
		{"cacheDuration 0", provider("good", "Registry", "0s"), shop, 2},
		{"failing provider", provider("fail", "Registry", "1m"), shop, 2},
	} {
		c := &ProviderCache{Now: func() time.Time { return now }}
		before := runs()
		_, _ = c.Run(context.Background(), "/", binDir, tt.p, shop, o)
		_, _ = c.Run(context.Background(), "/", binDir, tt.p, tt.second, o)
		if got := runs() - before; got != tt.wantRunsAdd {
			t.Errorf("%s: %d runs for two lookups, want %d", tt.name, got, tt.wantRunsAdd)
		}
	}
}
