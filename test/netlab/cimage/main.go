//go:build containers_image_openpgp

// Command cimage pulls one image with containers/image (go.podman.io/image/v5)
// the way CRI-O's PullImage does, for the CRI-O rows of the namespace tier
// (TestCRIORows), where CRI-O itself cannot run. It is built with the tags
// containers_image_openpgp (no gpgme, CGO off),
// exclude_graphdriver_btrfs and exclude_graphdriver_devicemapper.
//
// What it takes from CRI-O (server/image_pull.go, pkg/config, server/server.go):
//
//   - the SystemContext: AuthFilePath = crio.image.global_auth_file,
//     SignaturePolicyPath = crio.image.signature_policy (server.go), the
//     registries.conf paths, ShortNameMode enforcing (pkg/config
//     SetSystemContext: CRI-O's short_name_mode defaults to enforcing);
//   - contextForNamespace: with the pod's namespace,
//     <signature_policy_dir>/<namespace>.json when it exists replaces the
//     policy; a stat error other than "not exist" fails the pull;
//   - prepareTempAuthFile: with the pod's namespace,
//     <namespaced_auth_dir>/<namespace>-<sha256 of the image's
//     normalised name>.json (crio-credential-provider pkg/auth FilePath),
//     when it exists, is moved to <namespaced_auth_dir>/in-use/ under a
//     unique name, becomes AuthFilePath (instead of global_auth_file) and
//     is removed after the pull;
//   - DockerLogMirrorChoice = true, and the CRI request's credential as
//     DockerAuthConfig when it has a user name (it beats every file);
//   - the candidates of internal/storage CandidatesForPotentiallyShortImageName
//     (pkg/shortnames Resolve, no TTY), pulled in order until one works;
//   - internal/storage pullImageImplementation: signature.DefaultPolicy of
//     the source context, copy.Image from docker://candidate.
//
// What differs: the destination is a dir: directory, not containers-storage
// (the pull's network path and the policy check are the same; what is
// stored is not), no separate pull cgroup, no progress timeout, no OCI
// artifact fallback (CRI-O tries one only after a non-network failure) and
// no decryption keys.
//
// It prints containers/image's log (debug level, "Trying to access" once per
// source) on stderr, and on stdout "pulled NAME@DIGEST" or the error. The
// CRI request's password comes from the environment (CIMAGE_PASSWORD), never
// the command line. Exit status 0 when the pull works, 1 when it fails, 2
// for a usage error.
package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"go.podman.io/image/v5/copy"
	"go.podman.io/image/v5/directory"
	"go.podman.io/image/v5/docker"
	"go.podman.io/image/v5/docker/reference"
	"go.podman.io/image/v5/manifest"
	"go.podman.io/image/v5/pkg/shortnames"
	"go.podman.io/image/v5/signature"
	"go.podman.io/image/v5/types"
)

type options struct {
	image, namespace                    string
	registriesConf, registriesConfD     string
	globalAuthFile, namespacedAuthDir   string
	signaturePolicy, signaturePolicyDir string
	username, dest, blobInfoCacheDir    string
	timeout                             time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.image, "image", "", "the image as the kubelet passes it")
	flag.StringVar(&o.namespace, "namespace", "", "the pod's namespace (the sandbox config's metadata); empty: none, as a pull without a sandbox")
	flag.StringVar(&o.registriesConf, "registries-conf", "/etc/containers/registries.conf", "registries.conf")
	flag.StringVar(&o.registriesConfD, "registries-conf-d", "/etc/containers/registries.conf.d", "registries.conf.d")
	flag.StringVar(&o.globalAuthFile, "global-auth-file", "", "crio.image.global_auth_file")
	flag.StringVar(&o.namespacedAuthDir, "namespaced-auth-dir", "/etc/crio/auth", "crio.image.namespaced_auth_dir")
	flag.StringVar(&o.signaturePolicy, "signature-policy", "", "crio.image.signature_policy")
	flag.StringVar(&o.signaturePolicyDir, "signature-policy-dir", "/etc/crio/policies", "crio.image.signature_policy_dir")
	flag.StringVar(&o.username, "username", "", "the CRI request's user name (password in CIMAGE_PASSWORD)")
	flag.StringVar(&o.dest, "dest", "", "directory the image is copied to (dir: transport), one subdirectory per candidate")
	flag.StringVar(&o.blobInfoCacheDir, "blob-info-cache-dir", "", "containers/image's blob info cache directory (default the library's, /var/lib/containers/cache for root)")
	flag.DurationVar(&o.timeout, "timeout", 2*time.Minute, "deadline of the whole pull")
	flag.Parse()
	if o.image == "" || o.dest == "" {
		fmt.Fprintln(os.Stderr, "cimage: -image and -dest are required")
		os.Exit(2)
	}
	logrus.SetLevel(logrus.DebugLevel)
	logrus.SetOutput(os.Stderr)
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	ref, err := pull(ctx, o)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("pulled", ref)
}

