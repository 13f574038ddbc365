package netlab_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/pullpath/pullpath/internal/cri"
	"github.com/pullpath/pullpath/internal/keychain"
	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/probe"
	"github.com/pullpath/pullpath/internal/redact"
	"github.com/pullpath/pullpath/internal/runtimecfg"
	"github.com/pullpath/pullpath/internal/verdict"
	"github.com/pullpath/pullpath/test/netlab"
	"github.com/pullpath/pullpath/test/netlab/minireg"
)

// Issue 22's lab: which host of the plan receives which credential, as
// predicted by internal/keychain, against what real runtimes present.
//
// Two registries in the registry namespace, each with its own htpasswd: the
// upstream registry.lab.test (every row's users) and its mirror
// mirror.lab.test (only its own users). Each logs the user of every request
// that carries Basic credentials. The node's hosts.toml puts the mirror
// before the upstream. For each row the kubelet's keychain gives the CRI
// AuthConfigs the kubelet would send; each is one pull, as the kubelet
// makes them, stopping at the first that works:
//
//   - containerd through CRI PullImage with the AuthConfig: Debian's 1.6,
//     and 2.2.9 (PULLPATH_CONTAINERD2) twice, through the transfer service
//     (its default) and with use_local_image_pull (the CRI plugin's own
//     pull). The rule each is predicted with comes from the node root as
//     the probe reads it: runtimecfg's version and pull path, and
//     probe.RuntimeRouting's hosts.toml headers and config.toml auths;
//   - containers/image (skopeo copy) with the credential as CRI-O hands it
//     over (--src-creds) and the row's node auth file as CRI-O's
//     global_auth_file (--src-authfile), a mirror in registries.conf.
//
// For every host the runtime contacted, the credential keychain.Route
// predicts must be the one the registry logged; a host after the one that
// served the pull must have logged nothing. Three rows change the node's
// containerd configuration instead of the kubelet's secrets: a hosts.toml
// Authorization header on the mirror, and k3s's
// registry.configs."mirror.lab.test".auth with and without a pull secret
// (on 2.2.9 registry.configs forces the local pull, as runtimecfg says).
// Four more put on the mirror a hosts.toml header the mirror refuses (a
// stale password): containerd's authorizer then answers the mirror's 401
// with the pull's credential, so the mirror logs the header's user
// (rejected) and then the pod's; without a pod secret the mirror fails
// with the header's rejection. The registries log each user with
// "(rejected)" when its password was wrong.

const (
	upstreamHost = "registry.lab.test"
	mirrorHost   = "mirror.lab.test"
	pusherUser   = "pusher"
)

// gate is minireg.Gate with the lab's predicted credentials.
type gate struct{ minireg.Gate }

// take is what the gate logged since the last take, each user marked
// "(rejected)" when its password was wrong.
func (g *gate) take() string { return g.TakeMarked() }

func (g *gate) accepts(c *keychain.Credential) bool {
	return c != nil && g.Accepts(c.Username, c.Password)
}

// expect is what the gate logs for a host routed r, as take writes it:
// the users of r's attempts in order, each refused one marked, up to the
// first it accepts (accepted: the host then serves the pull), or
// "anonymous" when no attempt carries a credential.
func (g *gate) expect(r keychain.Routed) (logged string, accepted bool) {
	var parts []string
	for _, c := range r.Attempts() {
		if c == nil {
			continue
		}
		if g.accepts(c) {
			parts = append(parts, c.Username)
			accepted = true
			break
		}
		parts = append(parts, c.Username+"(rejected)")
	}
	if len(parts) == 0 {
		return "anonymous", false
	}
	return strings.Join(parts, ","), accepted
}

// addLogged appends the users of one take to seen, each once.
func addLogged(seen []string, logged string) []string {
	if logged == "anonymous" {
		return seen
	}
	for _, u := range strings.Split(logged, ",") {
		if !slices.Contains(seen, u) {
			seen = append(seen, u)
		}
	}
	return seen
}

type credRow struct {
	name  string
	image string // repository:tag on the upstream
	kube  keychain.Kubelet
	// providers stand for the node's credential provider config: the
	// matchImages globs choose which providers the kubelet runs, answers
	// are what each returns.
	providers []nodeview.CredentialProvider
	answers   map[string]map[string]keychain.Entry
	// authFile is CRI-O's global_auth_file (skopeo --src-authfile).
	authFile map[string]keychain.Entry
	// wantPulled: does the kubelet's last attempt pull the image.
	wantPulled bool
	// serverAddress, when set, is put in every AuthConfig: the kubelet
	// never does, the row checks containerd's ParseAuth rule for it (CRI
	// only; skopeo has no such field).
	serverAddress string
	// variant is the node's containerd configuration for the row (CRI
	// only): "" the plain certs.d, variantHeader a hosts.toml whose mirror
	// entry carries an Authorization header, variantHeaderBad the same
	// header with a password the mirror refuses, variantConfigAuth
	// registry.configs."mirror.lab.test".auth in config.toml (k3s).
	variant string
	// wantCause and wantWarning, when set, are the probe's verdict cause
	// and a warning its report must carry (both on the mirror).
	wantCause, wantWarning string
}

