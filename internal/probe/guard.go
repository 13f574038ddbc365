package probe

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/pullpath/pullpath/internal/keychain"
	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/redact"
	"github.com/pullpath/pullpath/internal/registry"
	"github.com/pullpath/pullpath/internal/runtimecfg"
	"github.com/pullpath/pullpath/internal/verdict"
)

// foreign records a warning of the registry session (a host reached by
// redirect named its own token realm) and shows it as its own step of
// that host, so the trace says where the anonymous token request went.
func (t *tracer) foreign(w verdict.Warning) {
	t.warn(w)
	host, port := splitEndpoint(w.Endpoint)
	p, _ := strconv.Atoi(port)
	ep := t.endpoint(host, p, t.roleOf(host, port))
	if !t.claim(ep, "auth-foreign") {
		return
	}
	t.addStep(ep, Step{Name: "auth", Target: "challenge from " + host, Status: StatusWarning, Cause: w.Code, Detail: w.Message})
}

// refused records a redirect the policy refused (a downgrade to plain http
// with credentials) as a failed step of the host that sent it.
func (t *tracer) refused(prev, next *http.Request, err error) {
	host, port := prev.URL.Hostname(), registry.PortOf(prev.URL)
	p, _ := strconv.Atoi(port)
	ep := t.endpoint(host, p, t.roleOf(host, port))
	st := Step{Name: "http", Target: "redirect → " + registry.RedactURL(next.URL.String()), Status: StatusFailed, Detail: redact.String(err.Error())}
	if ve, ok := verdict.AsError(err); ok {
		st.Cause = ve.Cause
	}
	t.addStep(ep, st)
}

func splitEndpoint(ep string) (string, string) {
	for i := len(ep) - 1; i >= 0; i-- {
		if ep[i] == ':' {
			h := ep[:i]
			if len(h) > 1 && h[0] == '[' && h[len(h)-1] == ']' {
				h = h[1 : len(h)-1]
			}
			return h, ep[i+1:]
		}
	}
	return ep, "443"
}

// known is the redactor for the secrets this probe holds: the password it
// was given and every token it was issued.
func (p *prober) known() *redact.Known {
	var secrets []string
	for _, s := range p.sessions {
		secrets = append(secrets, s.Secrets()...)
	}
	for _, c := range p.mirrorCreds {
		secrets = append(secrets, c.Password, registry.BasicAuth(c.Username, c.Password))
	}
	secrets = append(secrets, p.providerSecrets...)
	creds := []*registry.Credentials{p.creds}
	for _, h := range p.held {
		creds = append(creds, &registry.Credentials{Username: h.Username, Password: h.Password})
	}
	return knownFor(creds, secrets...)
}

func knownFor(creds []*registry.Credentials, secrets ...string) *redact.Known {
	var pairs [][2]string
	for _, c := range creds {
		if !c.Anonymous() {
			pairs = append(pairs, [2]string{c.Username, c.Password})
		}
	}
	return redact.NewKnown(secrets, pairs...)
}

// redactReport passes every free-text field of r that can hold bytes from
// the network (error bodies, status lines, challenge headers, redirect
// targets, runtime messages) through the one redactor before any renderer
// sees it, and removes the secrets the probe knows.
func redactReport(r *Report, k *redact.Known) {
	redactVerdict(&r.Verdict, k)
	for i := range r.Warnings {
		r.Warnings[i].Message = k.String(r.Warnings[i].Message)
	}
	for i := range r.Blobs {
		r.Blobs[i].Error = k.String(r.Blobs[i].Error)
	}
	for i := range r.Endpoints {
		for j := range r.Endpoints[i].Steps {
			st := &r.Endpoints[i].Steps[j]
			st.Target = k.String(st.Target)
			st.Detail = k.String(st.Detail)
			for key, v := range st.Facts {
				if s, ok := v.(string); ok {
					st.Facts[key] = k.String(s)
				}
			}
		}
	}
	if cp := r.CredentialProvider; cp != nil {
		cp.Stderr, cp.Error = k.String(cp.Stderr), k.String(cp.Error)
	}
	if r.Runtime != nil {
		r.Runtime.Error = k.String(r.Runtime.Error)
		r.Runtime.Note = k.String(r.Runtime.Note)
		if r.Runtime.Verdict != nil {
			redactVerdict(r.Runtime.Verdict, k)
		}
	}
}

