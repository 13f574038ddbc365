package keychain

import (
	"fmt"
	"net/url"
	"strings"
)

// Host is one host of a runtime's plan, in the order the runtime tries
// them: the small interface the plan of any runtime (containerd's
// hosts.toml, CRI-O's registries.conf mirrors) plugs into.
type Host interface {
	// HostPort is the host as the runtime contacts it (host or host:port).
	HostPort() string
	// IsMirror reports whether the host stands in for the image's
	// registry (a mirror), rather than being the registry itself.
	IsMirror() bool
}

// PlanHost is a plain Host.
type PlanHost struct {
	Host   string
	Mirror bool
}

// HostPort implements Host.
func (h PlanHost) HostPort() string { return h.Host }

// IsMirror implements Host.
func (h PlanHost) IsMirror() bool { return h.Mirror }

// Runtime is a runtime's rule for which host receives a CRI credential.
type Runtime string

const (
	// Containerd16 is containerd 1.x's CRI plugin (1.6, 1.7): the CRI
	// plugin's own pull (pkg/cri/server/image_pull.go).
	Containerd16 Runtime = "containerd-1.6"
	// Containerd2Local is containerd 2.x's CRI plugin pulling itself
	// (2.0, or 2.1+ with a setting that forces the local pull:
	// use_local_image_pull, registry.configs, ...;
	// internal/cri/config CheckLocalImagePullConfigs).
	Containerd2Local Runtime = "containerd-2-local"
	// Containerd2Transfer is containerd 2.1+'s CRI pull through the
	// transfer service (the default when nothing forces the local pull).
	Containerd2Transfer Runtime = "containerd-2-transfer"
	// ContainersImage is containers/image (CRI-O, podman, skopeo).
	ContainersImage Runtime = "containers-image"
)

// Containerd returns the Runtime of containerd major.minor pulling on
// pullPath ("transfer" or "local", as internal/runtimecfg decides it;
// before 2.1 only the local pull exists).
func Containerd(major, minor int, pullPath string) Runtime {
	switch {
	case major < 2:
		return Containerd16
	case pullPath == "transfer" && (major > 2 || minor >= 1):
		return Containerd2Transfer
	default:
		return Containerd2Local
	}
}

// IsContainerd reports whether rt is one of containerd's rules.
func (rt Runtime) IsContainerd() bool {
	return rt == Containerd16 || rt == Containerd2Local || rt == Containerd2Transfer
}

// Routed is the credential one host of the plan receives for one pull.
type Routed struct {
	Host   string `json:"host"`
	Mirror bool   `json:"mirror"`
	// Credential names what is presented (its source and key), nil when
	// the host is asked anonymously.
	Credential *Credential `json:"credential,omitempty"`
	// Why says why, with the rule's source.
	Why string `json:"why"`
	// OnRejected is what the runtime presents this host next if it answers
	// 401 to Credential. Only containerd has a second attempt, and only
	// where Credential is a hosts.toml Authorization header: its
	// authorizer then answers the challenge with the pull's own
	// credential (see containerdRoute).
	OnRejected *Retry `json:"on_rejected,omitempty"`
}

// Retry is a host's second attempt within one pull.
type Retry struct {
	// Credential is what is presented, nil when the runtime has none.
	Credential *Credential `json:"credential,omitempty"`
	// Why says why, with the rule's source, and what follows when the
	// host refuses this too.
	Why string `json:"why"`
}

// Attempts are the credentials the host is presented within one pull, in
// order: Credential, then OnRejected's when the host refuses the first
// (nil: anonymous). A host that accepts an attempt sees none after it.
func (r Routed) Attempts() []*Credential {
	out := []*Credential{r.Credential}
	if r.OnRejected != nil && r.OnRejected.Credential != nil {
		out = append(out, r.OnRejected.Credential)
	}
	return out
}

// Presented is the credential's name, or "anonymous".
func (r Routed) Presented() string {
	if r.Credential == nil || r.Credential.Anonymous() {
		return "anonymous"
	}
	return r.Credential.Name()
}

// Fallbacks are the runtime's own credentials, used when the CRI request
// carries none (containerd) or for a host the request's credential does
// not reach (containers/image).
type Fallbacks struct {
	// ConfigAuth is containerd's config.toml
	// plugins."io.containerd.grpc.v1.cri".registry.configs."<host>".auth
	// (k3s writes mirror credentials there), by host.
	ConfigAuth map[string]Credential
	// AuthFile is containers/image's auth file for the pull: CRI-O's
	// namespaced_auth_dir file when it exists, else global_auth_file
	// (server/image_pull.go), as a Keyring-free map of its keys.
	AuthFile     map[string]Entry
	AuthFileName string
	// Headers are containerd's hosts.toml [host."…".header] credentials
	// (an Authorization header), by host: see HeaderCredential.
	Headers map[string]Credential
}

