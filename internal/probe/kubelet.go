package probe

import (
	"context"
	"fmt"
	"strings"

	"github.com/pullpath/pullpath/internal/keychain"
	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/registry"
	"github.com/pullpath/pullpath/internal/verdict"
)

// CredentialProvider is what the probe learnt from the kubelet's credential
// providers for the image (probe --as-kubelet). No credential is in it.
type CredentialProvider struct {
	Config  string   `json:"config"`            // node path of --image-credential-provider-config
	BinDir  string   `json:"bin_dir,omitempty"` // --image-credential-provider-bin-dir
	Sources []string `json:"sources"`           // the node files the flags came from
	// Image is the image as the kubelet sends it in the request (the
	// repository without tag or digest).
	Image string `json:"image"`
	// Matched are the providers whose matchImages match Image, in order;
	// empty when none does (the kubelet then pulls anonymously).
	Matched []string `json:"matched"`
	// Provider is the one whose credentials the pull uses.
	Provider      string   `json:"provider,omitempty"`
	APIVersion    string   `json:"api_version,omitempty"`
	CacheKeyType  string   `json:"cache_key_type,omitempty"`
	CacheMillis   int64    `json:"cache_duration_ms,omitempty"`
	AuthKeys      []string `json:"auth_keys"`                // every key the provider returned
	MatchedKey    string   `json:"matched_key,omitempty"`    // the one the kubelet uses for Image
	Stderr        string   `json:"stderr,omitempty"`         // redacted
	Millis        int64    `json:"ms"`                       // the provider's run time
	Cached        bool     `json:"cached,omitempty"`         // the answer was kept from an earlier run (no run, ms 0)
	Error         string   `json:"error,omitempty"`          // why it gave nothing
	TokenAudience string   `json:"token_audience,omitempty"` // KEP-4412: the provider wants the pod's service account token
}

// kubeletIdentity returns the credentials the kubelet would send for img
// (step 2 of run). With AsKubelet unset it runs the kubelet's providers when
// the node has a credential provider config under Root and no other
// credentials were given; true forces it, false skips it. A provider that
// fails at pull time is not an error here: the kubelet then pulls
// anonymously, and that anonymous attempt fails with the provider's
// cause (attempt.explain).
func (p *prober) kubeletIdentity(ctx context.Context, img Image) ([]attempt, error) {
	given := p.o.Creds != nil && !p.o.Creds.Anonymous()
	if !given && p.o.DockerConfig == "" {
		for _, s := range p.nodeDocker().skipped {
			p.rep.Warnings = append(p.rep.Warnings, verdict.Warning{Code: verdict.CodeAuthNodeDockerConfigSkipped,
				Message: s + ": the kubelet's node keyring passes over this file without a word (logged at level 4 only) and reads the next"})
		}
	}
	explicit := given || p.o.PullSecret != "" || p.o.DockerConfig != ""
	if (p.o.AsKubelet == nil && explicit) || (p.o.AsKubelet != nil && !*p.o.AsKubelet) {
		return p.keychainAttempts(img)
	}
	kc, err := nodeview.LoadKubeletCredentials(p.o.Root)
	if kc == nil && err == nil {
		if p.o.AsKubelet == nil {
			return p.keychainAttempts(img)
		}
		return nil, verdict.Errorf(verdict.CodeConfigCredentialProvider, verdict.RoleNone, "", "--as-kubelet: the kubelet under %s has no %s (read from its systemd unit, drop-ins and /etc/default/kubelet)", p.o.Root, nodeview.FlagCredentialProviderConfig)
	}
	attempts, err := p.providerAttempts(ctx, img, kc, err)
	if err != nil {
		return nil, err
	}
	return p.withNodeDockerConfig(img, attempts), nil
}

// withNodeDockerConfig adds to the providers' attempts the credentials
// the node's docker config holds for img: the kubelet's node keyring
// (k8s.io/kubernetes pkg/credentialprovider: the ".dockercfg" provider
// sits in the same keyring as the exec plugins). They come first, as the
// union of keychain.Kubelet orders them; when the providers left the pull
// anonymous, they replace that attempt.
func (p *prober) withNodeDockerConfig(img Image, attempts []attempt) []attempt {
	if p.o.DockerConfig != "" || (p.o.Creds != nil && !p.o.Creds.Anonymous()) {
		return attempts
	}
	ring := p.nodeDocker().ring
	if ring == nil {
		return attempts
	}
	var node []attempt
	for _, c := range ring.Lookup(keychain.Repository(img.Domain, img.Repository)) {
		node = append(node, p.hold(c))
	}
	if len(node) == 0 {
		return attempts
	}
	if len(attempts) == 1 && attempts[0].creds.Anonymous() {
		attempts = nil
		p.rep.Credentials = &CredentialsInfo{Image: keychain.Repository(img.Domain, img.Repository), Tried: []string{}}
	}
	out := append(node, attempts...)
	if p.rep.Credentials != nil {
		var names []string
		for _, a := range out {
			names = append(names, a.name())
		}
		p.rep.Credentials.Tried, p.rep.Credentials.Anonymous = names, ""
	}
	return out
}

