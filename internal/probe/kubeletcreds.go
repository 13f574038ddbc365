package probe

import (
	"fmt"
	"strings"

	"github.com/pullpath/pullpath/internal/keychain"
	"github.com/pullpath/pullpath/internal/registry"
	"github.com/pullpath/pullpath/internal/verdict"
)

// attempt is one pull the kubelet makes: one CRI AuthConfig from its
// keychain (internal/keychain), or none.
type attempt struct {
	// creds is what the registry host is presented; anonymous when empty.
	creds *registry.Credentials
	// cred is the kubelet's credential (source and key); nil when the
	// kubelet sends no AuthConfig.
	cred *keychain.Credential
	// info are the credential provider's facts while the attempt runs,
	// nil for a credential of another source.
	info *CredentialProvider
	// anonymous says why the kubelet has no credential; cause is set when
	// a credential provider failed to give one (then the registry's
	// refusal of the anonymous pull is that provider's failure).
	anonymous string
	cause     *verdict.Error
}

// reachesMirrors reports whether containerd presents the attempt's
// credential to the mirrors of the plan as well as to the registry: it
// does for every credential of the kubelet's keychain (an AuthConfig with
// no server_address, containerd 1.6 ParseAuth; measured in
// test/netlab TestCredentialRouting). Credentials given to the probe
// directly (--username) are for the registry alone.
func (a attempt) reachesMirrors() bool {
	return a.cred != nil && a.cred.ServerAddress == "" && a.cred.Source.Kind != keychain.KindGiven && !a.creds.Anonymous()
}

// name identifies the credential without its secret.
func (a attempt) name() string {
	switch {
	case a.info != nil && a.info.Provider != "":
		return a.info.Provider + " under " + a.info.MatchedKey
	case a.cred != nil:
		return a.cred.Name()
	case a.creds != nil && !a.creds.Anonymous():
		return a.creds.Describe()
	}
	return "anonymous"
}

// explain is the attempt's own failure: an anonymous pull the registry
// refused because a credential provider gave nothing fails with the
// provider's cause, at the place the refusal happened.
func (a attempt) explain(ve *verdict.Error) *verdict.Error {
	if a.cause == nil || ve.Cause != verdict.CodeAuthNoCredentials {
		return ve
	}
	out := *a.cause
	out.Layer = verdict.LayerOf(out.Cause)
	out.Role, out.Endpoint = ve.Role, ve.Endpoint
	out.Detail = a.cause.Detail + "; the anonymous pull then failed: " + ve.Error()
	return &out
}

// use makes the attempt the one the report describes.
func (p *prober) use(a attempt) {
	p.rep.Identity = a.creds.Describe()
	if a.info != nil && p.rep.CredentialProvider != nil {
		*p.rep.CredentialProvider = *a.info
	}
}

// tryEach does what the kubelet does with the credentials it holds for an
// image (kuberuntime_image.go PullImage: with none it pulls once without an
// AuthConfig; otherwise, for each credential in turn, it asks the runtime
// to pull, returns on the first success, and else returns
// utilerrors.NewAggregate of every pull error): pull runs one attempt.
// The verdict is the failure furthest along the pull path
// (verdict.Furthest), the first among equals.
//
// The probe stops early only where the kubelet's further attempts cannot
// differ: a failure before any credential is sent (DNS, route, TLS); a
// warning says so.
func (p *prober) tryEach(attempts []attempt, pull func(attempt) error) error {
	var errs []*verdict.Error
	var which []int
	for i, a := range attempts {
		if i > 0 {
			r := p.rep
			p.skipped, r.Blobs, r.ServedBy = nil, []Blob{}, ""
		}
		p.use(a)
		err := pull(a)
		if err == nil {
			return nil
		}
		ve, ok := verdict.AsError(err)
		if !ok {
			return err
		}
		ve = a.explain(ve)
		errs, which = append(errs, ve), append(which, i)
		if len(attempts) < 2 {
			break
		}
		if !credentialDependent(ve) {
			if i < len(attempts)-1 {
				p.rep.Warnings = append(p.rep.Warnings, verdict.Warning{Code: verdict.CodeAuthProviderSeveralCredentials, Endpoint: ve.Endpoint,
					Message: fmt.Sprintf("the kubelet tries its %d other credentials too; the probe does not: the pull failed at %s (%s) before a credential could matter, and they fail the same way", len(attempts)-1-i, ve.Layer, ve.Cause)})
			}
			break
		}
		p.rep.Warnings = append(p.rep.Warnings, verdict.Warning{Code: ve.Cause, Endpoint: ve.Endpoint,
			Message: fmt.Sprintf("credential %d of %d (%s) failed: %s%s", i+1, len(attempts), a.name(), errText(ve), thenNext(i+1, len(attempts)))})
	}
	best := verdict.Furthest(errs...)
	if len(errs) > 1 {
		var causes []string
		for i, e := range errs {
			causes = append(causes, fmt.Sprintf("%d. %s", i+1, e.Cause))
		}
		p.rep.Warnings = append(p.rep.Warnings, verdict.Warning{Code: verdict.CodeAuthProviderSeveralCredentials,
			Message: fmt.Sprintf("every credential the kubelet holds failed (%s); the kubelet's error lists them all, the verdict is the one furthest along the pull path", strings.Join(causes, ", "))})
	}
	for i, e := range errs {
		if e == best {
			p.use(attempts[which[i]])
		}
	}
	return best
}

// errText is what a failed attempt's warning quotes of e (redacted with
// the report, as every warning is).
func errText(e *verdict.Error) string {
	switch {
	case e.Err == nil:
		return e.Detail
	case e.Detail == "":
		return e.Err.Error()
	}
	return e.Detail + ": " + e.Err.Error()
}

func thenNext(i, n int) string {
	if i < n {
		return "; the kubelet tries the next"
	}
	return ""
}

// credentialDependent reports whether another credential could change e:
// the registry or its realm answered about the identity or the repository.
func credentialDependent(e *verdict.Error) bool {
	switch e.Layer {
	case verdict.LayerAuth, verdict.LayerAuthz:
		return true
	}
	return e.Cause == verdict.CodeManifestUnknown || e.Cause == verdict.CodeManifestNameUnknown
}