// Route returns, for each host of the plan, the credential the runtime
// presents when the kubelet sends cred (nil: no AuthConfig) for an image of
// registry domain and repository repo.
func Route(rt Runtime, domain, repo string, hosts []Host, cred *Credential, fb Fallbacks) []Routed {
	out := make([]Routed, 0, len(hosts))
	for _, h := range hosts {
		r := Routed{Host: h.HostPort(), Mirror: h.IsMirror()}
		switch rt {
		case Containerd16, Containerd2Local, Containerd2Transfer:
			r.Credential, r.Why, r.OnRejected = containerdRoute(rt, h.HostPort(), cred, fb)
		case ContainersImage:
			r.Credential, r.Why = containersImage(h, domain, repo, cred, fb)
		default:
			r.Why = fmt.Sprintf("unknown runtime %q: assumed anonymous", rt)
		}
		out = append(out, r)
	}
	return out
}

// containerdRoute is containerd's rule, the same on 1.6 and on both of
// 2.x's pull paths:
//
//   - 1.6: pkg/cri/server/image_pull.go PullImage builds one credentials
//     callback for the pull (the request's AuthConfig, else
//     registry.configs."<host>".auth of config.toml) and registryHosts
//     (config_path: remotes/docker/config ConfigureHosts) hands it to the
//     authorizer of every host, mirrors included, through ParseAuth.
//   - 2.x, local pull: internal/cri/server/images/image_pull.go
//     GRPCCRIImageService.PullImage builds the same callback and
//     pullImageWithLocalPull passes it to registryHosts, as 1.6 does.
//   - 2.1+, transfer service: pullImageWithTransferService wraps the same
//     callback in newCRICredentials; core/transfer/registry NewOCIRegistry
//     calls its GetCredentials(ref, host) from ConfigureHosts' per-host
//     authorizer, so every host is asked with its own name, mirrors
//     included, again through ParseAuth.
//
// ParseAuth drops the AuthConfig only when ServerAddress is set and its
// URL's host is not the host asking; the kubelet's is always empty
// (captured from the real kubelet's PullImage requests on the node tier). On top of that, a hosts.toml
// [host."…".header] Authorization goes on every request to that host
// (ConfigureHosts: RegistryHost.Header, copied into each request by the
// resolver's newRequest), and the authorizer replaces it only once the
// host has answered 401 (remotes/docker/authorizer.go Authorize sets
// Authorization only when a handler exists for the host): a host that
// accepts the header is never shown the CRI credential. A host that
// answers the header with 401 gets a second attempt in the same request
// (resolver.go doWithRetries/retryRequest → authorizer AddResponses): on a
// Basic challenge the handler takes the callback's credential, on a
// Bearer challenge it fetches a token with it (anonymously when there is
// none). With no credential for a Basic challenge there is no handler
// (1.6: AddResponses returns ErrNotImplemented and the 401 stands; 2.x:
// ErrInvalidAuthorization "no basic auth credentials"), and on either
// failure Resolve moves on to the next host ("trying next host"), the
// pull failing with the first host's error when none serves it.
//
// The lab's routing rows (test/netlab TestCredentialRouting) measure all
// of this, the rejected header included, on containerd 1.6 and on 2.2's
// two pull paths.
func containerdRoute(rt Runtime, host string, cred *Credential, fb Fallbacks) (*Credential, string, *Retry) {
	rule := "containerd 1.6's ParseAuth (pkg/cri/server/image_pull.go)"
	switch rt {
	case Containerd2Local:
		rule = "containerd 2.x's local pull and ParseAuth (internal/cri/server/images/image_pull.go registryHosts)"
	case Containerd2Transfer:
		rule = "containerd 2.x's transfer service, which asks the CRI callback and ParseAuth per host (image_pull.go newCRICredentials, core/transfer/registry)"
	}
	c, why := containerdCallback(rule, host, cred, fb)
	h, ok := fb.Headers[host]
	if !ok {
		return c, why, nil
	}
	retry := &Retry{Credential: c}
	if c != nil {
		retry.Why = why + "; containerd's authorizer answers the host's 401 to the header with it (remotes/docker authorizer.go AddResponses), and if the host refuses it too, containerd tries the next host of the plan"
	} else {
		retry.Why = "none: " + why + ", so containerd has no credential to answer the host's 401 to the header with. On a Basic challenge it gives up on this host (authorizer.go AddResponses: 1.6 finds no handler, 2.x fails with \"no basic auth credentials\"), on a Bearer challenge it asks the realm for an anonymous token; then it tries the next host of the plan"
	}
	return &h, "hosts.toml sends its Authorization header on every request to this host; containerd replaces it with the pull's credential only if the host answers 401 (remotes/docker ConfigureHosts, authorizer.go)", retry
}