const (
	variantHeader     = "hosts.toml header"
	variantHeaderBad  = "hosts.toml header, refused"
	variantConfigAuth = "config.toml auth"
)

func ent(user string) keychain.Entry {
	return keychain.Entry{Username: user, Password: "pw-" + user + "-Zq81"}
}

func credRows() []credRow {
	secret := func(name string, auths map[string]keychain.Entry) keychain.Secret {
		return keychain.Secret{Name: name, Auths: auths}
	}
	return []credRow{
		{name: "secret for the upstream only", image: "team-a/app:1",
			kube:       keychain.Kubelet{PodSecrets: []keychain.Secret{secret("up", map[string]keychain.Entry{upstreamHost: ent("up-user")})}},
			wantPulled: true},
		{name: "secret with both keys", image: "team-a/app:1",
			kube: keychain.Kubelet{PodSecrets: []keychain.Secret{secret("both", map[string]keychain.Entry{
				upstreamHost: ent("up-user"), mirrorHost: ent("mirror-user")})}},
			authFile:   map[string]keychain.Entry{mirrorHost: ent("mirror-user")},
			wantPulled: true},
		{name: "path-scoped keys, team-a image", image: "team-a/app:1",
			kube: keychain.Kubelet{PodSecrets: []keychain.Secret{secret("teams", map[string]keychain.Entry{
				upstreamHost + "/team-a": ent("team-a-user"), upstreamHost + "/team-b": ent("team-b-user")})}},
			wantPulled: true},
		{name: "path-scoped keys, team-b image", image: "team-b/app:1",
			kube: keychain.Kubelet{PodSecrets: []keychain.Secret{secret("teams", map[string]keychain.Entry{
				upstreamHost + "/team-a": ent("team-a-user"), upstreamHost + "/team-b": ent("team-b-user")})}},
			wantPulled: true},
		{name: "path-scoped key of another team only", image: "team-b/app:1",
			kube:       keychain.Kubelet{PodSecrets: []keychain.Secret{secret("team-a", map[string]keychain.Entry{upstreamHost + "/team-a": ent("team-a-user")})}},
			wantPulled: false},
		{name: "wildcard key", image: "team-a/app:1",
			kube:       keychain.Kubelet{PodSecrets: []keychain.Secret{secret("wild", map[string]keychain.Entry{"*.lab.test": ent("wild-user")})}},
			wantPulled: true},
		{name: "key with a port", image: "team-a/app:1",
			kube:       keychain.Kubelet{PodSecrets: []keychain.Secret{secret("port", map[string]keychain.Entry{upstreamHost + ":443": ent("port-user")})}},
			wantPulled: false},
		{name: "wrong key first, then the right one", image: "team-a/app:1",
			kube: keychain.Kubelet{PodSecrets: []keychain.Secret{secret("two", map[string]keychain.Entry{
				upstreamHost + "/team-a": ent("stale-user"), upstreamHost: ent("up-user")})}},
			wantPulled: true},
		{name: "provider matchImages globs", image: "team-a/app:1",
			providers: []nodeview.CredentialProvider{
				{Name: "acr-credential-provider", MatchImages: []string{"*.azurecr.io"}},
				{Name: "lab-provider", MatchImages: []string{"*.lab.test/team-a"}},
			},
			answers: map[string]map[string]keychain.Entry{
				"acr-credential-provider": {upstreamHost: ent("acr-user")},
				"lab-provider":            {"*.lab.test": ent("prov-user")},
			},
			wantPulled: true},
		{name: "service account secret next to a pod secret", image: "team-a/app:1",
			kube: keychain.Kubelet{
				PodSecrets:            []keychain.Secret{secret("pod", map[string]keychain.Entry{upstreamHost: ent("pod-user")})},
				ServiceAccountSecrets: []keychain.Secret{secret("sa", map[string]keychain.Entry{upstreamHost: ent("sa-user")})},
			},
			wantPulled: true},
		{name: "not the kubelet: AuthConfig with server_address https://registry.lab.test", image: "team-a/app:1",
			kube:          keychain.Kubelet{PodSecrets: []keychain.Secret{secret("up", map[string]keychain.Entry{upstreamHost: ent("up-user")})}},
			serverAddress: "https://" + upstreamHost, wantPulled: true},
		{name: "service account secret alone (pod created without any)", image: "team-a/app:1",
			kube:       keychain.Kubelet{ServiceAccountSecrets: []keychain.Secret{secret("sa", map[string]keychain.Entry{upstreamHost: ent("sa-user")})}},
			wantPulled: true},
		{name: "hosts.toml Authorization header on the mirror, pod secret for the upstream", image: "team-a/app:1", variant: variantHeader,
			kube:       keychain.Kubelet{PodSecrets: []keychain.Secret{secret("up", map[string]keychain.Entry{upstreamHost: ent("up-user")})}},
			wantPulled: true},
		{name: "k3s configs.auth for the mirror, no pull secret", image: "team-a/app:1", variant: variantConfigAuth,
			wantPulled: true},
		{name: "refused hosts.toml header on the mirror, pod secret both registries take", image: "team-a/app:1", variant: variantHeaderBad,
			kube:       keychain.Kubelet{PodSecrets: []keychain.Secret{secret("shared", map[string]keychain.Entry{upstreamHost: ent("shared-user")})}},
			wantPulled: true, wantWarning: verdict.CodeAuthHostsHeaderRetried},
		{name: "refused hosts.toml header on the mirror, pod secret for the upstream only", image: "team-a/app:1", variant: variantHeaderBad,
			kube:       keychain.Kubelet{PodSecrets: []keychain.Secret{secret("up", map[string]keychain.Entry{upstreamHost: ent("up-user")})}},
			wantPulled: true, wantWarning: verdict.CodeAuthHostsHeaderRetried},
		{name: "refused hosts.toml header on the mirror, no pull secret", image: "team-a/app:1", variant: variantHeaderBad,
			wantPulled: false, wantCause: verdict.CodeAuthHostsHeaderRejected},
		{name: "refused hosts.toml header on the mirror, stale pod secret", image: "team-a/app:1", variant: variantHeaderBad,
			kube:       keychain.Kubelet{PodSecrets: []keychain.Secret{secret("stale", map[string]keychain.Entry{upstreamHost: ent("stale-user")})}},
			wantPulled: false, wantCause: verdict.CodeAuthBadCredentials, wantWarning: verdict.CodeAuthHostsHeaderRetried},
		{name: "k3s configs.auth for the mirror, pod secret for the upstream", image: "team-a/app:1", variant: variantConfigAuth,
			kube:       keychain.Kubelet{PodSecrets: []keychain.Secret{secret("up", map[string]keychain.Entry{upstreamHost: ent("up-user")})}},
			wantPulled: true},
	}
}

