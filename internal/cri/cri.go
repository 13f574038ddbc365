package cri

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// DefaultSocket is containerd's default CRI socket on a node.
const DefaultSocket = "/run/containerd/containerd.sock"

// maxMsgSize is the kubelet's limit for CRI messages (16 MiB).
const maxMsgSize = 16 << 20

// AuthConfig holds the credentials a pull hands to the runtime, the way the
// kubelet fills runtime.v1.AuthConfig from an imagePullSecret. Its String
// method never shows the secrets.
type AuthConfig struct {
	Username string
	Password string
	// IdentityToken is an OAuth2 refresh token (docker config "identitytoken").
	IdentityToken string
	// RegistryToken is a bearer token sent as is (docker config "registrytoken").
	RegistryToken string
	// ServerAddress is runtime.v1.AuthConfig.server_address. The kubelet
	// never sets it (internal/keychain); containerd then gives the
	// credential to every host of the pull.
	ServerAddress string
}

// String describes a without its secrets.
func (a *AuthConfig) String() string {
	if a == nil {
		return "anonymous"
	}
	var parts []string
	if a.Username != "" {
		parts = append(parts, "username "+a.Username)
	}
	if a.Password != "" {
		parts = append(parts, "password ****")
	}
	if a.IdentityToken != "" {
		parts = append(parts, "identity token ****")
	}
	if a.RegistryToken != "" {
		parts = append(parts, "registry token ****")
	}
	if len(parts) == 0 {
		return "anonymous"
	}
	return strings.Join(parts, ", ")
}

func (a *AuthConfig) proto() *runtimeapi.AuthConfig {
	if a == nil {
		return nil
	}
	return &runtimeapi.AuthConfig{
		Username:      a.Username,
		Password:      a.Password,
		IdentityToken: a.IdentityToken,
		RegistryToken: a.RegistryToken,
		ServerAddress: a.ServerAddress,
	}
}

// Image is what the runtime reports about an image it holds.
type Image struct {
	// ID is the image ID (the config digest for containerd).
	ID          string
	RepoTags    []string
	RepoDigests []string
	// Size is the size of the image in bytes as the runtime counts it.
	Size uint64
	// Pinned reports an image the runtime never garbage-collects.
	Pinned bool
}

// PullError is a pull the runtime refused or failed. Text is the error
// exactly as the CRI call returned it ("rpc error: code = ... desc = ..."),
// which is the text the kubelet shows after `Failed to pull image "<ref>": `.
type PullError struct {
	Image string
	// Code is the gRPC status code (Unknown for most network and auth
	// failures, NotFound for a missing tag or platform).
	Code codes.Code
	// Text is the runtime's error, verbatim.
	Text string
	Err  error
}

func (e *PullError) Error() string {
	return fmt.Sprintf("pulling image %q through CRI: %s", e.Image, e.Text)
}

// Unwrap returns the gRPC error.
func (e *PullError) Unwrap() error { return e.Err }

// Event is the message of the kubelet's "Failed" event for this error.
func (e *PullError) Event() string {
	return fmt.Sprintf("Failed to pull image %q: %s", e.Image, e.Text)
}

// Option configures a Client.
type Option func(*options)

type options struct {
	dialTimeout time.Duration
}

// WithDialTimeout bounds how long Dial waits for the runtime's socket to
// accept the connection. The default is 5 seconds.
func WithDialTimeout(d time.Duration) Option {
	return func(o *options) { o.dialTimeout = d }
}

// Client talks to a runtime's CRI image service over its unix socket.
type Client struct {
	conn   *grpc.ClientConn
	images runtimeapi.ImageServiceClient
	socket string
}

