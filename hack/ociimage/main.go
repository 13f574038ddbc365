// Command ociimage builds the probe image as an OCI image layout from
// static pullpath binaries, one per platform, with go-containerregistry:
// a single layer holding /pullpath, entrypoint /pullpath, an index over
// the platforms annotated with the image name. hack/release.sh runs it;
// push the result with `crane push DIR NAME`.
//
//	go run ./hack/ociimage --out dist/oci --name ghcr.io/pullpath/pullpath:v0.1.0 \
//	    --binary linux/amd64=dist/image/linux_amd64/pullpath
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

type binaries []string

func (b *binaries) String() string     { return strings.Join(*b, ",") }
func (b *binaries) Set(s string) error { *b = append(*b, s); return nil }

func main() {
	var bins binaries
	out := flag.String("out", "dist/oci", "directory of the OCI image layout to write (replaced)")
	name := flag.String("name", "ghcr.io/pullpath/pullpath:dev", "image name, recorded as org.opencontainers.image.ref.name")
	flag.Var(&bins, "binary", "OS/ARCH=PATH of a static pullpath binary (repeatable)")
	flag.Parse()
	if err := run(*out, *name, bins); err != nil {
		fmt.Fprintf(os.Stderr, "ociimage: %v\n", err)
		os.Exit(1)
	}
}

func run(out, name string, bins []string) error {
	if len(bins) == 0 {
		return errors.New("no --binary given")
	}
	created := time.Unix(0, 0).UTC()
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		var sec int64
		if _, err := fmt.Sscan(s, &sec); err == nil {
			created = time.Unix(sec, 0).UTC()
		}
	}
	var idx v1.ImageIndex = mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, b := range bins {
		plat, path, ok := strings.Cut(b, "=")
		os_, arch, ok2 := strings.Cut(plat, "/")
		if !ok || !ok2 {
			return fmt.Errorf("parsing --binary %q: want OS/ARCH=PATH", b)
		}
		img, err := image(path, os_, arch, created)
		if err != nil {
			return fmt.Errorf("building the %s image: %w", plat, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{
			Platform:    &v1.Platform{OS: os_, Architecture: arch},
			Annotations: map[string]string{"org.opencontainers.image.ref.name": name},
		}})
	}
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	p, err := layout.Write(out, empty.Index)
	if err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": name})); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	d, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("ociimage: %s %s@%s\n", out, name, d)
	return nil
}

// image is one platform's image: /pullpath from path, nothing else.
func image(path, os_, arch string, created time.Time) (v1.Image, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: "pullpath", Mode: 0o755, Size: int64(len(data)), ModTime: created, Typeflag: tar.TypeReg}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(data); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layerBytes := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerBytes)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Created = os_, arch, v1.Time{Time: created}
	cf.Config.Entrypoint = []string{"/pullpath"}
	cf.Config.Labels = map[string]string{"org.opencontainers.image.source": "https://github.com/pullpath/pullpath"}
	return mutate.ConfigFile(img, cf)
}
