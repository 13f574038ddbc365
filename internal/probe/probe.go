package probe

import (
	"context"
	"crypto/tls"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/distribution/reference"

	"github.com/pullpath/pullpath/internal/keychain"
	"github.com/pullpath/pullpath/internal/netpath"
	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/registry"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Blob modes.
const (
	BlobsFull = "full" // GET every blob and verify its digest (a fresh full pull)
	BlobsHead = "head" // HEAD every blob
	BlobsNone = "none" // stop after the manifest
)

// Options configure a probe. The zero value probes from / with defaults.
type Options struct {
	Root         string // node root; default "/"
	HostsDir     string // containerd certs.d; default <root>/etc/containerd/certs.d
	Platform     string // os/arch[/variant]; default the running platform
	Creds        *registry.Credentials
	DockerConfig string // docker config.json to take credentials from
	PullSecret   string // Kubernetes Secret (dockerconfigjson) to take credentials from
	Blobs        string // full | head | none; default full
	Jobs         int    // parallel blob downloads; default 4
	Timeout      time.Duration
	Deadline     time.Duration // whole run; default 10m
	DNSPort      int           // nameserver port; default 53
	// PodNamespace is the namespace of the pod whose pull is probed (the
	// CRI sandbox config's; diagnose --probe passes it): CRI-O reads the
	// namespace's auth file and signature policy with it. Empty: unknown.
	PodNamespace string
	// RuntimeVersion is the runtime's version as the node's status
	// reports it (diagnose passes containerRuntimeVersion,
	// "containerd://1.7.27-k3s1"); it beats the version read from files.
	RuntimeVersion string
	// NoNodeDockerConfig leaves out the kubelet's node docker config files
	// under Root (/var/lib/kubelet/config.json, /.docker/config.json, …),
	// which the kubelet's keyring holds and the probe reads by default.
	NoNodeDockerConfig bool
	// NodeOS is the node's GOOS when Root is another system's copy
	// (runtimecfg.Options.NodeOS); "" is this machine's.
	NodeOS string
	// CRIVersion, when set (the full binary, which links a CRI client),
	// asks the running runtime for its version over the CRI socket under
	// Root; it returns the socket and the "name://version" answer.
	CRIVersion func(ctx context.Context, root string) (socket, version string, err error)
	// Proxy overrides the proxy environment read from containerd's
	// service under Root. The default is what the node's unit sets.
	Proxy *nodeview.Proxy
	// Progress is told the bytes done and the total expected, as they arrive.
	Progress func(done, total int64)
	// AsKubelet runs the kubelet's credential providers (read under Root)
	// for the image and pulls with what they return (kubelet.go). The
	// default (nil) does so when the node has a provider config and no
	// other credentials are given.
	AsKubelet *bool
	// ProviderTimeout is the deadline of one provider run. The default is
	// the kubelet's, one minute.
	ProviderTimeout time.Duration
	// ProviderCache, when set, keeps the providers' answers across probes
	// for their cacheDuration, as the kubelet does (the monitor agent
	// shares one); nil runs the providers on every probe.
	ProviderCache *nodeview.ProviderCache
	// ServiceAccount, when set, gives the pod service account a provider
	// with tokenAttributes (KEP-4412) is run for, with a token for the
	// audience the provider's config names (probe --service-account).
	ServiceAccount func(ctx context.Context, audience string) (*nodeview.ServiceAccount, error)
	// Memo, when set, keeps tokens and manifests from one probe to the
	// next, counts the registry requests and holds Retry-After (the
	// monitor agent's cheap rounds; registry/memo.go).
	Memo *registry.Memo
	// Walk, with Memo, also walks DNS, route and TLS to every host an
	// earlier pull from the same plan host touched (the token realm, the
	// blob host) that this probe did not reach, so that a probe served
	// from the Memo still sees the node's path to each of them.
	Walk bool
	// Spread, when positive, spaces the blob requests evenly over this
	// window (the i-th of n starts at i/n of it) instead of sending them
	// as fast as Jobs allows: the monitor's pool rounds set it so that
	// one node's blob round is not a burst at the registry. Zero (the
	// probe command) does not wait.
	Spread time.Duration
}

func (o *Options) defaults() {
	if o.Root == "" {
		o.Root = "/"
	}
	if o.Platform == "" {
		o.Platform = runtime.GOOS + "/" + runtime.GOARCH
	}
	if o.Blobs == "" {
		o.Blobs = BlobsFull
	}
	if o.Jobs <= 0 {
		o.Jobs = 4
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.Deadline <= 0 {
		o.Deadline = 10 * time.Minute
	}
}

// Run probes the pull path of image and always returns a report; its
// verdict says where the path breaks. It returns an error only for options
// that make no sense (e.g. an unknown blob mode).
func Run(ctx context.Context, image string, o Options) (*Report, error) {
	o.defaults()
	switch o.Blobs {
	case BlobsFull, BlobsHead, BlobsNone:
	default:
		return nil, fmt.Errorf("unknown blob mode %q (want full, head or none)", o.Blobs)
	}
	if fi, err := os.Stat(o.Root); err != nil || !fi.IsDir() {
		if err == nil {
			err = fmt.Errorf("not a directory")
		}
		return nil, fmt.Errorf("the node root %s: %w", o.Root, err)
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, o.Deadline)
	defer cancel()
	p := &prober{o: o, rep: &Report{Image: image, Root: o.Root, Platform: o.Platform, Started: time.Now().UTC(),
		Plan: []PlanHost{}, Endpoints: []Endpoint{}, Blobs: []Blob{}, Warnings: []verdict.Warning{}}}
	err := p.run(ctx, image)
	if ie := interrupted(parent); ie != nil {
		p.rep.Interrupted, err = true, ie
	}
	p.finish(err)
	redactReport(p.rep, p.known())
	return p.rep, nil
}

type prober struct {
	o           Options
	rep         *Report
	tr          *tracer
	skipped     []string
	sessions    []*registry.Session
	creds       *registry.Credentials
	mirrorCreds []*registry.Credentials
	// providerSecrets are what the kubelet's credential providers returned
	// (kubelet.go), held every credential of the kubelet's keychain for
	// the image (creds.go): the redactor removes them all.
	providerSecrets []string
	held            []*keychain.Credential
	// runtimeCreds is the runtime's own credential (config.toml's
	// registry.configs auth, CRI-O's auth file) that the host which
	// answered the last pull, or whose failure is the verdict, was
	// presented because the kubelet sent none; nil when there is none.
	runtimeCreds *registry.Credentials
	// node and keys are the node keyring and the keychain, read once
	// (nodeDocker, kubelet).
	node *nodeDocker
	keys *keychain.Kubelet
}

func (p *prober) finish(err error) {
	r := p.rep
	if p.tr != nil {
		r.Endpoints = p.tr.endpoints()
		r.Warnings = append(r.Warnings, p.tr.warnings...)
	}
	r.Millis = time.Since(r.Started).Milliseconds()
	if err == nil {
		var bytes int64
		hosts := map[string]bool{}
		for _, b := range r.Blobs {
			bytes += b.Bytes
			if b.Host != "" {
				hosts[b.Host] = true
			}
		}
		s := fmt.Sprintf("The pull path works: manifest from %s", r.ServedBy)
		switch p.o.Blobs {
		case BlobsFull:
			s += fmt.Sprintf(", %d blobs (%s) downloaded and verified from %s", len(r.Blobs), HumanBytes(bytes), strings.Join(slices.Sorted(maps.Keys(hosts)), ", "))
		case BlobsHead:
			s += fmt.Sprintf(", %d blobs checked with HEAD (not downloaded)", len(r.Blobs))
		default:
			s += "; blobs not checked (--blobs none)"
		}
		r.Verdict = verdict.OKVerdict(s + ".")
		if len(r.Warnings) > 0 {
			r.Verdict.Next = append(r.Verdict.Next, fmt.Sprintf("Works today, but read the %d warning(s): they will break or mislead later.", len(r.Warnings)))
		}
		return
	}
	ve, ok := verdict.AsError(err)
	if !ok {
		ve = verdict.Wrap(verdict.CodeUnknown, verdict.RoleNone, "", err)
	}
	v := verdict.FromError(ve)
	if v.Layer == verdict.LayerAuth || v.Layer == verdict.LayerAuthz {
		id := "anonymous"
		if r.Identity != "" {
			id = r.Identity
		}
		v.Next = append(v.Next, fmt.Sprintf("Identity used: %s; scope requested: repository:%s:pull.", id, repoOf(r.Reference)))
		if n := p.unseenNodeDockerConfig(); n != "" && id == "anonymous" {
			v.Next = append(v.Next, n)
		}
	}
	if len(p.skipped) > 0 {
		v.Next = append(v.Next, "Not reached: "+strings.Join(p.skipped, "; ")+".")
	}
	r.Verdict = v
}

func repoOf(ref string) string {
	if n, err := reference.ParseNormalizedNamed(ref); err == nil {
		return reference.Path(n)
	}
	return ref
}

func (p *prober) run(ctx context.Context, image string) error {
	r := p.rep
	// 0. The reference, normalised as the CRI plugin does (docker.io/library/...).
	img, err := ParseImage(image)
	if err != nil {
		return err
	}
	r.Reference = img.Normalized
	domain, repo, ref := img.Domain, img.Repository, img.Ref

	// 1. The node's view.
	var vopts []nodeview.Option
	if p.o.HostsDir != "" {
		vopts = append(vopts, nodeview.WithHostsDir(p.o.HostsDir))
	}
	view, err := nodeview.Load(p.o.Root, vopts...)
	if err != nil {
		p.skipped = append(p.skipped, "every network step")
		return err
	}
	r.Warnings = append(r.Warnings, view.Warnings...)
	if w, ok := podView(view); ok {
		r.Warnings = append(r.Warnings, w)
	}
	for _, pr := range view.Problems {
		r.Warnings = append(r.Warnings, verdict.Warning{Code: pr.Cause, Endpoint: pr.Endpoint, Message: problemMessage(pr)})
	}
	// A query waits as long as the node's resolver would (resolv.conf
	// timeout), never longer than a step may.
	dnsTimeout := p.o.Timeout
	if t := view.Resolv.Timeout; t > 0 && t < dnsTimeout {
		dnsTimeout = t
	}
	p.tr = newTracer(&netpath.Resolver{View: view, Timeout: dnsTimeout, Port: p.o.DNSPort}, p.o.Timeout)
	p.tr.proxy = view.Proxy
	p.tr.curves, p.tr.helloNote = view.Runtime.ClientHelloCurves()
	if p.o.Proxy != nil {
		p.tr.proxy = *p.o.Proxy
	}
	if p.tr.proxy.Set() {
		r.Proxy = &ProxyInfo{HTTPSProxy: registry.RedactURL(p.tr.proxy.HTTPSProxy), HTTPProxy: registry.RedactURL(p.tr.proxy.HTTPProxy), NoProxy: p.tr.proxy.NoProxy, Sources: p.tr.proxy.Sources}
	}

	// 2. The credentials the kubelet would send, in its order: one pull
	// each (internal/keychain; kubelet.go runs the credential providers).
	attempts, err := p.kubeletIdentity(ctx, img)
	if err != nil {
		return err
	}
	creds := attempts[0].creds
	r.Identity = creds.Describe()
	p.creds = creds

	// 3. The plan: the hosts the node's runtime would try, in its order,
	// from its own configuration (runtimecfg.go).
	hosts, err := p.runtimeHosts(ctx, view, image, domain, ref)
	if err != nil {
		if _, ok := verdict.AsError(err); !ok {
			err = verdict.Wrap(verdict.CodeConfigHostsTOML, verdict.RoleNone, "", err)
		}
		return err
	}
	var plan []planned
	plainHTTP := plainHosts(hosts)
	for _, h := range hosts {
		role := verdict.RoleRegistry
		if h.Mirror {
			role = verdict.RoleMirror
		}
		r.Plan = append(r.Plan, PlanHost{Host: h.Host, Scheme: h.Scheme, Path: h.Path, Role: role, Capabilities: h.Capabilities, SkipVerify: h.SkipVerify, CAFiles: h.CAFiles})
		if !hasCap(h.Capabilities, "resolve") && !hasCap(h.Capabilities, "pull") {
			continue
		}
		p.tr.setRole(h.Host, role)
		for _, w := range h.Warnings {
			if w.Endpoint == "" {
				w.Endpoint = registry.Endpoint(h.Scheme, h.Host)
			}
			p.tr.warn(w)
		}
		pl := planned{host: h, role: role, client: p.client(h, plainHTTP), smallMSS: p.smallMSSClient(h, plainHTTP), plain: plainHTTP}
		if h.Mirror && h.Host != domain && !attempts[0].reachesMirrors() {
			if pl.mirrorCreds, err = p.mirrorCredentials(h, domain, repo, creds); err != nil {
				return err
			}
		}
		plan = append(plan, pl)
	}
	if len(plan) == 0 {
		return verdict.Errorf(verdict.CodeConfigHostsTOML, verdict.RoleNone, "", "no host in the registry configuration for %s may resolve or pull", domain)
	}
	p.routeCredentials(hosts, domain, repo, attempts[0])

	// 4-6, once for each credential the kubelet would try (kubeletcreds.go).
	err = p.tryEach(attempts, func(a attempt) error {
		return p.pull(ctx, plan, domain, repo, ref, a.creds, a.reachesMirrors())
	})
	if c := p.runtimeCreds; c != nil {
		// The kubelet sent no credential and the runtime presented its
		// own: the report names that one, not "anonymous".
		r.Identity = c.Describe()
	}
	if err == nil && p.o.Walk {
		err = p.walk(ctx, plan)
	}
	return err
}

// walk dials (DNS, route, TLS) every host an earlier pull from a plan host
// touched and this one did not: with a kept token and manifest the token
// realm and the blob host get no request, but the node's path to them is
// still checked every probe.
func (p *prober) walk(ctx context.Context, plan []planned) error {
	reached := map[string]bool{}
	for _, ep := range p.tr.endpoints() {
		reached[net.JoinHostPort(ep.Host, strconv.Itoa(ep.Port))] = true
	}
	for _, pl := range plan {
		hosts := p.o.Memo.Hosts(pl.host.Host)
		for _, endpoint := range registry.SortedHosts(hosts) {
			u, err := url.Parse(endpoint)
			if err != nil || reached[u.Host] {
				continue
			}
			reached[u.Host] = true
			p.tr.setRole(u.Host, verdict.Role(hosts[endpoint]))
			var tlsCfg *tls.Config
			if u.Scheme == "https" {
				if tlsCfg = pl.host.TLS; tlsCfg == nil {
					tlsCfg = &tls.Config{MinVersion: tls.VersionTLS12}
				}
			}
			conn, err := p.tr.dial(ctx, u.Host, tlsCfg)
			if err != nil {
				if _, ok := verdict.AsError(err); !ok {
					err = verdict.Wrap(verdict.CodeRouteUnreachable, verdict.Role(hosts[endpoint]), endpoint, err)
				}
				return err
			}
			conn.Close()
		}
	}
	return nil
}

// planned is one host of the plan that may resolve or pull, with the HTTP
// client every attempt shares (a later credential reuses its connections
// rather than dialling again).
type planned struct {
	host        nodeview.RegistryHost
	role        verdict.Role
	client      *http.Client
	smallMSS    registry.SmallMSSClient
	plain       func(host string) bool
	mirrorCreds *registry.Credentials // a mirror's own; nil for the registry itself
}

// pull is steps 4 to 6 of run with creds for the registry host; mirrors
// get them too when toMirrors (the kubelet's AuthConfig in containerd),
// else only their own (mirrorCredentials).
func (p *prober) pull(ctx context.Context, plan []planned, domain, repo, ref string, creds *registry.Credentials, toMirrors bool) error {
	r := p.rep
	p.runtimeCreds = nil
	var sessions []*registry.Session
	for _, pl := range plan {
		hostCreds := creds
		if pl.host.Mirror && pl.host.Host != domain && !toMirrors {
			hostCreds = pl.mirrorCreds
		}
		if creds.Anonymous() {
			// No AuthConfig: containerd uses config.toml's
			// registry.configs."<host>".auth (k3s, Bottlerocket).
			if c := p.configAuthCreds(pl.host.Host); c != nil {
				hostCreds = c
			} else if c := p.crioAuthCreds(pl.host.Host); c != nil {
				// CRI-O: the auth file of the pull (namespaced
				// file, else global_auth_file).
				hostCreds = c
			}
		}
		h := pl.host
		hostRepo, ns := repo, domain
		if h.Repo != "" {
			hostRepo = h.Repo
		}
		if h.NoNamespace {
			ns = ""
		}
		header, tokenHeader := p.runtimeConfig().Headers(h.Header)
		s := &registry.Session{
			Client:    pl.client,
			Host:      registry.Host{Host: h.Host, Scheme: h.Scheme, Path: h.Path, Role: pl.role, Namespace: ns, Header: header, TokenHeader: tokenHeader},
			Repo:      hostRepo,
			Creds:     hostCreds,
			OnRole:    p.tr.setRole,
			Timeout:   p.o.Timeout,
			PlainHTTP: pl.plain,
			OnWarning: p.tr.foreign,
			SmallMSS:  pl.smallMSS,
			Memo:      p.o.Memo,
		}
		if a := header.Get("Authorization"); a != "" {
			p.tr.setHeaderAuth(h.Host, a)
		}
		sessions = append(sessions, s)
		p.sessions = append(p.sessions, s)
	}
	defer func() {
		// A host that refused the hosts.toml header and was then
		// answered with the pull's credentials (containerd's authorizer
		// does the same): the header is stale.
		for _, s := range sessions {
			if s.HeaderRejected() && !s.Creds.Anonymous() {
				p.tr.warn(verdict.Warning{Code: verdict.CodeAuthHostsHeaderRetried, Endpoint: registry.Endpoint(s.Host.Scheme, s.Host.Host),
					Message: fmt.Sprintf("%s rejected the Authorization header hosts.toml sets for it (401); containerd then answers its challenge with the pull's credential (%s), as the probe did", s.Host.Host, s.Creds.Describe())})
			}
		}
	}()

	// 4. Resolve: HEAD the manifest on each host that may serve it, in
	// order, until one answers (containerd's "trying next host"). As in
	// containerd's resolver, a tag needs the pull and resolve capabilities,
	// a digest only pull.
	byDigest := strings.HasPrefix(ref, "sha256:") || strings.HasPrefix(ref, "sha512:")
	var sess *registry.Session
	var desc registry.Descriptor
	var errs []*verdict.Error
	var tried []*registry.Session // tried[i] answered errs[i]
	var failedMirrors []*verdict.Error
	// presented notes the runtime's own credential of the session s when
	// the kubelet's request carried none.
	presented := func(s *registry.Session) {
		if creds.Anonymous() && !s.Creds.Anonymous() {
			p.runtimeCreds = s.Creds
		}
	}
	for i, pl := range plan {
		caps := pl.host.Capabilities
		if !hasCap(caps, "pull") || (!byDigest && !hasCap(caps, "resolve")) {
			continue
		}
		s := sessions[i]
		d, err := s.Resolve(ctx, ref)
		if err == nil {
			sess, desc = s, d
			break
		}
		ve := asVerdictError(err, s)
		errs, tried = append(errs, ve), append(tried, s)
		if s.Host.Role == verdict.RoleMirror {
			failedMirrors = append(failedMirrors, ve)
		}
	}
	if sess == nil {
		p.skipped = append(p.skipped, "manifest", "blobs")
		if len(errs) == 0 {
			return verdict.Errorf(verdict.CodeConfigHostsTOML, verdict.RoleNone, "", "no host in the registry configuration for %s has the capabilities to serve this reference (a tag needs pull and resolve, a digest pull)", domain)
		}
		fail := verdict.Furthest(errs...)
		if p.runtimeName() == "CRI-O" {
			fail = p.crioFailure(errs, failedMirrors)
		}
		for i, e := range errs {
			if e == fail {
				presented(tried[i])
			}
		}
		return fail
	}
	presented(sess)
	r.ServedBy = registry.Endpoint(sess.Host.Scheme, sess.Host.Host)
	p.markServed()
	for _, m := range failedMirrors {
		p.tr.warn(verdict.Warning{Code: verdict.CodeMirrorUnreachable, Endpoint: m.Endpoint,
			Message: fmt.Sprintf("the mirror failed (%s) and the pull fell back to %s; %s pays this failure on every pull", m.Cause, r.ServedBy, p.runtimeName())})
	}

	// 5. The manifest, and the node's platform in an index.
	data, mt, err := sess.Manifest(ctx, desc)
	if err != nil {
		p.skipped = append(p.skipped, "blobs")
		return err
	}
	if registry.IsIndex(mt) {
		pd, offered, err := registry.SelectPlatform(data, p.o.Platform)
		if err != nil {
			p.skipped = append(p.skipped, "blobs")
			if len(offered) > 0 || strings.Contains(err.Error(), "no match") {
				return verdict.Errorf(verdict.CodeManifestPlatform, sess.Host.Role, r.ServedBy, "no manifest for %s in the index (offers %s)", p.o.Platform, strings.Join(offered, ", "))
			}
			return verdict.Wrap(verdict.CodeManifestInvalid, sess.Host.Role, r.ServedBy, err)
		}
		data, mt, err = sess.Manifest(ctx, pd)
		if err != nil {
			p.skipped = append(p.skipped, "blobs")
			return err
		}
	}
	if !registry.IsManifest(mt) && mt != "" && !strings.Contains(mt, "manifest") {
		return verdict.Errorf(verdict.CodeManifestInvalid, sess.Host.Role, r.ServedBy, "unsupported manifest media type %q", mt)
	}
	blobs, err := registry.Layers(data)
	if err != nil {
		return verdict.Wrap(verdict.CodeManifestInvalid, sess.Host.Role, r.ServedBy, err)
	}

	// 6. Every blob: config first, then the layers, in parallel.
	if p.o.Blobs == BlobsNone {
		for _, b := range blobs {
			r.Blobs = append(r.Blobs, Blob{Digest: b.Digest.String(), Size: b.Size, MediaType: b.MediaType})
		}
		return nil
	}
	if rc := r.RuntimeConfig; rc != nil && rc.Config != nil {
		// The runtime's layer fetch: parallel Range requests when
		// concurrent_layer_fetch_buffer is set (containerd 2.1+).
		sess.RangeChunk = int64(rc.RangeChunk())
	}
	return p.fetchBlobs(ctx, sess, blobs)
}

func asVerdictError(err error, s *registry.Session) *verdict.Error {
	if ve, ok := verdict.AsError(err); ok {
		return ve
	}
	return verdict.Wrap(verdict.CodeRegistryProtocol, s.Host.Role, registry.Endpoint(s.Host.Scheme, s.Host.Host), err)
}

func (p *prober) fetchBlobs(ctx context.Context, sess *registry.Session, blobs []registry.Descriptor) error {
	r := p.rep
	var total int64
	for _, b := range blobs {
		total += b.Size
	}
	var done atomic.Int64
	progress := func(n int64) {
		if p.o.Progress != nil {
			p.o.Progress(done.Add(n), total)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]Blob, len(blobs))
	errs := make([]error, len(blobs))
	var failedAt atomic.Int64
	failedAt.Store(-1)
	// A fixed pool of Jobs workers: a manifest may list tens of thousands
	// of layers, and a goroutine per blob would cost a stack each.
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(p.o.Jobs, len(blobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				b := blobs[i]
				if ctx.Err() != nil {
					results[i].Error = "skipped: blocked by an earlier failure"
					continue
				}
				res, err := sess.Blob(ctx, b, p.o.Blobs == BlobsHead, progress)
				results[i].Host, results[i].Bytes, results[i].Verified, results[i].Millis = res.Host, res.Bytes, res.Verified, ms(res.Duration)
				results[i].Ranges, results[i].RangeIgnored = res.Ranges, res.RangeIgnored
				if err != nil {
					if ctx.Err() != nil && failedAt.Load() >= 0 {
						results[i].Error = "skipped: cancelled after an earlier failure"
						continue
					}
					errs[i] = err
					results[i].Error = err.Error()
					failedAt.CompareAndSwap(-1, int64(i))
					cancel()
				}
			}
		}()
	}
	for i, b := range blobs {
		results[i] = Blob{Digest: b.Digest.String(), Size: b.Size, MediaType: b.MediaType}
	}
	start := time.Now()
	for i := range blobs {
		if wait := time.Until(start.Add(p.o.Spread * time.Duration(i) / time.Duration(len(blobs)))); wait > 0 && ctx.Err() == nil {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
			case <-t.C:
			}
		}
		if ctx.Err() != nil {
			results[i].Error = "skipped: blocked by an earlier failure"
			continue
		}
		next <- i
	}
	close(next)
	wg.Wait()
	r.Blobs = results
	if i := failedAt.Load(); i >= 0 {
		return errs[i]
	}
	return nil
}

