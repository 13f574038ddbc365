package keychain

import (
	"fmt"
	"github.com/pullpath/pullpath/internal/verdict"
	"sort"
	"strings"
)

// Secret is one pull secret with its auths (nil when it could not be read).
type Secret struct {
	Name  string
	Auths map[string]Entry
}

// Kubelet composes the kubelet's sources in its order
// (pkg/kubelet/images/image_manager.go EnsureImageExists:
// MakeDockerKeyring(pullSecrets, UnionDockerKeyring{nodeKeyring,
// externalCredentialProviderKeyring})): first one keyring of every pull
// secret of the pod, then the node's docker config files, then the
// credential providers' answers. Each is looked up on its own, and their
// answers are concatenated: the kubelet tries every credential of the
// union in turn (kuberuntime_image.go PullImage) until one pulls.
type Kubelet struct {
	// PodSecrets are pod.spec.imagePullSecrets, in order.
	PodSecrets []Secret
	// ServiceAccountSecrets are the pod's service account's
	// imagePullSecrets. The ServiceAccount admission plugin copies them
	// into a pod only when the pod, at creation, lists none
	// (plugin/pkg/admission/serviceaccount/admission.go); the kubelet reads
	// only the pod's. They count only when PodSecrets is empty.
	ServiceAccountSecrets []Secret
	// PodExists is true for a pod that exists: its spec holds the pull
	// secrets it will ever have, and the service account's never count.
	PodExists bool
	// Node is the node's docker config files (credentialprovider
	// ReadDockerConfigFile: config.json, then .dockercfg, under the
	// kubelet's root dir, its working directory, $HOME/.docker and
	// /.docker), nil when none.
	Node Keychain
	// Providers are the kubelet credential providers' answers for the
	// image (one keyring, in the config's order), nil when none ran.
	Providers Keychain
	// Given are credentials handed to the probe directly
	// (--username/--password): they stand for one CRI AuthConfig.
	Given []Credential
}

// Result is the kubelet's answer for one image.
type Result struct {
	// Image is the repository the kubelet looks up.
	Image string `json:"image"`
	// Credentials are the CRI AuthConfigs the kubelet sends, one pull
	// each, in order; empty: the kubelet pulls with no AuthConfig.
	Credentials []Credential `json:"credentials"`
	// Anonymous says why Credentials is empty.
	Anonymous string `json:"anonymous,omitempty"`
	// Notes are findings about keys and secrets (no secret in them).
	Notes []Note `json:"notes,omitempty"`
}

// Note is one finding of Resolve, with the warning code it is reported under.
type Note struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Warning codes of the keychain (registered in internal/verdict).
const (
	CodeKeyUnused       = verdict.CodeAuthPullSecretKeyUnused
	CodeKeyDockerDiffer = verdict.CodeAuthKeyMatchesDifferently
	CodeSAUnused        = verdict.CodeAuthServiceaccountSecretUnused
	CodeMirrorAnonymous = verdict.CodeAuthMirrorAnonymous
)

// secretsKeyring returns the one keyring of the secrets the kubelet reads.
func (k Kubelet) secrets() ([]Secret, Source) {
	if len(k.PodSecrets) > 0 || k.PodExists {
		return k.PodSecrets, Source{Kind: KindPodSecret}
	}
	return k.ServiceAccountSecrets, Source{Kind: KindServiceAccount}
}

// Keychain returns the union in the kubelet's order.
func (k Kubelet) Keychain() Keychain {
	var u Union
	if len(k.Given) > 0 {
		u = append(u, given(k.Given))
	}
	secrets, src := k.secrets()
	ring := &Keyring{}
	for _, s := range secrets {
		if s.Auths != nil {
			ring.Add(Source{Kind: src.Kind, Name: s.Name}, s.Auths)
		}
	}
	if len(ring.all) > 0 {
		u = append(u, ring)
	}
	if k.Node != nil {
		u = append(u, k.Node)
	}
	if k.Providers != nil {
		u = append(u, k.Providers)
	}
	return u
}

// given is a fixed list of credentials that apply to any image.
type given []Credential

func (g given) Lookup(string) []Credential { return g }
func (g given) Keys() []Credential         { return g }

// Resolve returns the CRI AuthConfigs the kubelet would send for image (a
// repository, as Repository builds it), in order, or why there are none,
// and the notes about keys that match no image or match differently
// elsewhere. images are every image of the workload (for unused keys);
// nil means image alone.
func (k Kubelet) Resolve(image string, images ...string) Result {
	kc := k.Keychain()
	r := Result{Image: image, Credentials: kc.Lookup(image)}
	if r.Credentials == nil {
		r.Credentials = []Credential{}
	}
	if len(images) == 0 {
		images = []string{image}
	}
	keys := kc.Keys()
	if len(k.PodSecrets) > 0 {
		for _, s := range k.ServiceAccountSecrets {
			r.Notes = append(r.Notes, Note{Code: CodeSAUnused, Message: fmt.Sprintf(
				"the service account's pull secret %s is not used: the pod lists its own imagePullSecrets, and the ServiceAccount admission plugin copies the service account's into a pod only when it lists none", s.Name)})
		}
	}
	for _, c := range keys {
		if c.Source.Kind != KindPodSecret && c.Source.Kind != KindServiceAccount {
			continue
		}
		key, _ := normalizeKey(c.Key)
		used, docker := false, false
		for _, img := range images {
			if URLsMatch(key, img) || (isDefaultRegistry(img) && key == "index.docker.io") {
				used = true
			}
			if DockerMatches(c.Key, img) {
				docker = true
			}
		}
		switch {
		case !used && docker:
			r.Notes = append(r.Notes, Note{Code: CodeKeyDockerDiffer, Message: fmt.Sprintf(
				"%s matches %s for docker and crane (they look a registry up by host alone) but not for the kubelet (keyring.go URLsMatch: the key's path must be a prefix of the image's path, its port equal, its host labels glob-matched): the kubelet sends nothing from it", c.Name(), strings.Join(images, ", "))})
		case !used:
			r.Notes = append(r.Notes, Note{Code: CodeKeyUnused, Message: fmt.Sprintf(
				"%s matches no image of the workload (%s) by the kubelet's rule", c.Name(), strings.Join(images, ", "))})
		case used && !docker:
			r.Notes = append(r.Notes, Note{Code: CodeKeyDockerDiffer, Message: fmt.Sprintf(
				"%s matches %s for the kubelet (a glob or a path prefix) but not for docker or crane, which look a registry up by its exact host: a pull tested with them says nothing about this key", c.Name(), image)})
		}
	}
	if len(r.Credentials) > 0 {
		return r
	}
	if len(keys) == 0 {
		r.Anonymous = "no pull secret, node docker config or credential provider holds a credential"
		return r
	}
	var names []string
	for _, c := range keys {
		names = append(names, c.Name())
	}
	sort.Strings(names)
	r.Anonymous = fmt.Sprintf("none of the %d keys held matches %s by the kubelet's rule (%s)", len(keys), image, strings.Join(names, "; "))
	return r
}
