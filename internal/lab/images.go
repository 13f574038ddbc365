package lab

import (
	"archive/tar"
	"compress/gzip"
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Blob is one pushed blob.
type Blob struct {
	Digest    string
	Size      int64
	MediaType string
}

// Image is one pushed image or index.
type Image struct {
	// Ref is the full reference, e.g. "registry.lab.test/team/app:1.0".
	Ref string
	// Repository is the repository path, e.g. "team/app".
	Repository string
	// Digest is the manifest's (or index's) digest.
	Digest    string
	MediaType string
	// Platform is "os/arch" of an image manifest; empty for an index.
	Platform string
	Config   Blob
	Layers   []Blob
	// Manifests are an index's per-platform images.
	Manifests []Image
}

// The repositories the lab pushes the shared single-platform image to, one
// per fault that is chosen by repository prefix (see front and tokenService).
var sharedRepos = []string{"private/app", "forbidden/app", "denied/app", "ratelimited/app",
	"broken/app", "authdown/app", "blobnx/app", "blobdead/app"}

const tag = "1.0"

// The shape of the images that Options.Layers and LayerSize do not change.
const (
	smallLayers    = 3
	smallLayerSize = 64 << 10
)

// setupTransport marks the lab's own requests so the front lets them
// through every fault.
type setupTransport struct {
	inner  http.RoundTripper
	secret string
}

func (t *setupTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(setupHeader, t.secret)
	return t.inner.RoundTrip(r)
}

var _ http.RoundTripper = (*setupTransport)(nil)

// randomLayer is a gzip layer (stored blocks: fast and incompressible)
// holding one file of size random bytes drawn from seed; every open
// regenerates the same bytes, so large layers are never held in memory.
func randomLayer(seed [32]byte, file string, size int64) (v1.Layer, error) {
	opener := func() (io.ReadCloser, error) {
		pr, pw := io.Pipe()
		go func() {
			tw := tar.NewWriter(pw)
			err := tw.WriteHeader(&tar.Header{Name: file, Mode: 0o644, Size: size, Typeflag: tar.TypeReg,
				ModTime: time.Unix(1700000000, 0), Uname: "root", Gname: "root"})
			if err == nil {
				_, err = io.CopyN(tw, mrand.NewChaCha8(seed), size)
			}
			if err == nil {
				err = tw.Close()
			}
			pw.CloseWithError(err)
		}()
		return pr, nil
	}
	return tarball.LayerFromOpener(opener, tarball.WithCompressionLevel(gzip.NoCompression), tarball.WithMediaType(types.OCILayer))
}

// randomImage builds an OCI image for platform "os/arch" with n random
// layers; seeds are drawn from rng so distinct images share no layer.
func randomImage(rng *mrand.ChaCha8, os, arch string, n int, size int64) (v1.Image, error) {
	var layers []v1.Layer
	for i := range n {
		var seed [32]byte
		_, _ = rng.Read(seed[:])
		layer, err := randomLayer(seed, fmt.Sprintf("lab/%s-%s-layer%d.bin", os, arch, i), size)
		if err != nil {
			return nil, fmt.Errorf("making layer: %w", err)
		}
		layers = append(layers, layer)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err := mutate.AppendLayers(img, layers...)
	if err != nil {
		return nil, fmt.Errorf("appending layers: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = os, arch
	cf.Created = v1.Time{Time: time.Unix(1700000000, 0).UTC()}
	cf.Config.Cmd = []string{"/lab/hello"}
	return mutate.ConfigFile(img, cf)
}

func describe(ref, repo string, img v1.Image) (Image, error) {
	m, err := img.Manifest()
	if err != nil {
		return Image{}, err
	}
	d, err := img.Digest()
	if err != nil {
		return Image{}, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return Image{}, err
	}
	out := Image{Ref: ref, Repository: repo, Digest: d.String(), MediaType: string(m.MediaType),
		Platform: cf.OS + "/" + cf.Architecture,
		Config:   Blob{Digest: m.Config.Digest.String(), Size: m.Config.Size, MediaType: string(m.Config.MediaType)}}
	for _, l := range m.Layers {
		out.Layers = append(out.Layers, Blob{Digest: l.Digest.String(), Size: l.Size, MediaType: string(l.MediaType)})
	}
	return out, nil
}

// pushImages pushes, through the lab's own listeners and token service:
//   - team/app:1.0, a linux/amd64 image, then the same image to every
//     repository of sharedRepos (layers mounted across repositories);
//   - corrupt/app:1.0, a linux/amd64 image of its own, whose first layer the
//     blob host corrupts;
//   - multi/app:1.0, an OCI index for linux/amd64 and linux/arm64;
//   - foreign/app:1.0, an OCI index for two platforms that are not this
//     machine's (ForeignPlatforms), so that a runtime on this machine fails
//     to pull it exactly as a node of another architecture would.
func (l *Lab) pushImages(ctx context.Context) error {
	var seed [32]byte
	if _, err := io.ReadFull(crand.Reader, seed[:]); err != nil {
		return err
	}
	rng := mrand.NewChaCha8(seed)
	opts := []remote.Option{
		remote.WithContext(ctx),
		remote.WithTransport(&setupTransport{inner: l.transport, secret: l.setupSecret}),
		remote.WithAuth(&authn.Basic{Username: "pusher", Password: l.pusherPass}),
	}
	team, err := randomImage(rng, "linux", "amd64", l.opts.Layers, l.opts.LayerSize)
	if err != nil {
		return err
	}
	corrupt, err := randomImage(rng, "linux", "amd64", smallLayers, smallLayerSize)
	if err != nil {
		return err
	}
	amd, err := randomImage(rng, "linux", "amd64", smallLayers, smallLayerSize)
	if err != nil {
		return err
	}
	arm, err := randomImage(rng, "linux", "arm64", smallLayers, smallLayerSize)
	if err != nil {
		return err
	}
	foreignPlats := ForeignPlatforms()
	var foreignImgs []v1.Image
	for _, fp := range foreignPlats {
		img, err := randomImage(rng, "linux", fp, smallLayers, smallLayerSize)
		if err != nil {
			return err
		}
		foreignImgs = append(foreignImgs, img)
	}
	foreign := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for i, fp := range foreignPlats {
		foreign = mutate.AppendManifests(foreign, mutate.IndexAddendum{Add: foreignImgs[i], Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: fp}}})
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	idx = mutate.AppendManifests(idx,
		mutate.IndexAddendum{Add: amd, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}},
		mutate.IndexAddendum{Add: arm, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}},
	)

	ref := func(repo string) (name.Tag, error) {
		return name.NewTag(l.Registry + "/" + repo + ":" + tag)
	}
	push := func(repo string, img v1.Image) (Image, error) {
		r, err := ref(repo)
		if err != nil {
			return Image{}, err
		}
		if err := remote.Write(r, img, opts...); err != nil {
			return Image{}, fmt.Errorf("pushing %s: %w", r, err)
		}
		return describe(r.String(), repo, img)
	}

	var (
		mu     sync.Mutex
		images []Image
		errs   []error
		wg     sync.WaitGroup
	)
	add := func(img Image, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs = append(errs, err)
			return
		}
		images = append(images, img)
	}
	wg.Go(func() {
		img, err := push("team/app", team)
		add(img, err)
		if err != nil {
			return
		}
		// Mount team/app's blobs into the other repositories instead of
		// uploading them again (this matters for the benchmark's big layers).
		src, err := ref("team/app")
		if err != nil {
			add(Image{}, err)
			return
		}
		mounted, err := remote.Image(src, opts...)
		if err != nil {
			add(Image{}, fmt.Errorf("reading back %s: %w", src, err))
			return
		}
		var inner sync.WaitGroup
		for _, repo := range sharedRepos {
			inner.Go(func() {
				r, err := ref(repo)
				if err == nil {
					err = remote.Write(r, mounted, opts...)
				}
				if err != nil {
					add(Image{}, fmt.Errorf("pushing %s: %w", repo, err))
					return
				}
				add(describe(r.String(), repo, team))
			})
		}
		inner.Wait()
	})
	wg.Go(func() {
		img, err := push("corrupt/app", corrupt)
		add(img, err)
		if err == nil && len(img.Layers) > 0 {
			d, _ := v1.NewHash(img.Layers[0].Digest)
			l.blobs.setCorrupt(d.Hex)
		}
	})
	wg.Go(func() {
		r, err := ref("foreign/app")
		if err != nil {
			add(Image{}, err)
			return
		}
		if err := remote.WriteIndex(r, foreign, opts...); err != nil {
			add(Image{}, fmt.Errorf("pushing %s: %w", r, err))
			return
		}
		d, err := foreign.Digest()
		if err != nil {
			add(Image{}, err)
			return
		}
		add(Image{Ref: r.String(), Repository: "foreign/app", Digest: d.String(), MediaType: string(types.OCIImageIndex)}, nil)
	})
	wg.Go(func() {
		r, err := ref("multi/app")
		if err != nil {
			add(Image{}, err)
			return
		}
		if err := remote.WriteIndex(r, idx, opts...); err != nil {
			add(Image{}, fmt.Errorf("pushing %s: %w", r, err))
			return
		}
		d, err := idx.Digest()
		if err != nil {
			add(Image{}, err)
			return
		}
		out := Image{Ref: r.String(), Repository: "multi/app", Digest: d.String(), MediaType: string(types.OCIImageIndex)}
		for _, img := range []v1.Image{amd, arm} {
			sub, err := describe("", "multi/app", img)
			if err != nil {
				add(Image{}, err)
				return
			}
			sub.Ref = l.Registry + "/multi/app@" + sub.Digest
			out.Manifests = append(out.Manifests, sub)
		}
		add(out, nil)
	})
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	// A stable order: as listed in the pushImages comment.
	order := map[string]int{"team/app": 0}
	for i, r := range sharedRepos {
		order[r] = i + 1
	}
	order["corrupt/app"] = len(sharedRepos) + 1
	order["multi/app"] = len(sharedRepos) + 2
	order["foreign/app"] = len(sharedRepos) + 3
	sorted := make([]Image, len(images))
	for _, img := range images {
		sorted[order[img.Repository]] = img
	}
	l.images = sorted
	return nil
}

// ForeignPlatforms are two linux architectures other than this machine's:
// the platforms of foreign/app's index.
func ForeignPlatforms() []string {
	var out []string
	for _, a := range []string{"s390x", "ppc64le", "riscv64"} {
		if a != runtime.GOARCH && len(out) < 2 {
			out = append(out, a)
		}
	}
	return out
}

// NodePlatform is the platform of this machine, the one a runtime here
// pulls for.
func NodePlatform() string { return "linux/" + runtime.GOARCH }