// client builds the HTTP client containerd would use for one plan host: its
// TLS settings also apply to every redirect target (REFERENCE 0.3).
func (p *prober) client(h nodeview.RegistryHost, plain func(host string) bool) *http.Client {
	return p.clientMSS(h, plain, false)
}

// clientMSS is client; with smallMSS every connection is dialled with a
// small TCP MSS for the path-MTU test (mtu.go) and its steps say so.
func (p *prober) clientMSS(h nodeview.RegistryHost, plain func(host string) bool, smallMSS bool) *http.Client {
	tlsCfg := h.TLS
	if tlsCfg == nil {
		tlsCfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	base := &http.Transport{
		Proxy:                 nil, // tr.dial tunnels through containerd's proxy itself, so the proxy is a step of the trace
		MaxIdleConnsPerHost:   p.o.Jobs + 2,
		ResponseHeaderTimeout: 3 * p.o.Timeout,
		IdleConnTimeout:       30 * time.Second,
		DisableCompression:    true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if smallMSS {
				return p.tr.dialSmallMSS(ctx, addr, nil)
			}
			return p.tr.dial(ctx, addr, nil)
		},
		DialTLSContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if smallMSS {
				return p.tr.dialSmallMSS(ctx, addr, tlsCfg)
			}
			return p.tr.dial(ctx, addr, tlsCfg)
		},
	}
	policy := registry.CheckRedirect(plain, func(host string) verdict.Role {
		hn, port, err := net.SplitHostPort(host)
		if err != nil {
			hn, port = host, "443"
		}
		return p.tr.roleOf(hn, port)
	})
	rec := &recorder{inner: base, t: p.tr}
	if smallMSS {
		rec.note = fmt.Sprintf(" (TCP_MAXSEG %d)", netpath.SmallMSS)
	}
	return &http.Client{
		Transport: rec,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if err := policy(req, via); err != nil {
				p.tr.refused(via[len(via)-1], req, err)
				return err
			}
			if req.URL.Host != via[0].URL.Host {
				p.tr.setRole(req.URL.Host, verdict.RoleBlob)
			}
			return nil
		},
	}
}