// Dial connects to the CRI socket (a path, or a unix:// URL) and checks
// that a CRI v1 image service answers there.
func Dial(ctx context.Context, socket string, opts ...Option) (*Client, error) {
	o := options{dialTimeout: 5 * time.Second}
	for _, opt := range opts {
		opt(&o)
	}
	path := strings.TrimPrefix(socket, "unix://")
	if path == "" {
		return nil, errors.New("dialing CRI: empty socket path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("dialing CRI socket %s: %w", socket, err)
	}
	if err := checkSocket(abs, o.dialTimeout); err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient("unix://"+abs,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMsgSize), grpc.MaxCallSendMsgSize(maxMsgSize)),
	)
	if err != nil {
		return nil, fmt.Errorf("dialing CRI socket %s: %w", abs, err)
	}
	c := &Client{conn: conn, images: runtimeapi.NewImageServiceClient(conn), socket: abs}
	// A cheap call proves the socket is a CRI v1 image service (the kubelet
	// does the same with its version handshake).
	vctx, cancel := context.WithTimeout(ctx, o.dialTimeout)
	defer cancel()
	if _, err := c.images.ImageFsInfo(vctx, &runtimeapi.ImageFsInfoRequest{}, grpc.WaitForReady(true)); err != nil {
		conn.Close()
		return nil, fmt.Errorf("asking CRI image service at %s: %w", abs, err)
	}
	return c, nil
}

// Version asks the runtime's CRI runtime service for its name and version
// (the kubelet's handshake, which it reports as the node's
// containerRuntimeVersion): "containerd://1.7.27". Read-only.
func (c *Client) Version(ctx context.Context) (string, error) {
	r, err := runtimeapi.NewRuntimeServiceClient(c.conn).Version(ctx, &runtimeapi.VersionRequest{Version: "v1"})
	if err != nil {
		return "", fmt.Errorf("asking CRI runtime service at %s for its version: %w", c.socket, err)
	}
	return r.RuntimeName + "://" + r.RuntimeVersion, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Socket is the absolute path of the socket c talks to.
func (c *Client) Socket() string { return c.socket }

// Pull asks the runtime to pull image with auth (nil for an anonymous pull),
// as the kubelet's PullImage does, and returns the image reference the
// runtime reports (the image ID for containerd). A refusal by the runtime is
// a *PullError carrying the runtime's text verbatim; ctx bounds the call.
func (c *Client) Pull(ctx context.Context, image string, auth *AuthConfig) (string, error) {
	resp, err := c.images.PullImage(ctx, &runtimeapi.PullImageRequest{
		Image: &runtimeapi.ImageSpec{Image: image},
		Auth:  auth.proto(),
	})
	if err != nil {
		return "", newPullError(image, err)
	}
	return resp.GetImageRef(), nil
}

func newPullError(image string, err error) *PullError {
	code := codes.Unknown
	if s, ok := status.FromError(err); ok {
		code = s.Code()
	}
	return &PullError{Image: image, Code: code, Text: err.Error(), Err: err}
}

// ImageStatus reports what the runtime holds under image (a reference or an
// image ID); it returns nil and no error when the runtime does not have it.
func (c *Client) ImageStatus(ctx context.Context, image string) (*Image, error) {
	resp, err := c.images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: image}})
	if err != nil {
		return nil, fmt.Errorf("asking CRI image status of %s: %w", image, err)
	}
	img := resp.GetImage()
	if img == nil {
		return nil, nil
	}
	return &Image{
		ID:          img.GetId(),
		RepoTags:    img.GetRepoTags(),
		RepoDigests: img.GetRepoDigests(),
		Size:        img.GetSize(),
		Pinned:      img.GetPinned(),
	}, nil
}

// Remove asks the runtime to remove image (RemoveImage), so that the next
// pull of it starts afresh.
func (c *Client) Remove(ctx context.Context, image string) error {
	if _, err := c.images.RemoveImage(ctx, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: image}}); err != nil {
		return fmt.Errorf("asking CRI to remove %s: %w", image, err)
	}
	return nil
}

// Pull dials socket, pulls image with auth and closes the connection. See
// Client.Pull.
func Pull(ctx context.Context, socket, image string, auth *AuthConfig) (imageRef string, err error) {
	c, err := Dial(ctx, socket)
	if err != nil {
		return "", err
	}
	defer c.Close()
	return c.Pull(ctx, image, auth)
}

// ImageStatus dials socket and reports what the runtime holds under image.
// See Client.ImageStatus.
func ImageStatus(ctx context.Context, socket, image string) (*Image, error) {
	c, err := Dial(ctx, socket)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.ImageStatus(ctx, image)
}
