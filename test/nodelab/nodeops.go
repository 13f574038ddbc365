package nodelab

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/pullpath/pullpath/test/netlab"
)

// SetResolvers rewrites the node's /etc/resolv.conf in place (the file its
// mount namespace binds over /etc/resolv.conf, so containerd, the kubelet
// and the pods it gives the node's resolver see the change) to name only
// the given nameservers.
func (nd *Node) SetResolvers(servers ...netip.Addr) error {
	var b strings.Builder
	for _, s := range servers {
		fmt.Fprintf(&b, "nameserver %s\n", s)
	}
	// os.WriteFile truncates the same inode: a rename would leave the bind
	// mount on the old file.
	return os.WriteFile(filepath.Join(nd.Root, "etc", "resolv.conf"), []byte(b.String()), 0o644)
}

// ImportImage writes img as a docker archive tagged ref and imports it into
// the node's containerd with `ctr -n k8s.io images import`, where the CRI
// plugin finds it (as a node image pre-loads its pause image). Nothing is
// pulled.
func (nd *Node) ImportImage(ctx context.Context, ref string, img v1.Image) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("parsing %s: %w", ref, err)
	}
	tar := filepath.Join(nd.Dir, "import-"+strings.NewReplacer("/", "_", ":", "_").Replace(ref)+".tar")
	if err := tarball.WriteToFile(tar, tag, img); err != nil {
		return fmt.Errorf("writing %s: %w", tar, err)
	}
	defer os.Remove(tar)
	socket := filepath.Join(nd.Dir, "containerd", "containerd.sock")
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := netlab.Run(ctx, "ctr", "--address", socket, "--namespace", "k8s.io", "images", "import", tar); err != nil {
		return fmt.Errorf("importing %s on %s: %w", ref, nd.Spec.Name, err)
	}
	return nil
}
