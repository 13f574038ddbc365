package nodelab

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// BinaryImage packs one executable file into a single-layer image for this
// machine's platform with go-containerregistry: the file at path in the
// image, entrypoint [path]. Nothing is downloaded.
func BinaryImage(binary, path string) (v1.Image, error) {
	data, err := os.ReadFile(binary)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: path[1:], Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(data); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Config.Entrypoint = []string{path}
	return mutate.ConfigFile(img, cf)
}

// PushTo pushes img to ref over TLS trusting pool, dialing with dial (from
// inside a lab namespace).
func PushTo(ctx context.Context, ref string, img v1.Image, dial func(ctx context.Context, network, addr string) (net.Conn, error), pool *x509.CertPool) error {
	r, err := name.ParseReference(ref)
	if err != nil {
		return fmt.Errorf("parsing %s: %w", ref, err)
	}
	tr := &http.Transport{DialContext: dial, TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	if err := remote.Write(r, img, remote.WithContext(ctx), remote.WithTransport(tr)); err != nil {
		return fmt.Errorf("pushing %s: %w", ref, err)
	}
	return nil
}