// plainHosts is the set of hosts the node's hosts.toml declares plain-http:
// the only hosts credentials may reach in cleartext (containerd's rule).
func plainHosts(hosts []nodeview.RegistryHost) func(host string) bool {
	plain := map[string]bool{}
	for _, h := range hosts {
		if h.Scheme == "http" {
			plain[h.Host] = true
			plain[registry.Endpoint("http", h.Host)] = true
		}
	}
	return func(host string) bool { return plain[host] || plain[registry.Endpoint("http", host)] }
}

func hasCap(caps []string, c string) bool {
	if len(caps) == 0 {
		return true
	}
	for _, x := range caps {
		if x == c {
			return true
		}
	}
	return false
}

// HumanBytes renders a byte count for a person.
func HumanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// podView warns when the resolver the probe reads is a pod's cluster DNS
// (ClusterFirst: search domains under cluster.local), not the node's: the
// runtime pulls with the node's resolver, so a pod's proves nothing about
// the pull.
func podView(v *nodeview.View) (verdict.Warning, bool) {
	for _, d := range v.Resolv.Search {
		if strings.HasSuffix(strings.TrimSuffix(d, "."), "svc.cluster.local") {
			return verdict.Warning{Code: verdict.CodeProbePodView,
				Message: "the resolv.conf read is a pod's cluster DNS (search " + d + "), not the node's: the runtime pulls with the node's network namespace and resolver. Run the probe with hostNetwork and --root pointing at the host's /etc (pullpath diagnose --probe does this)"}, true
		}
	}
	return verdict.Warning{}, false
}