// providerKeychain runs the kubelet's provider selection: the providers
// whose matchImages match image, their answers in one keyring.
func (r credRow) providerKeychain(image string) keychain.Keychain {
	if len(r.providers) == 0 {
		return nil
	}
	cfg := nodeview.CredentialProviderConfig{Providers: r.providers}
	ring := &keychain.Keyring{}
	for _, p := range cfg.Matching(image) {
		ring.Add(keychain.Source{Kind: keychain.KindProvider, Name: p.Name}, r.answers[p.Name])
	}
	return ring
}

// credWorld is the lab of TestCredentialRouting.
type credWorld struct {
	n                *netlab.Net
	up, mirror       *gate
	root, etc, certs string
	instances        map[string]*crInstance
	// top is the test the daemons live as long as.
	top *testing.T
}

func startCredWorld(t *testing.T, ctx context.Context) *credWorld {
	t.Helper()
	n := newNet(t)
	ca, err := minireg.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	w := &credWorld{n: n, instances: map[string]*crInstance{}, top: t}
	upUsers := map[string]string{pusherUser: "push-pw"}
	for _, u := range []string{"up-user", "team-a-user", "team-b-user", "wild-user", "port-user", "prov-user", "pod-user", "sa-user", "acr-user", "shared-user"} {
		upUsers[u] = ent(u).Password
	}
	w.up = &gate{minireg.Gate{Users: upUsers, Realm: upstreamHost, Quiet: pusherUser}}
	w.mirror = &gate{minireg.Gate{Users: map[string]string{pusherUser: "push-pw", "mirror-user": ent("mirror-user").Password,
		"hdr-user": ent("hdr-user").Password, "k3s-user": ent("k3s-user").Password, "shared-user": ent("shared-user").Password}, Realm: mirrorHost, Quiet: pusherUser}}
	serve := func(g *gate, host, addr string) {
		cert, err := ca.Issue(host)
		if err != nil {
			t.Fatal(err)
		}
		g.Inner = registry.New(registry.Logger(log.New(io.Discard, "", 0)))
		ln, err := n.Listen("tcp", addr+":443")
		if err != nil {
			t.Fatal(err)
		}
		srv := minireg.ServeHandler(ln, cert, g)
		t.Cleanup(func() { srv.Close() })
	}
	serve(w.up, upstreamHost, n.Addrs.Registry.String())
	serve(w.mirror, mirrorHost, n.Addrs.Mirror.String())
	serveZone(t, n, n.Addrs.DNS.String(), map[string]string{upstreamHost + ".": n.Addrs.Registry.String(), mirrorHost + ".": n.Addrs.Mirror.String()})
	for _, target := range []struct{ host, addr string }{{upstreamHost, n.Addrs.Registry.String()}, {mirrorHost, n.Addrs.Mirror.String()}} {
		dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
			return n.Registry.DialContext(ctx, network, target.addr+":443")
		}
		for _, repo := range []string{"team-a/app:1", "team-b/app:1"} {
			if _, err := minireg.PushRandomAuth(ctx, target.host+"/"+repo, 1, 512, dial, ca.Pool(), pusherUser, "push-pw"); err != nil {
				t.Fatal(err)
			}
		}
	}
	w.take()
	w.root, err = n.RootFor(n.Node)
	if err != nil {
		t.Fatal(err)
	}
	w.etc = filepath.Join(w.root, "etc")
	w.certs = filepath.Join(w.root, "certs")
	writeFiles(t, w.root, map[string]string{
		"etc/resolv.conf":                   "nameserver " + n.Addrs.DNS.String() + "\n",
		"etc/hosts":                         "127.0.0.1 localhost\n",
		"etc/ssl/certs/ca-certificates.crt": string(ca.PEM),
		"etc/containerd/certs.d/" + upstreamHost + "/hosts.toml": fmt.Sprintf("server = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n",
			"https://"+upstreamHost, "https://"+mirrorHost),
		// The header variant's certs.d: the mirror entry carries an
		// Authorization header of its own user.
		"etc/containerd/certs-hdr.d/" + upstreamHost + "/hosts.toml": fmt.Sprintf("server = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n  [host.%q.header]\n    Authorization = %q\n",
			"https://"+upstreamHost, "https://"+mirrorHost, "https://"+mirrorHost, "Basic "+base64.StdEncoding.EncodeToString([]byte("hdr-user:"+ent("hdr-user").Password))),
		// The refused header's: the same user with a stale password.
		"etc/containerd/certs-hdrbad.d/" + upstreamHost + "/hosts.toml": fmt.Sprintf("server = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n  [host.%q.header]\n    Authorization = %q\n",
			"https://"+upstreamHost, "https://"+mirrorHost, "https://"+mirrorHost, "Basic "+base64.StdEncoding.EncodeToString([]byte("hdr-user:stale-"+ent("hdr-user").Password))),
		"certs/ca.crt":                   string(ca.PEM),
		"etc/containers/registries.conf": fmt.Sprintf("[[registry]]\nlocation = %q\n\n[[registry.mirror]]\nlocation = %q\n", upstreamHost, mirrorHost),
		"etc/containers/policy.json":     `{"default":[{"type":"insecureAcceptAnything"}]}`,
	})
	return w
}