func redactVerdict(v *verdict.Verdict, k *redact.Known) {
	v.Summary = k.String(v.Summary)
	v.Evidence = k.String(v.Evidence)
	for i := range v.Next {
		v.Next[i] = k.String(v.Next[i])
	}
}

// mirrorCredentials are the credentials the probe gives a mirror when the
// attempt's credential does not reach mirrors (attempt.reachesMirrors:
// credentials given with --username, or none): the entry of the docker
// config or pull secret that the kubelet's rule matches for the mirror's
// own repository, never those given for the registry. A credential of the
// kubelet's keychain goes to the mirrors as containerd 1.6 sends it (pull).
func (p *prober) mirrorCredentials(h nodeview.RegistryHost, domain, repo string, registryCreds *registry.Credentials) (*registry.Credentials, error) {
	var c *registry.Credentials
	if p.o.Creds == nil || p.o.Creds.Anonymous() {
		k, err := p.kubelet()
		if err != nil {
			return nil, err
		}
		for _, kc := range k.Resolve(h.Host + "/" + repo).Credentials {
			if !kc.Anonymous() {
				c = &registry.Credentials{Username: kc.Username, Password: kc.Password, Source: kc.Name()}
				p.held = append(p.held, &kc)
				break
			}
		}
	}
	if c != nil {
		p.mirrorCreds = append(p.mirrorCreds, c)
		return c, nil
	}
	if !registryCreds.Anonymous() {
		p.tr.warn(verdict.Warning{Code: verdict.CodeAuthMirrorCredentials, Endpoint: registry.Endpoint(h.Scheme, h.Host),
			Message: fmt.Sprintf("the probe asks the mirror %s anonymously: the credentials given are for %s and it sends them to no other host; containerd 1.6's CRI plugin does send them to the mirror (the kubelet's AuthConfig has no server_address), containers/image (CRI-O) does not. The plan shows what the node presents to each host", h.Host, domain)})
	}
	return &registry.Credentials{}, nil
}

// planHost adapts a host of containerd's plan to the keychain's Host.
type planHost struct{ h nodeview.RegistryHost }

func (x planHost) HostPort() string { return x.h.Host }
func (x planHost) IsMirror() bool   { return x.h.Mirror }

// routeCredentials writes, for each host of the plan, the credential the
// node's runtime presents there for the kubelet's first attempt
// (keychain.Route with the rule of the node's containerd version and pull
// path, and its own credentials: RuntimeRouting), and warns about a mirror asked anonymously although the registry has a
// credential.
func (p *prober) routeCredentials(hosts []nodeview.RegistryHost, domain, repo string, a attempt) {
	var in []keychain.Host
	for _, h := range hosts {
		in = append(in, planHost{h})
	}
	var cfg *runtimecfg.Config
	if p.rep.RuntimeConfig != nil {
		cfg = p.rep.RuntimeConfig.Config
	}
	rt, fb, notes := RuntimeRouting(cfg, p.o.Root, hosts)
	if rc := p.rep.RuntimeConfig; rc != nil && rc.Plan != nil && rc.Plan.CRIO != nil {
		// CRI-O: containers/image's rule, with the auth file of the pull.
		rt, fb = keychain.ContainersImage, rc.Plan.CRIO.AuthFallbacks()
	}
	for _, n := range notes {
		p.rep.Warnings = append(p.rep.Warnings, verdict.Warning{Code: verdict.CodeConfigAuthUnreadable, Message: n})
	}
	routes := keychain.Route(rt, domain, repo, in, a.cred, fb)
	for i := range p.rep.Plan {
		if i >= len(routes) {
			break
		}
		rt := routes[i]
		if rt.Credential == nil {
			why := rt.Why
			if a.anonymous != "" {
				why = "anonymous, because " + a.anonymous
			}
			p.rep.Plan[i].Credential = why
			continue
		}
		p.rep.Plan[i].Credential = rt.Presented() + " (" + rt.Why + ")"
		if r := rt.OnRejected; r != nil {
			next := "nothing"
			if r.Credential != nil {
				next = r.Credential.Name()
			}
			p.rep.Plan[i].Credential += "; if the host answers 401 to it: " + next + " (" + r.Why + ")"
		}
	}
	for _, n := range append(keychain.MirrorAnonymous(routes), keychain.HeaderNotes(routes, a.cred, cfg.HostHeadersOnTokens())...) {
		p.rep.Warnings = append(p.rep.Warnings, verdict.Warning{Code: n.Code, Message: n.Message})
	}
}