// Image is an image reference normalised as the CRI plugin does it.
type Image struct {
	Normalized string // docker.io/library/ubuntu:latest
	Domain     string // the registry name containerd looks up in certs.d (docker.io)
	Repository string // library/ubuntu
	Ref        string // the tag, or the digest when there is one
}

// ParseImage normalises an image reference the way containerd's CRI
// plugin does (reference.ParseDockerRef: docker.io/library/ for bare names,
// :latest when there is neither tag nor digest, the digest winning over a
// tag). A malformed reference is a config.reference error.
func ParseImage(image string) (Image, error) {
	if len(image) > 4096 {
		return Image{}, verdict.Errorf(verdict.CodeConfigReference, verdict.RoleNone, "", "image reference is %d bytes long", len(image))
	}
	named, err := reference.ParseDockerRef(image)
	if err != nil {
		return Image{}, verdict.Wrap(verdict.CodeConfigReference, verdict.RoleNone, "", fmt.Errorf("parsing image reference %q: %w", image, err))
	}
	img := Image{Normalized: named.String(), Domain: reference.Domain(named), Repository: reference.Path(named)}
	if err := checkHostname(img.Domain); err != nil {
		return Image{}, verdict.Wrap(verdict.CodeConfigReference, verdict.RoleNone, "", fmt.Errorf("parsing image reference %q: %w: no resolver was asked", image, err))
	}
	if c, ok := named.(reference.Canonical); ok {
		img.Ref = c.Digest().String()
	} else if t, ok := named.(reference.Tagged); ok {
		img.Ref = t.Tag()
	}
	return img, nil
}