// take returns what both registries logged since the last take.
func (w *credWorld) take() map[string]string {
	return map[string]string{mirrorHost: w.mirror.take(), upstreamHost: w.up.take()}
}

func (w *credWorld) gate(host string) *gate {
	if host == mirrorHost {
		return w.mirror
	}
	return w.up
}

// skopeoPull pulls image with containers/image as CRI-O would, with cred
// (nil: none in the request) and authFile as its global_auth_file.
func (w *credWorld) skopeoPull(ctx context.Context, t *testing.T, image string, cred *keychain.Credential, authFile map[string]keychain.Entry, dir string) error {
	// containers/image reads only the "auth" field of an auth file entry.
	auths := map[string]map[string]string{}
	for k, e := range authFile {
		auths[k] = map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte(e.Username + ":" + e.Password))}
	}
	b, _ := json.Marshal(map[string]any{"auths": auths})
	af := filepath.Join(dir, "auth.json")
	if err := os.WriteFile(af, b, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--registries-conf", "/etc/containers/registries.conf", "--policy", "/etc/containers/policy.json",
		"copy", "--retry-times", "0", "--src-cert-dir", w.certs, "--src-authfile", af}
	if cred != nil {
		args = append(args, "--src-creds", cred.Username+":"+cred.Password)
	}
	out := filepath.Join(dir, "out")
	os.RemoveAll(out)
	args = append(args, "docker://"+image, "dir:"+out)
	cmd := w.n.Node.Command(ctx, "skopeo", args...)
	cmd.Env = append(cmd.Env, "HOME="+dir, "XDG_RUNTIME_DIR="+dir, "REGISTRY_AUTH_FILE="+af)
	o, err := cmd.CombinedOutput()
	if err != nil {
		text := string(o)
		if cred != nil {
			text = strings.ReplaceAll(text, cred.Password, "****")
		}
		return fmt.Errorf("skopeo: %v: %s", err, redact.String(netlab.TailString(text, 600)))
	}
	return nil
}

