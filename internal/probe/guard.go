package probe

import (
	"net/http"
	"strconv"

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

// redactReport passes every free-text field of r that can hold bytes from
// the network (error bodies, status lines, challenge headers, redirect
// targets, runtime messages) through the one redactor before any renderer
// sees it.
func redactReport(r *Report) {
	redactVerdict(&r.Verdict)
	for i := range r.Warnings {
		r.Warnings[i].Message = redact.String(r.Warnings[i].Message)
	}
	for i := range r.Blobs {
		r.Blobs[i].Error = redact.String(r.Blobs[i].Error)
	}
	for i := range r.Endpoints {
		for j := range r.Endpoints[i].Steps {
			st := &r.Endpoints[i].Steps[j]
			st.Target = redact.String(st.Target)
			st.Detail = redact.String(st.Detail)
			for k, v := range st.Facts {
				if s, ok := v.(string); ok {
					st.Facts[k] = redact.String(s)
				}
			}
		}
	}
	if r.Runtime != nil {
		r.Runtime.Error = redact.String(r.Runtime.Error)
		r.Runtime.Note = redact.String(r.Runtime.Note)
		if r.Runtime.Verdict != nil {
			redactVerdict(r.Runtime.Verdict)
		}
	}
}

func redactVerdict(v *verdict.Verdict) {
	v.Summary = redact.String(v.Summary)
	v.Evidence = redact.String(v.Evidence)
	for i := range v.Next {
		v.Next[i] = redact.String(v.Next[i])
	}
}
