package probe

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/pullpath/pullpath/internal/keychain"
	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/registry"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Kubelet returns the keychain the options stand for, in the kubelet's
// order: --username/--password as one given credential, --pull-secret as
// the pod's pull secret, --docker-config as the node's docker config file.
// Matching is the kubelet's (internal/keychain), never a rule of the probe's
// own. The error is a config.credentials error naming the file.
func (o Options) Kubelet() (keychain.Kubelet, error) {
	return o.kubelet(o.nodeDockerConfig)
}

// kubelet is Kubelet with the node's docker config from node, called
// only when the node's files count (no --docker-config, no given
// credentials).
func (o Options) kubelet(node func() nodeDocker) (keychain.Kubelet, error) {
	var k keychain.Kubelet
	if o.Creds != nil && !o.Creds.Anonymous() {
		k.Given = []keychain.Credential{{Source: keychain.Source{Kind: keychain.KindGiven, Name: o.Creds.Source},
			Key: "(any registry)", Username: o.Creds.Username, Password: o.Creds.Password}}
		return k, nil
	}
	if o.PullSecret != "" {
		auths, err := readAuths(o.PullSecret, keychain.ParseSecret)
		if err != nil {
			return k, err
		}
		k.PodSecrets = []keychain.Secret{{Name: filepath.Base(o.PullSecret), Auths: auths}}
	}
	if o.DockerConfig != "" {
		auths, err := readAuths(o.DockerConfig, keychain.ParseDockerConfig)
		if err != nil {
			return k, err
		}
		node := &keychain.Keyring{}
		node.Add(keychain.Source{Kind: keychain.KindNodeConfig, Name: o.DockerConfig}, auths)
		k.Node = node
	} else if n := node(); n.ring != nil {
		k.Node = n.ring
	}
	return k, nil
}

// nodeDocker is the kubelet's node keyring as read from its docker config
// files under Root: ring is nil when no file holds one; skipped are the
// files passed over, with why; jsonFiles are the config.json paths looked
// at, in the kubelet's order.
type nodeDocker struct {
	ring      *keychain.Keyring
	skipped   []string
	jsonFiles []string
}

// nodeDockerConfig reads the node keyring (nodeview.KubeletDockerConfigFiles,
// read as the kubelet reads them: keychain.NodeDockerConfig).
// --docker-config replaces it, and NoNodeDockerConfig turns it off.
func (o Options) nodeDockerConfig() nodeDocker {
	if o.NoNodeDockerConfig {
		return nodeDocker{}
	}
	jsonFiles, cfgFiles, _ := nodeview.KubeletDockerConfigFiles(o.Root)
	read := func(p string) ([]byte, error) {
		hp, err := nodeview.InRoot(o.Root, p)
		if err != nil {
			return nil, err
		}
		return keychain.ReadFile(hp)
	}
	auths, file, skipped := keychain.NodeDockerConfig(read, jsonFiles, cfgFiles)
	n := nodeDocker{skipped: skipped, jsonFiles: jsonFiles}
	if len(auths) > 0 {
		n.ring = &keychain.Keyring{}
		n.ring.Add(keychain.Source{Kind: keychain.KindNodeConfig, Name: file}, auths)
	}
	return n
}

// nodeDocker is the node keyring, read once per probe.
func (p *prober) nodeDocker() nodeDocker {
	if p.node == nil {
		n := p.o.nodeDockerConfig()
		p.node = &n
	}
	return *p.node
}

// kubelet is the options' keychain, read once per probe (the pull secret
// and the node's docker config files).
func (p *prober) kubelet() (keychain.Kubelet, error) {
	if p.keys == nil {
		k, err := p.o.kubelet(p.nodeDocker)
		if err != nil {
			return k, err
		}
		p.keys = &k
	}
	return *p.keys, nil
}

// hold makes one of the keychain's credentials an attempt, kept for the
// redactor; a given credential (--username) keeps the options' own.
func (p *prober) hold(c keychain.Credential) attempt {
	p.held = append(p.held, &c)
	creds := &registry.Credentials{Username: c.Username, Password: c.Password, Source: c.Name()}
	if c.Source.Kind == keychain.KindGiven {
		creds = p.o.Creds
	}
	return attempt{cred: &c, creds: creds}
}

// readAuths reads a credentials file and parses it with parse.
func readAuths(file string, parse func([]byte, string) (map[string]keychain.Entry, error)) (map[string]keychain.Entry, error) {
	data, err := keychain.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return parse(data, file)
}

// Credentials returns the kubelet's answer for image under the options
// (no credential provider run): what diagnose must agree with.
func Credentials(image string, o Options) (keychain.Result, error) {
	img, err := ParseImage(image)
	if err != nil {
		return keychain.Result{}, err
	}
	k, err := o.Kubelet()
	if err != nil {
		return keychain.Result{}, err
	}
	return k.Resolve(keychain.Repository(img.Domain, img.Repository)), nil
}

// keychainAttempts are the pulls the kubelet makes for img with the
// options' credentials, one per credential in its order, or one anonymous
// pull with the reason; the keychain's notes become warnings.
func (p *prober) keychainAttempts(img Image) ([]attempt, error) {
	k, err := p.kubelet()
	if err != nil {
		return nil, err
	}
	res := k.Resolve(keychain.Repository(img.Domain, img.Repository))
	for _, n := range res.Notes {
		p.rep.Warnings = append(p.rep.Warnings, verdict.Warning{Code: n.Code, Message: n.Message})
	}
	p.rep.Credentials = &CredentialsInfo{Image: res.Image, Tried: []string{}, Anonymous: res.Anonymous}
	if len(res.Credentials) == 0 {
		if p.o.PullSecret != "" || p.o.DockerConfig != "" || k.Node != nil {
			p.rep.Warnings = append(p.rep.Warnings, verdict.Warning{Code: verdict.CodeAuthNoMatchingSecret,
				Message: fmt.Sprintf("the pull is anonymous: %s", res.Anonymous)})
		}
		return []attempt{{creds: &registry.Credentials{}, anonymous: res.Anonymous}}, nil
	}
	var out []attempt
	for _, c := range res.Credentials {
		p.rep.Credentials.Tried = append(p.rep.Credentials.Tried, c.Name())
		out = append(out, p.hold(c))
	}
	return out, nil
}

// unseenNodeDockerConfig says, when the probe reads a node root that does
// not show the kubelet's root dir (a diagnose Job mounts /etc and /run, not
// /var/lib/kubelet, which holds every pod's secrets), that the node keyring
// could not be read; "" when it could, or when it was left out.
func (p *prober) unseenNodeDockerConfig() string {
	if p.o.NoNodeDockerConfig || p.o.DockerConfig != "" || p.o.Root == "" || p.o.Root == "/" {
		return ""
	}
	jsonFiles := p.nodeDocker().jsonFiles
	dir := path.Dir(jsonFiles[0])
	if hp, err := nodeview.InRoot(p.o.Root, dir); err == nil {
		if _, err := os.Stat(hp); err == nil {
			return ""
		}
	}
	return fmt.Sprintf("The kubelet's root dir %s is not under %s, so its node docker config (%s) was not read: if the node has one, the kubelet sends its credentials and this probe did not.", dir, p.o.Root, strings.Join(jsonFiles, ", "))
}