// providerAttempts runs the kubelet's credential providers kc (loadErr:
// LoadKubeletCredentials' error) for img: kubeletIdentity's provider part.
func (p *prober) providerAttempts(ctx context.Context, img Image, kc *nodeview.KubeletCredentials, err error) ([]attempt, error) {
	image := img.Domain + "/" + img.Repository
	info := &CredentialProvider{Image: image, Matched: []string{}, AuthKeys: []string{}}
	if kc != nil {
		info.Config, info.BinDir, info.Sources = kc.ConfigPath, kc.BinDir, kc.Sources
	}
	p.rep.CredentialProvider = info
	if err != nil {
		return p.kubeletSetupFailed(img, info, err)
	}
	matched := kc.Config.Matching(image)
	for _, m := range matched {
		info.Matched = append(info.Matched, m.Name)
	}
	if len(matched) == 0 {
		var globs []string
		for _, pr := range kc.Config.Providers {
			globs = append(globs, pr.Name+" "+strings.Join(pr.MatchImages, ","))
		}
		cause := verdict.Errorf(verdict.CodeAuthProviderNoMatch, verdict.RoleRegistry, "", "no kubelet credential provider matches %s (matchImages: %s)", image, strings.Join(globs, "; "))
		p.rep.Warnings = append(p.rep.Warnings, verdict.Warning{Code: verdict.CodeAuthProviderNoMatch,
			Message: fmt.Sprintf("no kubelet credential provider in %s matches %s: the kubelet pulls anonymously", kc.ConfigPath, image)})
		info.Error = "no provider matches the image"
		return []attempt{{creds: &registry.Credentials{}, cause: cause, anonymous: "no kubelet credential provider matches " + image}}, nil
	}
	// The kubelet runs every matching provider and adds their answers, in
	// order, to one keyring; it then tries the credentials it holds for the
	// image one after the other (nodeview.MergeResults). The probe runs them
	// all the same way and tries the credentials in the same order
	// (kubeletcreds.go); it reports the first failure when none gives any.
	var firstErr error
	var okResults []*nodeview.ProviderResult
	byName := map[string]nodeview.CredentialProvider{}
	var failed []error
	for _, pr := range matched {
		if p.o.AsKubelet == nil {
			// Unasked, run only what root installed (a copied node root or a
			// support bundle must not run what it holds).
			if err := nodeview.CheckProviderOwner(p.o.Root, kc.BinDir, pr.Name); err != nil {
				info.Provider = pr.Name
				return p.kubeletSetupFailed(img, info, fmt.Errorf("not running kubelet credential provider %s unasked: %w", pr.Name, err))
			}
		}
		sa, err := p.serviceAccount(ctx, pr)
		if err != nil {
			return p.kubeletSetupFailed(img, info, err)
		}
		res, err := p.o.ProviderCache.Run(ctx, p.o.Root, kc.BinDir, pr, image, nodeview.ExecOptions{Timeout: p.o.ProviderTimeout, ServiceAccount: sa})
		if res != nil {
			p.providerSecrets = append(p.providerSecrets, res.Secrets()...)
		}
		if err != nil {
			failed = append(failed, err)
			if firstErr == nil {
				firstErr = err
				info.Provider, info.APIVersion, info.Error = pr.Name, pr.APIVersion, err.Error()
				if res != nil {
					info.Stderr, info.Millis = strings.TrimSpace(res.Stderr), res.Elapsed.Milliseconds()
					info.AuthKeys = append(info.AuthKeys, res.AllKeys...)
				}
			}
			continue
		}
		okResults = append(okResults, res)
		byName[pr.Name] = pr
	}
	if merged := nodeview.MergeResults(okResults, image); len(merged) > 0 {
		base := *info
		var held []attempt
		for _, m := range merged {
			pr := byName[m.Provider]
			var res *nodeview.ProviderResult
			for _, r := range okResults {
				if r.Provider == m.Provider {
					res = r
				}
			}
			ci := CredentialProvider{Config: base.Config, BinDir: base.BinDir, Sources: base.Sources, Image: image, Matched: base.Matched,
				Provider: pr.Name, APIVersion: pr.APIVersion, CacheKeyType: res.CacheKeyType, CacheMillis: res.CacheDuration.Milliseconds(),
				AuthKeys: res.AllKeys, MatchedKey: m.Key, Stderr: strings.TrimSpace(res.Stderr), Millis: res.Elapsed.Milliseconds(), Cached: res.Cached}
			if pr.TokenAttributes != nil {
				ci.TokenAudience = pr.TokenAttributes.ServiceAccountTokenAudience
			}
			kc := &keychain.Credential{Source: keychain.Source{Kind: keychain.KindProvider, Name: pr.Name}, Key: m.Key, Username: m.Cred.Username, Password: m.Cred.Password}
			p.held = append(p.held, kc)
			held = append(held, attempt{info: &ci, cred: kc,
				creds: &registry.Credentials{Username: m.Cred.Username, Password: m.Cred.Password, Source: "kubelet credential provider " + pr.Name}})
		}
		*info = *held[0].info
		for _, f := range failed {
			code, msg := verdict.CodeAuthProviderFailed, f.Error()
			if ve, ok := verdict.AsError(f); ok {
				code, msg = ve.Cause, ve.Detail
			}
			p.rep.Warnings = append(p.rep.Warnings, verdict.Warning{Code: code, Message: msg + ": the kubelet uses the other providers' credentials"})
		}
		if len(held) > 1 {
			var names []string
			for _, h := range held {
				names = append(names, h.name())
			}
			p.rep.Warnings = append(p.rep.Warnings, verdict.Warning{Code: verdict.CodeAuthProviderSeveralCredentials,
				Message: fmt.Sprintf("the kubelet holds %d credentials for %s and tries them in turn until one pulls; so does the probe, in its order: %s", len(held), image, strings.Join(names, ", "))})
		}
		p.rep.Credentials = &CredentialsInfo{Image: image, Tried: []string{}}
		for _, h := range held {
			p.rep.Credentials.Tried = append(p.rep.Credentials.Tried, h.name())
		}
		return held, nil
	}
	ve, _ := verdict.AsError(firstErr)
	if info.Stderr != "" {
		// Redacted with the report (redactReport), like every other text.
		e := *ve
		e.Detail += "; its stderr: " + truncate(info.Stderr, 512)
		ve = &e
	}
	if ve.Layer == verdict.LayerConfig {
		// A binary that is missing or cannot run: the node's setup is
		// broken whatever the registry says.
		return p.kubeletSetupFailed(img, info, ve)
	}
	p.rep.Warnings = append(p.rep.Warnings, verdict.Warning{Code: ve.Cause, Message: ve.Detail + ": the kubelet pulls anonymously"})
	why := "every matching kubelet credential provider failed (" + ve.Cause + ")"
	p.rep.Credentials = &CredentialsInfo{Image: image, Tried: []string{}, Anonymous: why}
	return []attempt{{creds: &registry.Credentials{}, cause: ve, anonymous: why}}, nil
}

