package cri_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/pullpath/pullpath/internal/cri"
	"github.com/pullpath/pullpath/internal/tiers"
	"github.com/pullpath/pullpath/test/netlab"
	"github.com/pullpath/pullpath/test/netlab/minireg"
)

func TestAuthConfigStringHidesSecrets(t *testing.T) {
	tests := []struct {
		name string
		auth *cri.AuthConfig
		want string
	}{
		{"nil", nil, "anonymous"},
		{"empty", &cri.AuthConfig{}, "anonymous"},
		{"basic", &cri.AuthConfig{Username: "puller", Password: "s3cret-pw"}, "username puller, password ****"},
		{"tokens", &cri.AuthConfig{IdentityToken: "s3cret-id", RegistryToken: "s3cret-reg"}, "identity token ****, registry token ****"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.auth.String()
			if got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			if strings.Contains(got, "s3cret") {
				t.Errorf("String() = %q shows a secret", got)
			}
		})
	}
}

func TestDialNoSocket(t *testing.T) {
	ctx := context.Background()
	_, err := cri.Dial(ctx, filepath.Join(t.TempDir(), "none.sock"), cri.WithDialTimeout(200*time.Millisecond))
	if err == nil {
		t.Fatal("Dial(missing socket) = nil error, want an error")
	}
	if _, err := cri.Dial(ctx, ""); err == nil {
		t.Error("Dial(\"\") = nil error, want an error")
	}
}

// runtime is a containerd in a lab node namespace with a small registry
// (registry.cri.test, trusted through the node's trust store) holding
// team/app:1.
type runtime struct {
	socket string
	log    string
	host   string
}

func startRuntime(t *testing.T) runtime {
	t.Helper()
	tiers.Require(t, tiers.Netlab)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := netlab.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })

	const host = "registry.cri.test"
	ca, err := minireg.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.Issue(host)
	if err != nil {
		t.Fatal(err)
	}
	addr := n.Addrs.Registry.String() + ":443"
	ln, err := n.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := minireg.Serve(ln, cert)
	t.Cleanup(func() { srv.Close() })
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		return n.Registry.DialContext(ctx, network, addr)
	}
	if _, err := minireg.PushRandom(ctx, host+"/team/app:1", 1, 512, dial, ca.Pool()); err != nil {
		t.Fatal(err)
	}
	root, err := n.RootFor(n.Node)
	if err != nil {
		t.Fatal(err)
	}
	for rel, content := range map[string]string{
		"etc/hosts":                         "127.0.0.1 localhost\n" + n.Addrs.Registry.String() + " " + host + "\n",
		"etc/resolv.conf":                   "nameserver " + n.Addrs.DNS.String() + "\n",
		"etc/ssl/certs/ca-certificates.crt": string(ca.PEM),
	} {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cd, err := netlab.StartContainerd(ctx, n.Node, filepath.Join(n.Dir, "containerd"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cd.Stop)
	return runtime{socket: cd.Socket, log: cd.Log, host: host}
}

func TestPullAndImageStatus(t *testing.T) {
	rt := startRuntime(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	image := rt.host + "/team/app:1"

	if img, err := cri.ImageStatus(ctx, rt.socket, image); err != nil || img != nil {
		t.Fatalf("ImageStatus(%s) before pull = %+v, %v; want nil, nil", image, img, err)
	}
	ref, err := cri.Pull(ctx, rt.socket, image, nil)
	if err != nil {
		t.Fatalf("Pull(%s) = %v", image, err)
	}
	if !strings.HasPrefix(ref, "sha256:") {
		t.Errorf("Pull(%s) = %q, want an image ID sha256:...", image, ref)
	}
	img, err := cri.ImageStatus(ctx, rt.socket, image)
	if err != nil || img == nil {
		t.Fatalf("ImageStatus(%s) after pull = %+v, %v; want the image", image, img, err)
	}
	if img.ID != ref {
		t.Errorf("ImageStatus(%s).ID = %q, want %q", image, img.ID, ref)
	}
	if len(img.RepoTags) != 1 || img.RepoTags[0] != image {
		t.Errorf("ImageStatus(%s).RepoTags = %q, want [%s]", image, img.RepoTags, image)
	}
	if len(img.RepoDigests) != 1 || !strings.HasPrefix(img.RepoDigests[0], rt.host+"/team/app@sha256:") {
		t.Errorf("ImageStatus(%s).RepoDigests = %q, want one digest reference", image, img.RepoDigests)
	}
	// Credentials are handed over but this registry ignores them.
	if _, err := cri.Pull(ctx, rt.socket, image, &cri.AuthConfig{Username: "u", Password: "p"}); err != nil {
		t.Errorf("Pull(%s) with credentials = %v", image, err)
	}
}

func TestPullErrorKeepsRuntimeText(t *testing.T) {
	rt := startRuntime(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	image := rt.host + "/team/app:missing"
	_, err := cri.Pull(ctx, rt.socket, image, nil)
	var pe *cri.PullError
	if !errors.As(err, &pe) {
		t.Fatalf("Pull(%s) = %v, want a *cri.PullError", image, err)
	}
	if pe.Code != codes.NotFound {
		t.Errorf("Pull(%s).Code = %v, want NotFound", image, pe.Code)
	}
	wantPrefix := "rpc error: code = NotFound desc = failed to pull and unpack image \"" + image + "\""
	if !strings.HasPrefix(pe.Text, wantPrefix) {
		t.Errorf("Pull(%s).Text = %q, want prefix %q", image, pe.Text, wantPrefix)
	}
	if !strings.HasSuffix(pe.Text, image+": not found") {
		t.Errorf("Pull(%s).Text = %q, want suffix %q", image, pe.Text, image+": not found")
	}
	if got, want := pe.Event(), "Failed to pull image \""+image+"\": "+pe.Text; got != want {
		t.Errorf("Event() = %q, want %q", got, want)
	}
}
