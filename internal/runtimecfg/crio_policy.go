package runtimecfg

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/distribution/reference"

	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/verdict"
)

// DefaultPolicy is containers-policy.json(5)'s system file.
const DefaultPolicy = "/etc/containers/policy.json"

// PolicyFact is the signature policy requirement that applies to an image:
// a reported fact.
type PolicyFact struct {
	// File is the policy file CRI-O uses; Scope the docker transport scope
	// that matched ("" for the transport's default, "default" for the
	// file's global default).
	File  string `json:"file"`
	Scope string `json:"scope"`
	// Requirements are the requirement types, all of which must hold
	// (insecureAcceptAnything, reject, signedBy, sigstoreSigned).
	Requirements []string `json:"requirements,omitempty"`
	// Note says what the policy means for the pull.
	Note string `json:"note"`
}

type policyReq struct {
	Type string `json:"type"`
}

type policyFile struct {
	Default    []policyReq                       `json:"default"`
	Transports map[string]map[string][]policyReq `json:"transports"`
}

// crioPolicyFile is the policy CRI-O uses for a pull
// (server/image_pull.go contextForNamespace, server/server.go): the
// namespace's signature_policy_dir/<namespace>.json when it exists, else
// signature_policy, else the system default.
func (c *Config) crioPolicyFile(ns *CRIONamespace) (string, string) {
	if ns != nil && ns.PolicyFileUsed {
		return ns.PolicyFile, "the policy of namespace " + ns.Name + " (signature_policy_dir)"
	}
	if f := c.crio.image.SignaturePolicy; f != "" {
		return f, "crio.image.signature_policy at " + c.crio.from["signature_policy"]
	}
	return DefaultPolicy, "default of containers/image"
}

// crioPolicy finds the requirement for ref as containers/image's
// signature/policy_eval.go does for the docker transport: the most
// specific scope among the reference with its tag or digest, the
// repository, each parent namespace, the host[:port], "*.domain" wildcards
// from the most specific, then the transport's "" scope, then "default".
func (c *Config) crioPolicy(ref reference.Named, ns *CRIONamespace, ws []verdict.Warning) (*PolicyFact, []verdict.Warning) {
	file, why := c.crioPolicyFile(ns)
	data, _, err := nodeview.ReadInRoot(c.root, file)
	if err != nil {
		return &PolicyFact{File: file, Note: fmt.Sprintf("%s (%s) cannot be read (%v): containers/image refuses every pull without a policy", file, why, err)},
			append(ws, verdict.Warning{Code: verdict.CodeConfigSignaturePolicy, Message: fmt.Sprintf("%s (%s) cannot be read: containers/image refuses every pull without a signature policy", file, why)})
	}
	var pf policyFile
	if err := json.Unmarshal(data, &pf); err != nil {
		return &PolicyFact{File: file, Note: "not valid JSON: " + err.Error()},
			append(ws, verdict.Warning{Code: verdict.CodeConfigSignaturePolicy, Message: fmt.Sprintf("%s (%s) is not valid JSON (%v): containers/image refuses every pull with it", file, why, err)})
	}
	scopes := policyScopes(ref)
	pf0 := &PolicyFact{File: file}
	docker := pf.Transports["docker"]
	found := false
	for _, s := range scopes {
		if reqs, ok := docker[s]; ok {
			pf0.Scope = s
			for _, r := range reqs {
				pf0.Requirements = append(pf0.Requirements, r.Type)
			}
			found = true
			break
		}
	}
	if !found {
		pf0.Scope = "default"
		for _, r := range pf.Default {
			pf0.Requirements = append(pf0.Requirements, r.Type)
		}
	}
	where := fmt.Sprintf("%s (%s), scope %q", file, why, pf0.Scope)
	switch {
	case len(pf0.Requirements) == 0:
		pf0.Note = where + " has no requirement: containers/image rejects a policy scope with an empty list"
		ws = append(ws, verdict.Warning{Code: verdict.CodeConfigSignaturePolicy, Message: fmt.Sprintf("%s: the requirement list for %s is empty, which containers/image refuses: the pull fails after the manifest is fetched", where, ref.Name())})
	case contains(pf0.Requirements, "reject"):
		pf0.Note = where + ": reject: CRI-O refuses the image whatever its signatures"
		ws = append(ws, verdict.Warning{Code: verdict.CodeConfigSignaturePolicy, Message: fmt.Sprintf("%s: the signature policy rejects %s (\"reject\"): the pull fails (\"Source image rejected\") after the manifest is fetched", where, ref.Name())})
	case contains(pf0.Requirements, "signedBy") || contains(pf0.Requirements, "sigstoreSigned"):
		pf0.Note = where + ": " + strings.Join(pf0.Requirements, ", ") + ": the pull succeeds only if the image carries a signature the policy's keys accept (not checked by the probe)"
		ws = append(ws, verdict.Warning{Code: verdict.CodeConfigSignaturePolicy, Message: fmt.Sprintf("%s: %s requires a signature (%s): an unsigned image, or one signed by another key, is refused (\"Source image rejected\"); the probe does not verify signatures", where, ref.Name(), strings.Join(pf0.Requirements, ", "))})
	default:
		pf0.Note = where + ": " + strings.Join(pf0.Requirements, ", ") + ": no signature needed"
	}
	return pf0, ws
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// policyScopes are the docker transport's scopes for ref, most specific
// first (docker/policyconfiguration: PolicyConfigurationIdentity, then
// PolicyConfigurationNamespaces), then the transport's default "".
func policyScopes(ref reference.Named) []string {
	var out []string
	name := ref.Name()
	if d, ok := ref.(reference.Digested); ok {
		out = append(out, name+"@"+d.Digest().String())
	} else if t, ok := ref.(reference.Tagged); ok {
		out = append(out, name+":"+t.Tag())
	}
	for n := name; ; {
		out = append(out, n)
		i := strings.LastIndex(n, "/")
		if i < 0 {
			break
		}
		n = n[:i]
	}
	host := reference.Domain(ref)
	if h, _, ok := strings.Cut(host, ":"); ok {
		host = h
	}
	for d := host; strings.Contains(d, "."); {
		_, rest, _ := strings.Cut(d, ".")
		out = append(out, "*."+rest)
		d = rest
	}
	out = append(out, "")
	return out
}
