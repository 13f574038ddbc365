package probe

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/redact"
	"github.com/pullpath/pullpath/internal/registry"
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
	host, port := prev.URL.Hostname(), prev.URL.Port()
	if port == "" {
		port = "443"
		if prev.URL.Scheme == "http" {
			port = "80"
		}
	}
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
	for _, h := range p.kubeletHeld {
		creds = append(creds, h.creds)
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

// mirrorCredentials are the credentials a mirror gets: its own entry in the
// docker config or pull secret, never those given for the registry (the
// contract's rule). When the pull has credentials for the registry and none
// for the mirror, a warning says so: containerd's CRI plugin would send the
// pod's credentials to the mirror too.
func (p *prober) mirrorCredentials(h nodeview.RegistryHost, domain string, registryCreds *registry.Credentials) (*registry.Credentials, error) {
	var c *registry.Credentials
	var err error
	switch {
	case p.o.PullSecret != "":
		c, err = LoadPullSecret(p.o.PullSecret, h.Host)
	case p.o.DockerConfig != "":
		c, err = LoadDockerConfig(p.o.DockerConfig, h.Host)
	}
	if err != nil {
		return nil, err
	}
	if c != nil && !c.Anonymous() {
		p.mirrorCreds = append(p.mirrorCreds, c)
		return c, nil
	}
	if !registryCreds.Anonymous() {
		p.tr.warn(verdict.Warning{Code: "auth.mirror-credentials", Endpoint: registry.Endpoint(h.Scheme, h.Host),
			Message: fmt.Sprintf("the mirror %s is asked anonymously: the credentials given are for %s and go to no other host; if the mirror needs credentials, add an entry for %s to the pull secret (containerd's CRI plugin sends the pod's credentials to mirrors as well)", h.Host, domain, h.Host)})
	}
	return &registry.Credentials{}, nil
}