// crInstance is one containerd of the lab with one configuration: its
// CRI client and the credential rule the probe's glue derives for it from
// the node root (runtimecfg's version and pull path, the plan's hosts.toml
// headers, config.toml's registry.configs auth).
type crInstance struct {
	label string // "containerd 1.6.20~ds1", "containerd 2.2.9 (transfer)"
	rt    keychain.Runtime
	cri   *cri.Client
	plan  []keychain.Host
	fb    keychain.Fallbacks
	// pullPath is what runtimecfg decided, and why.
	pullPath, pullWhy string
	// config is the daemon's config.toml.
	config string
}

// crKind is a containerd binary and the pull path asked of it.
type crKind struct {
	name  string // "1.6", "2.x-transfer", "2.x-local"
	bin   string
	local bool // force the local pull (2.x)
}

func crKinds(t *testing.T) []crKind {
	var out []crKind
	if p, err := exec.LookPath("containerd"); err == nil {
		out = append(out, crKind{name: "1.6", bin: p})
	}
	if p := os.Getenv("PULLPATH_CONTAINERD2"); p != "" {
		out = append(out, crKind{name: "2.x-transfer", bin: p}, crKind{name: "2.x-local", bin: p, local: true})
	} else {
		t.Log("PULLPATH_CONTAINERD2 is not set (export PULLPATH_CONTAINERD2=$(sh tools/containerd2/build.sh)/containerd): the containerd 2.x rows are not run")
	}
	return out
}

// credConfig is the config.toml of one lab containerd: netlab's (root,
// state, socket under dir) with the registry table of the variant, in
// configuration version 2 (1.6, and 2.x's transfer pull) or 3 with
// use_local_image_pull (2.x's local pull).
func credConfig(dir string, k crKind, variant string) string {
	certs := "/etc/containerd/certs.d"
	switch variant {
	case variantHeader:
		certs = "/etc/containerd/certs-hdr.d"
	case variantHeaderBad:
		certs = "/etc/containerd/certs-hdrbad.d"
	}
	auth := ""
	if !k.local {
		cfg := strings.Replace(netlab.ContainerdConfig(dir), `config_path = "/etc/containerd/certs.d"`, fmt.Sprintf("config_path = %q", certs), 1)
		if variant == variantConfigAuth {
			auth = fmt.Sprintf("\n[plugins.\"io.containerd.grpc.v1.cri\".registry.configs.%q.auth]\n  username = \"k3s-user\"\n  password = %q\n", mirrorHost, ent("k3s-user").Password)
		}
		return cfg + auth
	}
	if variant == variantConfigAuth {
		auth = fmt.Sprintf("[plugins.\"io.containerd.cri.v1.images\".registry.configs.%q.auth]\n  username = \"k3s-user\"\n  password = %q\n", mirrorHost, ent("k3s-user").Password)
	}
	return rcBase(dir, 3, "") + fmt.Sprintf("[plugins.\"io.containerd.cri.v1.images\"]\n  use_local_image_pull = true\n[plugins.\"io.containerd.cri.v1.images\".registry]\n  config_path = %q\n", certs) + auth
}

