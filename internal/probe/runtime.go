package probe

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/internal/registry"
)

// DefaultCRISocket is containerd's socket, relative to the node root.
const DefaultCRISocket = "run/containerd/containerd.sock"

// RuntimeClient is the node runtime's CRI image service, as RuntimePullFor
// uses it. internal/probe/criruntime implements it over gRPC; the full
// pullpath links it (a blank import), the slim node binary does not, so
// that it links no gRPC and no CRI API (internal/depcheck checks both).
type RuntimeClient interface {
	// ImageStatus returns the ID of the image the runtime holds under
	// image, or "" when it holds none.
	ImageStatus(ctx context.Context, image string) (id string, err error)
	// Pull asks the runtime to pull image with creds (nil: anonymous), as
	// the kubelet's PullImage does. A pull the runtime refused or failed
	// is a *RuntimeError.
	Pull(ctx context.Context, image string, creds *registry.Credentials) error
	Close() error
}

// RuntimeVersioner is a RuntimeClient that also answers the CRI Version
// call ("containerd://2.2.9"); criruntime's does.
type RuntimeVersioner interface {
	Version(ctx context.Context) (string, error)
}

// criSockets are the runtimes' CRI sockets, relative to the node root, in
// the order RuntimeVersionFor tries them: containerd's, k3s's and RKE2's
// embedded containerd's, CRI-O's.
var criSockets = []string{DefaultCRISocket, "run/k3s/containerd/containerd.sock", "run/crio/crio.sock"}

// RuntimeVersionFor returns a probe.Options.CRIVersion that asks the
// running runtime for its version through dial: on socket when given,
// else on the first of the known sockets under the root that exists.
func RuntimeVersionFor(dial RuntimeDialer, socket string) func(ctx context.Context, root string) (string, string, error) {
	return func(ctx context.Context, root string) (string, string, error) {
		if root == "" {
			root = "/"
		}
		cands := []string{socket}
		if socket == "" {
			cands = nil
			for _, s := range criSockets {
				cands = append(cands, filepath.Join(root, s))
			}
		}
		var lastErr error = fmt.Errorf("no CRI socket under %s", root)
		for _, s := range cands {
			if _, err := os.Stat(strings.TrimPrefix(s, "unix://")); err != nil {
				continue
			}
			c, err := dial(ctx, s)
			if err != nil {
				lastErr = err
				continue
			}
			v, ok := c.(RuntimeVersioner)
			if !ok {
				c.Close()
				return "", "", fmt.Errorf("the CRI client has no Version call")
			}
			ver, err := v.Version(ctx)
			c.Close()
			if err != nil {
				lastErr = err
				continue
			}
			return s, ver, nil
		}
		return "", "", lastErr
	}
}

// RuntimeError is a pull the runtime refused or failed.
type RuntimeError struct {
	// Text is the runtime's error verbatim ("rpc error: code = ... desc = ...").
	Text string
	// Event is the message of the kubelet's "Failed" event for it.
	Event string
}

func (e *RuntimeError) Error() string { return e.Text }

// RuntimeDialer connects to the CRI socket (a path or a unix:// URL) and
// checks that an image service answers there.
type RuntimeDialer func(ctx context.Context, socket string) (RuntimeClient, error)

// RuntimeOptions configure RuntimePull.
type RuntimeOptions struct {
	// Dialer connects to the runtime; nil in a binary that links no CRI
	// client, and then the runtime is not asked.
	Dialer  RuntimeDialer
	Socket  string // CRI socket; default <root>/run/containerd/containerd.sock
	Root    string
	Creds   *registry.Credentials
	Timeout time.Duration // the whole runtime pull; default 10m
}

// RuntimePullFor asks the node's runtime itself to pull image through CRI,
// exactly as the kubelet does, and sets rep.Runtime: the runtime's result,
// its error explained with the message classifier, and whether it agrees
// with the probe's verdict. An image the runtime already holds is reported
// as such: its pull cannot be a fresh one (a cached image lies: the scale-up is the trigger), and pullpath never deletes
// the user's images to make it so. The pull adds the image to the node's
// image store; that is why it is opt-in.
func RuntimePullFor(ctx context.Context, rep *Report, image string, o RuntimeOptions) {
	defer redactReport(rep, knownFor([]*registry.Credentials{o.Creds}))
	if o.Socket == "" {
		root := o.Root
		if root == "" {
			root = "/"
		}
		o.Socket = filepath.Join(root, DefaultCRISocket)
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	rp := &RuntimePull{Socket: o.Socket}
	rep.Runtime = rp
	start := time.Now()
	defer func() { rp.Millis = time.Since(start).Milliseconds() }()

	if o.Dialer == nil {
		rp.Error = "this binary links no CRI client"
		rp.Note = "the runtime could not be asked: the slim node binary has no --runtime-pull; run the full pullpath on the node"
		return
	}
	c, err := o.Dialer(ctx, o.Socket)
	if err != nil {
		rp.Error = err.Error()
		rp.Note = "the runtime could not be asked: no runtime pull to compare with (is --cri-socket the node's containerd socket, and is it mounted?)"
		return
	}
	defer c.Close()

	if id, err := c.ImageStatus(ctx, image); err == nil && id != "" {
		rp.Cached = true
		rp.Note = fmt.Sprintf("the runtime already holds this image (%s): its pull re-resolves the manifest but downloads no layer it has, so it is not a fresh pull (a cached image lies). pullpath never deletes images; for a fresh pull use a node that does not have it", shortID(id))
	}

	pctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	err = c.Pull(pctx, image, o.Creds)
	if err == nil {
		rp.OK = true
		rp.Agrees = rep.Verdict.OK
		if !rp.Agrees {
			rp.Note = join(rp.Note, fmt.Sprintf("DISAGREE: the runtime pulled the image but the probe says %s. Either the probe models something the runtime does not do here (or the image was cached), or this is a pullpath bug: please report it with `-o json`", rep.Verdict.Cause))
		}
		return
	}
	text := err.Error()
	event := text
	if re, ok := err.(*RuntimeError); ok {
		text, event = re.Text, re.Event
	}
	rp.Error = text
	res := explain.Classify(event)
	v := res.Verdict
	rp.Verdict = &v
	rp.Agrees = !rep.Verdict.OK && v.Layer == rep.Verdict.Layer
	if !rp.Agrees {
		probeSays := "ok"
		if !rep.Verdict.OK {
			probeSays = string(rep.Verdict.Layer) + " (" + rep.Verdict.Cause + ")"
		}
		rp.Note = join(rp.Note, fmt.Sprintf("DISAGREE: the runtime fails at %s (%s) but the probe says %s. The runtime's configuration differs from what the probe read (another hosts dir, proxy environment, credentials), or this is a pullpath bug: please report it with `-o json`", v.Layer, v.Cause, probeSays))
	}
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func shortID(id string) string {
	if len(id) > 19 {
		return id[:19]
	}
	return id
}