// kubeletSetupFailed handles a provider config or binary the probe cannot
// use. With --as-kubelet it is the verdict (the kubelet does not start with
// a bad config or a missing binary). By default it is only a warning and the
// probe goes on as before: a probe pod that mounts only part of the host
// (diagnose --probe mounts /etc and /run) would otherwise blame the node for
// files it cannot see.
func (p *prober) kubeletSetupFailed(img Image, info *CredentialProvider, err error) ([]attempt, error) {
	if info.Error == "" {
		info.Error = err.Error()
	}
	if p.o.AsKubelet != nil {
		p.skipped = append(p.skipped, "every network step")
		return nil, err
	}
	msg := err.Error()
	if ve, ok := verdict.AsError(err); ok {
		msg = ve.Detail
	}
	p.rep.Warnings = append(p.rep.Warnings, verdict.Warning{Code: verdict.CodeAuthProviderUnusable,
		Message: msg + ": the probe could not run the kubelet's credential provider under " + p.o.Root + " and goes on without it (--as-kubelet makes this the verdict)"})
	return p.keychainAttempts(img)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// serviceAccount returns the service account (with a token for pr's
// audience) that pr is run for, nil when pr takes none or none is given.
// The token joins the secrets the report is scrubbed of.
func (p *prober) serviceAccount(ctx context.Context, pr nodeview.CredentialProvider) (*nodeview.ServiceAccount, error) {
	if pr.TokenAttributes == nil || p.o.ServiceAccount == nil {
		return nil, nil
	}
	sa, err := p.o.ServiceAccount(ctx, pr.TokenAttributes.ServiceAccountTokenAudience)
	if sa != nil && sa.Token != "" {
		p.providerSecrets = append(p.providerSecrets, sa.Token)
	}
	if err != nil {
		return nil, verdict.Errorf(verdict.CodeAuthProviderServiceAccount, verdict.RoleNone, "", "getting a token of the service account for kubelet credential provider %s (audience %q): %v", pr.Name, pr.TokenAttributes.ServiceAccountTokenAudience, err)
	}
	return sa, nil
}