// instance starts (once) the containerd of kind k with the variant's
// configuration, written under the node root, and derives its credential
// rule with runtimecfg and probe.RuntimeRouting, as the probe does.
func (w *credWorld) instance(ctx context.Context, t *testing.T, k crKind, variant string) *crInstance {
	key := k.name
	if variant != "" {
		key += "/" + variant
	}
	if in, ok := w.instances[key]; ok {
		return in
	}
	name := strings.NewReplacer("/", "-", ".", "", " ", "-").Replace("cd-" + key)
	dir := filepath.Join(w.n.Dir, name)
	nodeCfg := "/etc/containerd/" + name + ".toml"
	cfgPath := filepath.Join(w.root, nodeCfg)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfgPath, []byte(credConfig(dir, k, variant)), 0o600); err != nil {
		t.Fatal(err)
	}
	cd, err := netlab.StartContainerdWith(ctx, w.n.Node, dir, k.bin, cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	w.top.Cleanup(cd.Stop)
	c, err := cri.Dial(ctx, cd.Socket)
	if err != nil {
		t.Fatal(err)
	}
	w.top.Cleanup(func() { c.Close() })
	// The node root as the probe reads it: this daemon's version and
	// config file.
	version, _, _ := strings.Cut(cd.Version, "~")
	rc, err := runtimecfg.Load(w.root, nodeview.RuntimeBinary{Path: "/usr/bin/containerd", ModuleVersion: "v" + strings.TrimPrefix(version, "v"), ConfigFlag: nodeCfg}, runtimecfg.Options{})
	if err != nil {
		t.Fatalf("runtimecfg: %v", err)
	}
	view, err := nodeview.Load(w.root)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := rc.Plan(ctx, view, upstreamHost, false)
	if err != nil {
		t.Fatalf("runtimecfg plan: %v", err)
	}
	rt, fb, notes := probe.RuntimeRouting(rc, w.root, plan.Hosts)
	if len(notes) > 0 {
		t.Errorf("runtime routing notes: %v", notes)
	}
	in := &crInstance{rt: rt, cri: c, fb: fb, pullPath: rc.PullPath, pullWhy: rc.PullPathReason, config: cfgPath}
	for _, h := range plan.Hosts {
		in.plan = append(in.plan, keychain.PlanHost{Host: h.Host, Mirror: h.Mirror})
	}
	in.label = "containerd " + strings.TrimSuffix(cd.Version, "+unknown")
	if rc.Runtime.AtLeast(2, 1) {
		switch {
		case k.local:
			in.label += " (local pull: use_local_image_pull)"
		case rc.PullPath == runtimecfg.PullLocal:
			in.label += " (local pull: forced by registry.configs)"
		default:
			in.label += " (transfer service)"
		}
	}
	if variant != "" {
		in.label += ", " + variant
	}
	// The decision runtimecfg models is the one asked for.
	switch {
	case k.name == "2.x-local" && rt != keychain.Containerd2Local,
		k.name == "2.x-transfer" && variant != variantConfigAuth && rt != keychain.Containerd2Transfer,
		k.name == "2.x-transfer" && variant == variantConfigAuth && rt != keychain.Containerd2Local:
		t.Errorf("%s: runtimecfg decided pull path %q (%s), rule %s", key, rc.PullPath, rc.PullPathReason, rt)
	}
	if len(in.plan) != 2 || !in.plan[0].IsMirror() || in.plan[0].HostPort() != mirrorHost {
		t.Fatalf("%s: plan %+v, want the mirror then the upstream", key, in.plan)
	}
	w.instances[key] = in
	return in
}

