package lab

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Push pushes img to the lab registry as repo:tag with the lab's own
// setup identity, past every fault, and returns the pushed reference. Tiers
// that need a runnable image in the lab (test/nodelab's app) use it;
// the lab's own images are random layers.
func (l *Lab) Push(ctx context.Context, repo, tag string, img v1.Image) (string, error) {
	r, err := name.NewTag(l.Registry + "/" + repo + ":" + tag)
	if err != nil {
		return "", err
	}
	err = remote.Write(r, img, remote.WithContext(ctx),
		remote.WithTransport(&setupTransport{inner: l.transport, secret: l.setupSecret}),
		remote.WithAuth(&authn.Basic{Username: "pusher", Password: l.pusherPass}))
	if err != nil {
		return "", fmt.Errorf("pushing %s: %w", r, err)
	}
	return r.String(), nil
}
