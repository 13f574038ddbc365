// Package criruntime gives the probe the node runtime's CRI image service
// (probe --runtime-pull): the full pullpath passes Dial to cli.RunWith as
// its Features.RuntimeDialer. The slim node binary does not import it, and
// so links no gRPC and no CRI API, which are a fifth of its start-up time.
package criruntime

import (
	"context"
	"errors"

	"github.com/pullpath/pullpath/internal/cri"
	"github.com/pullpath/pullpath/internal/probe"
	"github.com/pullpath/pullpath/internal/registry"
)

// Dial connects to the CRI socket; see cri.Dial.
func Dial(ctx context.Context, socket string) (probe.RuntimeClient, error) {
	c, err := cri.Dial(ctx, socket)
	if err != nil {
		return nil, err
	}
	return client{c}, nil
}

type client struct{ c *cri.Client }

func (c client) ImageStatus(ctx context.Context, image string) (string, error) {
	img, err := c.c.ImageStatus(ctx, image)
	if err != nil || img == nil {
		return "", err
	}
	return img.ID, nil
}

// Pull hands creds to the runtime as the kubelet fills AuthConfig: a user
// name and password, or, with no user name, an identity token.
func (c client) Pull(ctx context.Context, image string, creds *registry.Credentials) error {
	var auth *cri.AuthConfig
	if !creds.Anonymous() {
		auth = &cri.AuthConfig{Username: creds.Username, Password: creds.Password}
		if creds.Username == "" {
			auth = &cri.AuthConfig{IdentityToken: creds.Password}
		}
	}
	_, err := c.c.Pull(ctx, image, auth)
	var pe *cri.PullError
	if errors.As(err, &pe) {
		return &probe.RuntimeError{Text: pe.Text, Event: pe.Event()}
	}
	return err
}

func (c client) Close() error { return c.c.Close() }

// Version is the runtime's CRI Version answer ("containerd://2.2.9").
func (c client) Version(ctx context.Context) (string, error) { return c.c.Version(ctx) }
