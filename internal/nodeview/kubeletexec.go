package nodeview

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"slices"
	"sort"
	"time"

	"github.com/pullpath/pullpath/internal/verdict"
)

// ProviderExecTimeout is the kubelet's catch-all deadline for one provider
// run (pkg/credentialprovider/plugin: context.WithTimeout(ctx, 1*time.Minute)).
const ProviderExecTimeout = time.Minute

// maxProviderOutput bounds what is kept of a provider's stdout and stderr.
const maxProviderOutput = 1 << 20

// credentialProviderRequest mirrors credentialprovider.kubelet.k8s.io/v1
// CredentialProviderRequest (see kubeletcred.go for why it is a mirror).
type credentialProviderRequest struct {
	APIVersion                string            `json:"apiVersion"`
	Kind                      string            `json:"kind"`
	Image                     string            `json:"image"`
	ServiceAccountToken       string            `json:"serviceAccountToken,omitempty"`
	ServiceAccountAnnotations map[string]string `json:"serviceAccountAnnotations,omitempty"`
}

// credentialProviderResponse mirrors CredentialProviderResponse.
type credentialProviderResponse struct {
	APIVersion    string                `json:"apiVersion"`
	Kind          string                `json:"kind"`
	CacheKeyType  string                `json:"cacheKeyType"`
	CacheDuration *Duration             `json:"cacheDuration,omitempty"`
	Auth          map[string]AuthConfig `json:"auth,omitempty"`
}

// ProviderResult is what one provider run gave for an image.
type ProviderResult struct {
	Provider string
	Image    string // the image as sent in the request
	// CacheKeyType and CacheDuration are how long the kubelet keeps the
	// answer (the response's duration, else the config's default).
	CacheKeyType  string
	CacheDuration time.Duration
	// Keys are the auth keys that match the image, in the order the
	// kubelet tries them; Creds the credentials under them.
	Keys  []string
	Creds []AuthConfig
	// AllKeys are every auth key returned, matching or not.
	AllKeys []string
	// Stderr is the provider's stderr, unredacted: the caller redacts it.
	Stderr  string
	Elapsed time.Duration
	// Cached is set when the answer came from a ProviderCache: the
	// provider did not run (Elapsed and Stderr are empty).
	Cached bool
	// token is the service-account token sent, for Secrets; auth the
	// answer's auth map, for MergeResults.
	token string
	auth  map[string]AuthConfig
}