// containerdCallback is containerd's CRI credentials callback for host:
// the request's AuthConfig through ParseAuth, else config.toml's
// registry.configs."<host>".auth, else nothing.
func containerdCallback(rule, host string, cred *Credential, fb Fallbacks) (*Credential, string) {
	if cred != nil {
		if cred.ServerAddress != "" {
			u, err := url.Parse(cred.ServerAddress)
			if err != nil || u.Host != host {
				return nil, fmt.Sprintf("anonymous, because the AuthConfig's server_address %q names another host and %s gives it only to that host (a server address without a scheme names no host at all)", cred.ServerAddress, rule)
			}
			return cred, "the AuthConfig's server_address names this host (" + rule + ")"
		}
		return cred, "the kubelet's AuthConfig has an empty server_address, and " + rule + " then gives it to every host of the pull, mirrors included"
	}
	if c, ok := fb.ConfigAuth[host]; ok {
		return &c, "the kubelet sent no AuthConfig, so containerd uses registry.configs.\"" + host + "\".auth of config.toml (" + rule + ")"
	}
	return nil, "anonymous, because the kubelet sent no AuthConfig and config.toml has no registry.configs.\"" + host + "\".auth"
}

// containersImage is containers/image's rule (docker/docker_image_src.go
// newImageSource: the SystemContext's DockerAuthConfig, which CRI-O fills
// from the CRI request, is kept only for a pull source on the image's own
// registry domain; for a mirror on another domain it is cleared
// (container-libs#333) and the credentials are looked up in the auth file
// for the mirror's own reference, pkg/docker/config GetCredentials).
func containersImage(h Host, domain, repo string, cred *Credential, fb Fallbacks) (*Credential, string) {
	hostDomain := h.HostPort()
	if cred != nil && !cred.Anonymous() {
		if hostDomain == domain {
			return cred, "the CRI request's credential, on the image's own registry (containers/image newImageSource)"
		}
	}
	ref := hostDomain + "/" + repo
	if c, ok := authFileLookup(fb.AuthFile, ref); ok {
		c.Source = Source{Kind: KindNodeConfig, Name: fb.AuthFileName}
		why := "the auth file's entry for this host (containers/image pkg/docker/config, most specific namespace first)"
		if cred != nil {
			why = "containers/image drops the request's credential for a mirror on another domain (docker_image_src.go newImageSource) and uses " + why
		}
		return &c, why
	}
	if cred != nil && !cred.Anonymous() {
		return nil, "anonymous, because containers/image drops the request's credential for a mirror on another domain (docker_image_src.go newImageSource, container-libs#333) and the auth file " + orNone(fb.AuthFileName) + " has no entry for " + hostDomain
	}
	return nil, "anonymous, because the request carries no credential and the auth file " + orNone(fb.AuthFileName) + " has no entry for " + hostDomain
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// authFileLookup is containers/image's auth-file lookup for a reference:
// the keys tried are the repository, each parent namespace, then the host
// (pkg/docker/config authKeysForKey); a key may carry a scheme, which is
// dropped. No globs.
func authFileLookup(file map[string]Entry, ref string) (Credential, bool) {
	norm := map[string]string{}
	for k := range file {
		n := strings.TrimPrefix(strings.TrimPrefix(k, "https://"), "http://")
		n = strings.TrimSuffix(n, "/")
		norm[n] = k
	}
	for cand := ref; ; {
		if k, ok := norm[cand]; ok {
			e := file[k]
			return Credential{Key: k, Username: e.Username, Password: e.Password}, true
		}
		i := strings.LastIndex(cand, "/")
		if i < 0 {
			return Credential{}, false
		}
		cand = cand[:i]
	}
}

// MirrorAnonymous returns a warning message for every mirror of routes
// asked anonymously while the registry itself receives a credential.
func MirrorAnonymous(routes []Routed) []Note {
	var registry *Credential
	for _, r := range routes {
		if !r.Mirror && r.Credential != nil {
			registry = r.Credential
		}
	}
	if registry == nil {
		return nil
	}
	var out []Note
	for _, r := range routes {
		if r.Mirror && r.Credential == nil {
			out = append(out, Note{Code: CodeMirrorAnonymous, Message: fmt.Sprintf(
				"the mirror %s is asked anonymously although %s exists for the registry: %s", r.Host, registry.Name(), r.Why)})
		}
	}
	return out
}
