package probe

import (
	"fmt"
	"strings"

	"github.com/pullpath/pullpath/internal/registry"
	"github.com/pullpath/pullpath/internal/verdict"
)

// kubeletCredential is one credential the kubelet's providers gave for the
// image, with the provider facts the report shows while it is in use.
type kubeletCredential struct {
	creds *registry.Credentials
	info  CredentialProvider
}

// name identifies the credential without its secret: provider and key.
func (k kubeletCredential) name() string {
	return k.info.Provider + " under " + k.info.MatchedKey
}

// nextCredentials does what the kubelet does when it holds several
// credentials for an image (kuberuntime_image.go PullImage: for each
// credential it asks the runtime to pull, returns on the first success, and
// otherwise returns utilerrors.NewAggregate of every pull error): while the
// pull with one credential failed, it pulls again with the next (retry
// re-runs only the resolve, manifest and blob steps, on the connections
// already open). Each failed attempt is a warning naming the credential.
//
// The kubelet retries whatever the error. The probe retries only failures
// a credential can change (the registry or its token realm refused it, or
// hid the repository behind a 404): a DNS, route or TLS failure happens
// before any credential is sent, and the kubelet's other attempts fail the
// same way (the aggregate removes repeated messages). A warning says so.
//
// When every credential fails, the kubelet's event lists all the errors
// ("[err1, err2]"). The verdict is the one furthest along the pull path,
// the first among equals (verdict.Furthest, as for containerd's hosts): a
// credential the registry accepted but denied says more than one it
// rejected; when all are rejected alike it is the first credential's.
func (p *prober) nextCredentials(err error, retry func(*registry.Credentials) error) error {
	held := p.kubeletHeld
	if err == nil || len(held) < 2 {
		return err
	}
	ve, ok := verdict.AsError(err)
	if !ok {
		return err
	}
	if !credentialDependent(ve) {
		p.rep.Warnings = append(p.rep.Warnings, verdict.Warning{Code: "auth.provider-several-credentials", Endpoint: ve.Endpoint,
			Message: fmt.Sprintf("the kubelet tries its %d other credentials too; the probe does not: the pull failed at %s (%s) before a credential could matter, and they fail the same way", len(held)-1, ve.Layer, ve.Cause)})
		return err
	}
	errs := []*verdict.Error{ve}
	for i := 1; i <= len(held); i++ {
		p.rep.Warnings = append(p.rep.Warnings, verdict.Warning{Code: ve.Cause, Endpoint: ve.Endpoint,
			Message: fmt.Sprintf("credential %d of %d (%s) failed: %s%s", i, len(held), held[i-1].name(), errText(ve), thenNext(i, len(held)))})
		if i == len(held) {
			break
		}
		r := p.rep
		p.skipped, r.Blobs, r.ServedBy = nil, []Blob{}, ""
		r.Identity, *r.CredentialProvider = held[i].creds.Describe(), held[i].info
		if err = retry(held[i].creds); err == nil {
			return nil
		}
		if ve, ok = verdict.AsError(err); !ok {
			return err
		}
		errs = append(errs, ve)
	}
	best := verdict.Furthest(errs...)
	var causes []string
	for i, e := range errs {
		causes = append(causes, fmt.Sprintf("%d. %s", i+1, e.Cause))
		if e == best {
			p.rep.Identity, *p.rep.CredentialProvider = held[i].creds.Describe(), held[i].info
		}
	}
	p.rep.Warnings = append(p.rep.Warnings, verdict.Warning{Code: "auth.provider-several-credentials",
		Message: fmt.Sprintf("every credential the kubelet holds failed (%s); the kubelet's error lists them all, the verdict is the one furthest along the pull path", strings.Join(causes, ", "))})
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
	return e.Cause == "manifest.unknown" || e.Cause == "manifest.name-unknown"
}