// Secrets returns every credential value of the result (those under keys
// that do not match the image too), for the redactor.
func (r *ProviderResult) Secrets() []string {
	var out []string
	if r.token != "" {
		out = append(out, r.token)
	}
	for _, c := range r.Creds {
		out = append(out, c.Password)
	}
	keys := make([]string, 0, len(r.auth))
	for k := range r.auth {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if p := r.auth[k].Password; p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// ExecOptions tune RunProvider.
type ExecOptions struct {
	// Timeout is the deadline of one run. The default is the kubelet's,
	// ProviderExecTimeout.
	Timeout time.Duration
	// Environ is the kubelet's own environment the config's env is appended
	// to. The default is this process's.
	Environ []string
	// ServiceAccount is the pod's service account, for a provider with
	// tokenAttributes (KEP-4412); nil when the pod has none.
	ServiceAccount *ServiceAccount
}

// RunProvider runs provider p for image (a repository without tag or
// digest) the way the kubelet does:
//
//  1. the binary is <binDir>/<name>, read under root; with a root other
//     than "/" it runs chrooted there, so that the node paths in its args
//     and env (AKS's /etc/kubernetes/azure.json, say) and its libraries are
//     the node's, as for the kubelet;
//  2. a CredentialProviderRequest in the provider's apiVersion goes on
//     stdin; args from the config, the environment is the kubelet's with the
//     config's env appended;
//  3. a deadline of one minute (the kubelet's);
//  4. the response must have the same apiVersion and kind
//     CredentialProviderResponse; its auth keys are matched against image
//     with the kubelet's keyring rules.
//
// Its errors are *verdict.Error with causes config.credential-provider-binary,
// auth.provider-timeout, auth.provider-failed and auth.provider-no-credentials;
// the result (with the stderr) is returned with them when the provider ran.
// Nothing of a response's credentials is in an error.
func RunProvider(ctx context.Context, root, binDir string, p CredentialProvider, image string, o ExecOptions) (*ProviderResult, error) {
	if o.Timeout <= 0 {
		o.Timeout = ProviderExecTimeout
	}
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	res := &ProviderResult{Provider: p.Name, Image: image}
	if p.DefaultCacheDuration != nil {
		res.CacheDuration = p.DefaultCacheDuration.Duration
	}
	nodeBin := path.Join(binDir, p.Name)
	bin, err := inRoot(root, nodeBin)
	if err == nil {
		var fi fs.FileInfo
		if fi, err = os.Stat(bin); err == nil && (fi.IsDir() || fi.Mode().Perm()&0o111 == 0) {
			err = fmt.Errorf("%s is not executable (mode %s)", nodeBin, fi.Mode())
		}
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("plugin binary executable %s did not exist", nodeBin)
		}
		return nil, verdict.Errorf(verdict.CodeConfigCredentialProviderBinary, verdict.RoleNone, "", "kubelet credential provider %s: %v", p.Name, err)
	}
	token, annotations, err := providerServiceAccount(p, o.ServiceAccount)
	if err != nil {
		return nil, err
	}
	res.token = token
	req, _ := json.Marshal(credentialProviderRequest{APIVersion: p.APIVersion, Kind: "CredentialProviderRequest", Image: image,
		ServiceAccountToken: token, ServiceAccountAnnotations: annotations})

	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	var stdout, stderr limitedBuffer
	cmd := exec.CommandContext(ctx, bin, p.Args...)
	chrooted := path.Clean(root) != "/" && root != ""
	if chrooted {
		cmd.Path = nodeBin
		if err := chrootInto(cmd, root); err != nil {
			return nil, verdict.Errorf(verdict.CodeConfigCredentialProviderBinary, verdict.RoleNone, "", "kubelet credential provider %s: %v", p.Name, err)
		}
	}
	cmd.Stdin = bytes.NewReader(append(req, '\n'))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append([]string{}, o.Environ...)
	for _, e := range p.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	cmd.WaitDelay = time.Second
	start := time.Now()
	err = cmd.Run()
	res.Elapsed = time.Since(start)
	res.Stderr = stderr.String()
	if ctx.Err() != nil {
		return res, verdict.Errorf(verdict.CodeAuthProviderTimeout, verdict.RoleNone, "", "error execing credential provider plugin %s for image %s: %v (after %s)", p.Name, image, ctx.Err(), res.Elapsed.Round(time.Millisecond))
	}
	if err != nil {
		if chrooted && errors.Is(err, fs.ErrPermission) && !cmdStarted(cmd) {
			return res, verdict.Errorf(verdict.CodeConfigCredentialProviderBinary, verdict.RoleNone, "", "kubelet credential provider %s: running it inside the node root %s needs CAP_SYS_CHROOT: %v", p.Name, root, err)
		}
		if errors.Is(err, fs.ErrPermission) || errors.Is(err, exec.ErrNotFound) {
			return res, verdict.Errorf(verdict.CodeConfigCredentialProviderBinary, verdict.RoleNone, "", "error execing credential provider plugin %s for image %s: %v", p.Name, image, err)
		}
		return res, verdict.Errorf(verdict.CodeAuthProviderFailed, verdict.RoleNone, "", "error execing credential provider plugin %s for image %s: %v", p.Name, image, err)
	}
	var resp credentialProviderResponse
	if err := json.Unmarshal(stdout.Bytes(), &resp); err != nil {
		// The decoder's message may quote the output: name only the offset.
		return res, verdict.Errorf(verdict.CodeAuthProviderFailed, verdict.RoleNone, "", "kubelet credential provider %s: its response is not a CredentialProviderResponse (%d bytes of JSON that do not decode)", p.Name, stdout.Len())
	}
	if resp.APIVersion != p.APIVersion {
		return res, verdict.Errorf(verdict.CodeAuthProviderFailed, verdict.RoleNone, "", "apiVersion from credential plugin response did not match expected apiVersion:%s, actual apiVersion:%s", p.APIVersion, resp.APIVersion)
	}
	if resp.Kind != "CredentialProviderResponse" {
		return res, verdict.Errorf(verdict.CodeAuthProviderFailed, verdict.RoleNone, "", "kubelet credential provider %s: response kind %q, want CredentialProviderResponse", p.Name, resp.Kind)
	}
	if err := checkEchoedToken(p, token, resp.Auth); err != nil {
		return res, err
	}
	res.CacheKeyType = resp.CacheKeyType
	if resp.CacheDuration != nil {
		res.CacheDuration = resp.CacheDuration.Duration
	}
	for k := range resp.Auth {
		res.AllKeys = append(res.AllKeys, k)
	}
	res.auth = resp.Auth
	res.Keys, res.Creds = LookupAuth(resp.Auth, image)
	if len(res.Creds) == 0 {
		return res, verdict.Errorf(verdict.CodeAuthProviderNoCredentials, verdict.RoleNone, "", "kubelet credential provider %s returned no credentials for %s (auth keys: %v)", p.Name, image, res.AllKeys)
	}
	return res, nil
}

func cmdStarted(cmd *exec.Cmd) bool { return cmd.Process != nil }

// limitedBuffer keeps the first maxProviderOutput bytes written to it.
type limitedBuffer struct{ bytes.Buffer }

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := maxProviderOutput - b.Len(); room > 0 {
		if len(p) > room {
			b.Buffer.Write(p[:room])
		} else {
			b.Buffer.Write(p)
		}
	}
	return len(p), nil
}

var _ io.Writer = (*limitedBuffer)(nil)