// TestCredentialRouting proves the keychain's routing: for every row, runtime and
// host, the credential keychain predicts is the one the registry logged.
func TestCredentialRouting(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	w := startCredWorld(t, ctx)
	bin := buildPullpath(t)
	_, skopeoErr := exec.LookPath("skopeo")
	kinds := crKinds(t)
	plan := []keychain.Host{keychain.PlanHost{Host: mirrorHost, Mirror: true}, keychain.PlanHost{Host: upstreamHost}}
	var table []string
	for _, row := range credRows() {
		t.Run(row.name, func(t *testing.T) {
			repoTag := row.image
			repo, _, _ := strings.Cut(repoTag, ":")
			image := upstreamHost + "/" + repoTag
			kube := row.kube
			kube.Providers = row.providerKeychain(upstreamHost + "/" + repo)
			res := kube.Resolve(keychain.Repository(upstreamHost, repo))
			attempts := []*keychain.Credential{nil}
			if len(res.Credentials) > 0 {
				attempts = attempts[:0]
				for i := range res.Credentials {
					res.Credentials[i].ServerAddress = row.serverAddress
					attempts = append(attempts, &res.Credentials[i])
				}
			} else if res.Anonymous == "" {
				t.Errorf("no credential and no reason")
			}
			// What each registry logged over containerd 1.6's attempts.
			var upstreamUsers, mirrorUsers []string
			type runner struct {
				kind   *crKind
				skopeo bool
			}
			var runners []runner
			for i := range kinds {
				runners = append(runners, runner{kind: &kinds[i]})
			}
			switch {
			case row.serverAddress != "" || row.variant != "":
			case skopeoErr != nil:
				t.Logf("containers/image rows skipped: no skopeo on PATH (apt-get install skopeo)")
			default:
				runners = append(runners, runner{skopeo: true})
			}
			for _, run := range runners {
				rt, label, hosts, fb := keychain.ContainersImage, "containers/image (skopeo)", plan, keychain.Fallbacks{AuthFile: row.authFile, AuthFileName: "global_auth_file"}
				var in *crInstance
				if !run.skopeo {
					in = w.instance(ctx, t, *run.kind, row.variant)
					rt, label, hosts, fb = in.rt, in.label, in.plan, in.fb
				}
				first := run.kind != nil && run.kind.name == "1.6"
				pulled := false
				for i, cred := range attempts {
					w.take()
					var err error
					if in != nil {
						var auth *cri.AuthConfig
						if cred != nil {
							// What the kubelet sends: kuberuntime_image.go copies
							// ServerAddress from the keyring's AuthConfig, which
							// never sets it.
							auth = &cri.AuthConfig{Username: cred.Username, Password: cred.Password, ServerAddress: cred.ServerAddress}
						}
						_, err = in.cri.Pull(ctx, image, auth)
					} else {
						err = w.skopeoPull(ctx, t, image, cred, row.authFile, t.TempDir())
					}
					logged := w.take()
					if first {
						upstreamUsers = addLogged(upstreamUsers, logged[upstreamHost])
						mirrorUsers = addLogged(mirrorUsers, logged[mirrorHost])
					}
					routes := keychain.Route(rt, upstreamHost, repo, hosts, cred, fb)
					served := false
					for _, r := range routes {
						want, accepted := w.gate(r.Host).expect(r)
						got := logged[r.Host]
						if served {
							// The pull was served by an earlier host.
							if got != "anonymous" {
								t.Errorf("%s attempt %d: %s was presented %q after an earlier host served the pull", label, i+1, r.Host, got)
							}
							table = append(table, fmt.Sprintf("| %s | %s | %d | %s | (not contacted) | %s |", row.name, label, i+1, r.Host, got))
							continue
						}
						if got != want {
							t.Errorf("%s attempt %d: %s logged %q, keychain predicted %q (%s)", label, i+1, r.Host, got, want, r.Why)
						}
						table = append(table, fmt.Sprintf("| %s | %s | %d | %s | %s | %s |", row.name, label, i+1, r.Host, name(r), got))
						served = accepted
					}
					if err == nil {
						pulled = true
						if !served {
							t.Errorf("%s attempt %d pulled, but no host of the plan accepts the predicted credential", label, i+1)
						}
						break
					}
					if served {
						t.Errorf("%s attempt %d failed although a host accepted the credential: %v", label, i+1, err)
					}
				}
				if pulled != row.wantPulled {
					t.Errorf("%s: pulled %v, want %v", label, pulled, row.wantPulled)
				}
				if in != nil && pulled {
					// The next row pulls again: drop the image.
					if err := in.cri.Remove(ctx, image); err != nil {
						t.Fatalf("removing %s: %v", image, err)
					}
				}
				if first && len(row.providers) == 0 && len(kube.ServiceAccountSecrets) == 0 && row.serverAddress == "" {
					// The probe reads the node's /etc/containerd/config.toml:
					// for a variant row, this daemon's.
					if row.variant != "" {
						b, err := os.ReadFile(in.config)
						if err != nil {
							t.Fatal(err)
						}
						node := filepath.Join(w.root, "etc/containerd/config.toml")
						if err := os.WriteFile(node, b, 0o600); err != nil {
							t.Fatal(err)
						}
						defer os.Remove(node)
					}
					w.checkProbe(ctx, t, bin, row, image, in, attempts, map[string][]string{upstreamHost: upstreamUsers, mirrorHost: mirrorUsers}, pulled)
				}
			}
		})
	}
	for _, in := range w.instances {
		t.Logf("%s: rule %s, pull path %q (%s)", in.label, in.rt, in.pullPath, in.pullWhy)
	}
	t.Logf("rows (row | runtime | attempt | host | predicted | logged):\n%s", strings.Join(table, "\n"))
	if out := os.Getenv("PULLPATH_CREDS_TABLE"); out != "" {
		os.WriteFile(out, []byte(strings.Join(table, "\n")+"\n"), 0o644)
	}
}

