package main

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// TestRunWritesALayout builds a two-platform layout and reads it back with
// go-containerregistry: platforms, entrypoint, the binary at /pullpath.
func TestRunWritesALayout(t *testing.T) {
	dir := t.TempDir()
	bins := map[string]string{"amd64": "amd64-binary", "arm64": "arm64-binary"}
	var args []string
	for arch, content := range bins {
		p := filepath.Join(dir, arch)
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
		args = append(args, "linux/"+arch+"="+p)
	}
	out := filepath.Join(dir, "oci")
	if err := run(out, "ghcr.io/pullpath/pullpath:v9", args); err != nil {
		t.Fatal(err)
	}
	lp, err := layout.FromPath(out)
	if err != nil {
		t.Fatal(err)
	}
	outer, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	om, _ := outer.IndexManifest()
	if len(om.Manifests) != 1 || om.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "ghcr.io/pullpath/pullpath:v9" {
		t.Fatalf("layout index = %+v, want one index named ghcr.io/pullpath/pullpath:v9", om.Manifests)
	}
	idx, err := outer.ImageIndex(om.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	im, _ := idx.IndexManifest()
	if len(im.Manifests) != 2 {
		t.Fatalf("image index has %d manifests, want 2", len(im.Manifests))
	}
	for _, d := range im.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, _ := img.ConfigFile()
		if cf.OS != "linux" || cf.Architecture != d.Platform.Architecture || len(cf.Config.Entrypoint) != 1 || cf.Config.Entrypoint[0] != "/pullpath" {
			t.Errorf("config %s/%s entrypoint %v, want linux/%s /pullpath", cf.OS, cf.Architecture, cf.Config.Entrypoint, d.Platform.Architecture)
		}
		layers, _ := img.Layers()
		if len(layers) != 1 {
			t.Fatalf("%d layers, want 1", len(layers))
		}
		rc, _ := layers[0].Uncompressed()
		tr := tar.NewReader(rc)
		h, err := tr.Next()
		if err != nil || h.Name != "pullpath" || h.Mode&0o111 == 0 {
			t.Fatalf("layer entry %+v, %v; want an executable pullpath", h, err)
		}
		got, _ := io.ReadAll(tr)
		if string(got) != bins[d.Platform.Architecture] {
			t.Errorf("%s binary = %q", d.Platform.Architecture, got)
		}
		rc.Close()
	}
	if err := run(out, "x", []string{"linux-amd64"}); err == nil {
		t.Error("run with a malformed --binary = nil error")
	}
}
