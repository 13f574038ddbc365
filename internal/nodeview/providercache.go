package nodeview

import (
	"context"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/pullpath/pullpath/internal/verdict"
)

// ProviderCache keeps credential provider answers as the kubelet's plugin
// cache does (pkg/credentialprovider/plugin): an answer is kept for its
// cacheDuration (the response's, else the config's defaultCacheDuration;
// zero keeps nothing) under the key its cacheKeyType names: the image
// (Image), the image's registry host (Registry) or one key for every image
// (Global). A lookup tries the image, then its registry, then the global
// key. Answers run with a service-account token are not kept (the kubelet
// keys those by the service account as well; the agent runs none). Failed
// runs are not kept either: the kubelet runs the provider again on the next
// pull. A long-running caller (the monitor agent) shares one cache across
// probes so that it runs a provider as often as the kubelet would, not once
// a round.
type ProviderCache struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu      sync.Mutex
	entries map[string]cachedAnswer
}

type cachedAnswer struct {
	res     *ProviderResult
	expires time.Time
}

// NewProviderCache returns an empty cache.
func NewProviderCache() *ProviderCache { return &ProviderCache{} }

func (c *ProviderCache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// providerID names a provider within a node root: two roots or two bin
// dirs with the same provider name are different providers.
func providerID(root, binDir, name string) string {
	return path.Clean(root) + "\x00" + path.Join(binDir, name)
}

// cacheRegistry is the kubelet's parseRegistry: the image's first path
// element, its registry host.
func cacheRegistry(image string) string {
	image = strings.TrimPrefix(strings.TrimPrefix(image, "https://"), "http://")
	host, _, _ := strings.Cut(image, "/")
	return host
}

// Get returns provider p's kept answer for image (under root and binDir),
// its keys matched against image, or nil when none is kept or it expired.
func (c *ProviderCache) Get(root, binDir string, p CredentialProvider, image string) *ProviderResult {
	if c == nil {
		return nil
	}
	id := providerID(root, binDir, p.Name)
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, key := range []string{"Image\x00" + image, "Registry\x00" + cacheRegistry(image), "Global\x00"} {
		e, ok := c.entries[id+"\x00"+key]
		if !ok {
			continue
		}
		if !now.Before(e.expires) {
			delete(c.entries, id+"\x00"+key)
			continue
		}
		r := *e.res
		r.Image, r.Elapsed, r.Stderr, r.Cached = image, 0, "", true
		r.Keys, r.Creds = LookupAuth(r.auth, image)
		return &r
	}
	return nil
}

// Put keeps res, an answer of provider p, for its cache duration.
func (c *ProviderCache) Put(root, binDir string, p CredentialProvider, res *ProviderResult) {
	if c == nil || res == nil || res.CacheDuration <= 0 || res.token != "" || res.auth == nil {
		return
	}
	var key string
	switch res.CacheKeyType {
	case "Image":
		key = "Image\x00" + res.Image
	case "Registry":
		key = "Registry\x00" + cacheRegistry(res.Image)
	case "Global":
		key = "Global\x00"
	default:
		return // the kubelet rejects such an answer; nothing to keep
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]cachedAnswer{}
	}
	kept := *res
	c.entries[providerID(root, binDir, p.Name)+"\x00"+key] = cachedAnswer{res: &kept, expires: c.now().Add(res.CacheDuration)}
}

// Run returns provider p's answer for image: the kept one when there is
// one (Cached set, no run), else RunProvider's, kept when it succeeded. A
// nil cache always runs the provider.
func (c *ProviderCache) Run(ctx context.Context, root, binDir string, p CredentialProvider, image string, o ExecOptions) (*ProviderResult, error) {
	if c == nil || p.TokenAttributes != nil {
		return RunProvider(ctx, root, binDir, p, image, o)
	}
	if res := c.Get(root, binDir, p, image); res != nil {
		if len(res.Creds) == 0 {
			return res, verdict.Errorf(verdict.CodeAuthProviderNoCredentials, verdict.RoleNone, "", "kubelet credential provider %s returned no credentials for %s (auth keys: %v; its answer kept for %s)", p.Name, image, res.AllKeys, res.CacheDuration)
		}
		return res, nil
	}
	res, err := RunProvider(ctx, root, binDir, p, image, o)
	if err == nil {
		c.Put(root, binDir, p, res)
	}
	return res, err
}