// checkProbe runs `pullpath probe --pull-secret` on the node for a row of
// pod pull secrets (or none, for the rows of the runtime's own
// credentials; the node's config.toml is then the row's daemon's): each
// plan host's credential must be the one containerd
// was seen to receive on the kubelet's first attempt, the probe must
// present every host what containerd presented it over the kubelet's
// attempts, its verdict must be the kubelet's, and no password may appear
// in its output.
func (w *credWorld) checkProbe(ctx context.Context, t *testing.T, bin string, row credRow, image string, in *crInstance, attempts []*keychain.Credential, nodeUsers map[string][]string, pulled bool) {
	t.Helper()
	auths := map[string]map[string]string{}
	var passwords []string
	for _, sec := range row.kube.PodSecrets {
		for k, e := range sec.Auths {
			auths[k] = map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte(e.Username + ":" + e.Password))}
			passwords = append(passwords, e.Password)
		}
	}
	b, _ := json.Marshal(map[string]any{"auths": auths})
	f := filepath.Join(t.TempDir(), "pull-secret.json")
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"probe", image, "--root", w.root, "-o", "json", "--blobs", "none", "--timeout", "3s", "--deadline", "60s"}
	if len(auths) > 0 {
		args = append(args, "--pull-secret", f)
	}
	w.take()
	cmd := w.n.Node.Command(ctx, bin, args...)
	out, _ := cmd.Output()
	logged := w.take()
	for _, pw := range append(passwords, "-Zq81") {
		if strings.Contains(string(out), pw) {
			t.Errorf("probe output shows a password")
		}
	}
	var rep struct {
		Verdict struct {
			OK       bool   `json:"ok"`
			Cause    string `json:"cause"`
			Endpoint string `json:"endpoint"`
			Evidence string `json:"evidence"`
		} `json:"verdict"`
		Plan []struct {
			Host       string `json:"host"`
			Credential string `json:"credential"`
		} `json:"plan"`
		Endpoints []struct {
			Host  string `json:"host"`
			Steps []struct {
				Name  string         `json:"name"`
				Facts map[string]any `json:"facts"`
			} `json:"steps"`
		} `json:"endpoints"`
		Warnings []struct {
			Code     string `json:"code"`
			Endpoint string `json:"endpoint"`
		} `json:"warnings"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("probe output is not a report: %v", err)
	}
	routes := keychain.Route(in.rt, upstreamHost, "", in.plan, attempts[0], in.fb)
	for _, r := range routes {
		var got string
		for _, h := range rep.Plan {
			if h.Host == r.Host {
				got = h.Credential
			}
		}
		ok := strings.HasPrefix(got, "anonymous")
		want := "anonymous"
		if r.Credential != nil {
			// The probe names the secret by its file; the key is the key.
			want = "key " + strconv.Quote(r.Credential.Key)
			ok = !ok && strings.Contains(got, want)
		}
		if !ok {
			t.Errorf("probe: plan host %s gets %q, containerd was given %q", r.Host, got, want)
		}
	}
	for _, host := range []string{mirrorHost, upstreamHost} {
		want := strings.Join(nodeUsers[host], ",")
		if want == "" {
			want = "anonymous"
		}
		if logged[host] != want {
			t.Errorf("probe presented %s %q, the kubelet's containerd pulls presented %q", host, logged[host], want)
		}
	}
	if rep.Verdict.OK != pulled {
		t.Errorf("probe verdict ok=%v (%s), the kubelet's pull succeeded=%v", rep.Verdict.OK, rep.Verdict.Cause, pulled)
	}
	mirrorEP := mirrorHost + ":443"
	if row.wantCause != "" && (rep.Verdict.Cause != row.wantCause || rep.Verdict.Endpoint != mirrorEP) {
		t.Errorf("probe verdict %s at %s (%s), want %s at %s", rep.Verdict.Cause, rep.Verdict.Endpoint, rep.Verdict.Evidence, row.wantCause, mirrorEP)
	}
	if row.wantWarning != "" && !slices.ContainsFunc(rep.Warnings, func(w struct {
		Code     string `json:"code"`
		Endpoint string `json:"endpoint"`
	}) bool {
		return w.Code == row.wantWarning && w.Endpoint == mirrorEP
	}) {
		t.Errorf("probe warnings %+v, want %s at %s", rep.Warnings, row.wantWarning, mirrorEP)
	}
	if row.variant == variantHeaderBad {
		// The mirror's http steps say what each request carried: the
		// header first, refused.
		var auths []string
		for _, ep := range rep.Endpoints {
			if ep.Host != mirrorHost {
				continue
			}
			for _, st := range ep.Steps {
				if a, ok := st.Facts["authorization"].(string); ok && st.Name == "http" {
					auths = append(auths, fmt.Sprintf("%s %v", a, st.Facts["status"]))
				}
			}
		}
		if len(auths) == 0 || auths[0] != "hosts.toml header 401" {
			t.Errorf("probe: the mirror's requests carried %q, want the hosts.toml header refused first", auths)
		}
		t.Logf("probe: the mirror's requests carried %q; verdict %s; plan %+v", auths, rep.Verdict.Cause, rep.Plan)
	}
}

// name is the predicted credential as the table shows it: the key's user
// (the registries log users), its source and key.
func name(r keychain.Routed) string {
	one := func(c *keychain.Credential) string {
		if c == nil {
			return "anonymous"
		}
		return c.Username + " (" + c.Name() + ")"
	}
	out := one(r.Credential)
	if r.OnRejected != nil {
		next := "nothing"
		if r.OnRejected.Credential != nil {
			next = one(r.OnRejected.Credential)
		}
		out += ", on 401: " + next
	}
	return out
}