// pull is CRI-O's pullImage (server/image_pull.go) with the options' files.
func pull(ctx context.Context, o options) (string, error) {
	enforcing := types.ShortNameModeEnforcing
	server := types.SystemContext{
		AuthFilePath:                o.globalAuthFile,
		SignaturePolicyPath:         o.signaturePolicy,
		SystemRegistriesConfPath:    o.registriesConf,
		SystemRegistriesConfDirPath: o.registriesConfD,
		ShortNameMode:               &enforcing,
		DockerRegistryUserAgent:     "cri-o (pullpath cimage)",
	}
	source, err := contextForNamespace(server, o.signaturePolicyDir, o.namespace)
	if err != nil {
		return "", fmt.Errorf("get context for namespace: %w", err)
	}
	if o.namespace != "" {
		cleanup, err := prepareTempAuthFile(&source, o.namespacedAuthDir, o.image, o.namespace)
		if err != nil {
			return "", fmt.Errorf("prepare temp auth file: %w", err)
		}
		defer cleanup()
	}
	source.DockerLogMirrorChoice = true
	if o.username != "" {
		source.DockerAuthConfig = &types.DockerAuthConfig{Username: o.username, Password: os.Getenv("CIMAGE_PASSWORD")}
	}
	cands, err := candidates(&server, o.image)
	if err != nil {
		return "", err
	}
	lastErr := errors.New("internal error: pullImage failed but reported no error reason")
	for i, c := range cands {
		ref, err := pullCandidate(ctx, &source, &types.SystemContext{BlobInfoCacheDir: o.blobInfoCacheDir}, c, filepath.Join(o.dest, fmt.Sprint(i)))
		if err == nil {
			return ref, nil
		}
		lastErr = err
	}
	return "", lastErr
}

// contextForNamespace is CRI-O's: the namespace's policy file when it
// exists.
func contextForNamespace(sys types.SystemContext, policyDir, namespace string) (types.SystemContext, error) {
	if namespace != "" {
		p := filepath.Join(policyDir, namespace+".json")
		if _, err := os.Stat(p); err == nil {
			sys.SignaturePolicyPath = p
		} else if !os.IsNotExist(err) {
			return sys, fmt.Errorf("read policy path %s: %w", p, err)
		}
	}
	return sys, nil
}

// authFilePath is crio-credential-provider's pkg/auth FilePath.
func authFilePath(dir, namespace, name string) (string, error) {
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("provided %q directory is not an absolute path", dir)
	}
	return filepath.Join(dir, fmt.Sprintf("%s-%x.json", namespace, sha256.Sum256([]byte(name)))), nil
}

// prepareTempAuthFile is CRI-O's: the namespaced file, when there is one,
// is moved to in-use/ and becomes the pull's only auth file.
func prepareTempAuthFile(sys *types.SystemContext, dir, image, namespace string) (func(), error) {
	cleanup := func() {}
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return cleanup, fmt.Errorf("parse image name: %w", err)
	}
	p, err := authFilePath(dir, namespace, named.Name())
	if err != nil {
		return cleanup, fmt.Errorf("get auth file path: %w", err)
	}
	if _, err := os.Stat(p); err != nil {
		logrus.Debugf("Looking for namespaced auth JSON file in: %s: none", p)
		return cleanup, nil
	}
	inUse := filepath.Join(dir, "in-use")
	if err := os.MkdirAll(inUse, 0o700); err != nil {
		_ = os.RemoveAll(p)
		return cleanup, fmt.Errorf("unable to ensure in-use auth dir: %w", err)
	}
	ext := filepath.Ext(p)
	tmp := filepath.Join(inUse, fmt.Sprintf("%s-%d%s", strings.TrimSuffix(filepath.Base(p), ext), time.Now().UnixNano(), ext))
	if err := os.Rename(p, tmp); err != nil {
		_ = os.RemoveAll(p)
		return cleanup, fmt.Errorf("unable to move auth file path to temporary location: %w", err)
	}
	logrus.Infof("Using auth file for namespace %s: %s", namespace, p)
	sys.AuthFilePath = tmp
	return func() { _ = os.RemoveAll(tmp) }, nil
}

// candidates is internal/storage CandidatesForPotentiallyShortImageName.
func candidates(sys *types.SystemContext, image string) ([]reference.Named, error) {
	sc := *sys
	res, err := shortnames.Resolve(&sc, image)
	if err != nil {
		if strings.Contains(err.Error(), "short-name resolution enforced but cannot prompt without a TTY") {
			return nil, fmt.Errorf("short name mode is enforcing, but image name %s returns ambiguous list", image)
		}
		return nil, err
	}
	var out []reference.Named
	for _, c := range res.PullCandidates {
		out = append(out, c.Value)
	}
	return out, nil
}

// pullCandidate is internal/storage pullImageImplementation with a dir:
// destination.
func pullCandidate(ctx context.Context, source, destCtx *types.SystemContext, name reference.Named, dest string) (string, error) {
	srcRef, err := docker.NewReference(name)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return "", err
	}
	destRef, err := directory.NewReference(dest)
	if err != nil {
		return "", err
	}
	policy, err := signature.DefaultPolicy(source)
	if err != nil {
		return "", err
	}
	pc, err := signature.NewPolicyContext(policy)
	if err != nil {
		return "", err
	}
	defer func() { _ = pc.Destroy() }()
	src := *source
	data, err := copy.Image(ctx, pc, destRef, srcRef, &copy.Options{SourceCtx: &src, DestinationCtx: destCtx})
	if err != nil {
		return "", fmt.Errorf("unable to pull image: %w", err)
	}
	d, err := manifest.Digest(data)
	if err != nil {
		return "", fmt.Errorf("digesting image: %w", err)
	}
	return reference.TrimNamed(name).String() + "@" + d.String(), nil
}
