package runtimecfg

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/distribution/reference"

	"github.com/pullpath/pullpath/internal/keychain"
	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/verdict"
)

// CRI-O's per-namespace files. With the pod's namespace (the CRI
// PullImageRequest's sandbox config metadata), CRI-O's pullImage
// (server/image_pull.go) does two things before containers/image runs:
//
//   - contextForNamespace: <signature_policy_dir>/<namespace>.json, when it
//     exists, becomes the SystemContext's SignaturePolicyPath, replacing
//     signature_policy (a stat error other than "does not exist" fails the
//     pull). signature_policy_dir defaults to /etc/crio/policies (CRI-O
//     1.28 and later).
//   - prepareTempAuthFile: <namespaced_auth_dir>/<namespace>-<sha256 hex of
//     the image's normalised name>.json (crio-credential-provider pkg/auth
//     FilePath; the name without tag or digest, as the kubelet gives it to
//     its credential provider), when it exists, is moved to
//     <namespaced_auth_dir>/in-use/ and becomes the SystemContext's
//     AuthFilePath, replacing global_auth_file; it is removed after the
//     pull. namespaced_auth_dir defaults to /etc/crio/auth (CRI-O 1.35 and
//     later, pkg/config DefaultConfig from crio-credential-provider's
//     AuthDir).
//
// The CRI request's credential (a user name) still beats either auth file:
// containers/image uses the SystemContext's DockerAuthConfig before any file
// (pkg/docker/config getCredentialsWithHomeDir). Without a namespace (a pull
// without sandbox config, or a probe that was not told the pod's namespace)
// neither file is read.

const (
	// CRIODefaultNamespacedAuthDir is namespaced_auth_dir's default.
	CRIODefaultNamespacedAuthDir = "/etc/crio/auth"
	// CRIODefaultSignaturePolicyDir is signature_policy_dir's default.
	CRIODefaultSignaturePolicyDir = "/etc/crio/policies"
)

// CRIONamespace is what the pod's namespace changes in a CRI-O pull: a
// reported fact.
type CRIONamespace struct {
	// Name is the pod's namespace; empty when the probe was not told it.
	Name string `json:"name,omitempty"`
	// AuthFile is the namespaced auth file for this image (node path);
	// AuthFileUsed says it exists and replaces global_auth_file.
	AuthFile     string `json:"auth_file,omitempty"`
	AuthFileUsed bool   `json:"auth_file_used"`
	// PolicyFile is the namespace's signature policy (node path);
	// PolicyFileUsed says it exists and replaces signature_policy.
	PolicyFile     string `json:"policy_file,omitempty"`
	PolicyFileUsed bool   `json:"policy_file_used"`
	// Note says what was read and why, in one sentence or two.
	Note string `json:"note"`
}

// CRIONamespacedAuthFile is crio-credential-provider's pkg/auth FilePath for
// the image as the kubelet names it: <dir>/<namespace>-<sha256 hex of the
// normalised name>.json.
func CRIONamespacedAuthFile(dir, namespace, image string) (string, error) {
	if !path.IsAbs(dir) {
		return "", fmt.Errorf("provided %q directory is not an absolute path", dir)
	}
	if namespace == "" {
		return "", errors.New("no namespace provided")
	}
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return "", fmt.Errorf("parse image name: %w", err)
	}
	return path.Join(dir, fmt.Sprintf("%s-%x.json", namespace, sha256.Sum256([]byte(named.Name())))), nil
}

// crioVersion is CRI-O's own version when a source gave it (the package,
// the node's containerRuntimeVersion, the CRI Version call); the Runtime's
// major and minor stay containerd's rules and are not used for it.
func (c *Config) crioVersion() (version, bool) {
	if c.Runtime.Version == "" {
		return version{}, false
	}
	return parseVersion(c.Runtime.Version)
}

// crioBefore says whether CRI-O's known version is older than
// major.minor, and names that version with its source ("1.33 (…)").
func (c *Config) crioBefore(major, minor int) (string, bool) {
	v, ok := c.crioVersion()
	if !ok || v.major > major || v.major == major && v.minor >= minor {
		return "", false
	}
	return fmt.Sprintf("%d.%d (%s)", v.major, v.minor, c.Runtime.VersionSource), true
}

// crioNamespacedAuthDir is namespaced_auth_dir as this CRI-O reads it, with
// its source; "" when this CRI-O predates it (1.35).
func (c *Config) crioNamespacedAuthDir() (string, string) {
	return c.crioVersionedDir("namespaced_auth_dir", c.crio.image.NamespacedAuthDir, CRIODefaultNamespacedAuthDir, 1, 35, "namespaced auth files")
}

// crioSignaturePolicyDir is signature_policy_dir as this CRI-O reads it;
// "" when this CRI-O predates it (1.28).
func (c *Config) crioSignaturePolicyDir() (string, string) {
	return c.crioVersionedDir("signature_policy_dir", c.crio.image.SignaturePolicyDir, CRIODefaultSignaturePolicyDir, 1, 28, "per-namespace policies")
}

// crioVersionedDir is a crio.image directory key that CRI-O major.minor
// introduced: "" and why on an older CRI-O, else the value set (set) or
// the default, with its source. what names what the key holds.
func (c *Config) crioVersionedDir(key, set, def string, major, minor int, what string) (string, string) {
	if v, before := c.crioBefore(major, minor); before {
		return "", fmt.Sprintf("CRI-O %s has no %s (%s came with %d.%d)", v, what, key, major, minor)
	}
	if set != "" {
		return set, "crio.image." + key + " at " + c.crio.from[key]
	}
	return def, fmt.Sprintf("default of CRI-O %d.%d+ (%s not set)", major, minor, key)
}

// statInRoot reports whether the node path p exists under root; an error
// other than "does not exist" is returned.
func statInRoot(root, p string) (bool, error) {
	hp, err := nodeview.InRoot(root, p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	fi, err := os.Stat(hp)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	return !fi.IsDir(), nil
}

// crioNamespace works out the per-namespace files for image in CRI-O's
// order, and the warnings they call for. With no namespace it lists the
// files that exist for this image or any namespace, since a pod's pull
// would read them and this probe did not.
func (c *Config) crioNamespace(image string, ws []verdict.Warning) (*CRIONamespace, []verdict.Warning) {
	st := c.crio
	ns := &CRIONamespace{Name: st.namespace}
	authDir, authWhy := c.crioNamespacedAuthDir()
	policyDir, policyWhy := c.crioSignaturePolicyDir()
	var notes []string
	if st.namespace == "" {
		var pending, policies []string
		if authDir != "" {
			pending = c.crioPendingAuthFiles(authDir, image)
		}
		if policyDir != "" {
			policies = c.crioNamespacePolicies(policyDir)
		}
		note := "the pod's namespace is unknown (probe without --pod-namespace; diagnose --probe passes it), so CRI-O's per-namespace files were not read"
		switch {
		case len(pending) == 0 && len(policies) == 0:
			note += fmt.Sprintf(": none exists for this image (%s) nor any namespace's policy (%s), so no namespace changes this pull", orWhy(authDir, authWhy), orWhy(policyDir, policyWhy))
		default:
			var what []string
			if len(pending) > 0 {
				what = append(what, fmt.Sprintf("namespaced auth files for this image in %s (namespaces %s), each of which replaces global_auth_file for that namespace's next pull", authDir, strings.Join(pending, ", ")))
			}
			if len(policies) > 0 {
				what = append(what, fmt.Sprintf("signature policies of namespaces %s in %s, each of which replaces the policy for that namespace's pulls", strings.Join(policies, ", "), policyDir))
			}
			note += ": the node has " + strings.Join(what, "; and ")
			ws = append(ws, verdict.Warning{Code: verdict.CodeConfigCrioNamespaceUnknown,
				Message: "The probe does not know the pod's namespace, but this CRI-O node has " + strings.Join(what, "; and ") + ": a pod's pull may present other credentials or meet another policy than this probe; run it with --pod-namespace NS (diagnose --probe does)."})
		}
		ns.Note = note
		return ns, ws
	}
	if authDir == "" {
		notes = append(notes, authWhy)
	} else if f, err := CRIONamespacedAuthFile(authDir, st.namespace, image); err != nil {
		notes = append(notes, fmt.Sprintf("no namespaced auth file: %v (%s)", err, authWhy))
	} else {
		ns.AuthFile = f
		ok, err := statInRoot(c.root, f)
		switch {
		case err != nil:
			notes = append(notes, fmt.Sprintf("%s cannot be read (%v)", f, err))
		case ok:
			ns.AuthFileUsed = true
			notes = append(notes, fmt.Sprintf("%s exists (%s): it replaces global_auth_file for this pull when the request carries no credential; CRI-O moves it to in-use/ and removes it after the pull, so the credential provider writes it anew before each pull", f, authWhy))
		default:
			notes = append(notes, fmt.Sprintf("%s does not exist (%s): global_auth_file is used", f, authWhy))
		}
	}
	if policyDir == "" {
		notes = append(notes, policyWhy)
	} else {
		f := path.Join(policyDir, st.namespace+".json")
		ns.PolicyFile = f
		ok, err := statInRoot(c.root, f)
		switch {
		case err != nil:
			// contextForNamespace: "read policy path %s: %w" fails the pull.
			notes = append(notes, fmt.Sprintf("%s cannot be checked (%v): CRI-O fails the pull (\"get context for namespace: read policy path\")", f, err))
			ws = append(ws, verdict.Warning{Code: verdict.CodeConfigSignaturePolicy, Message: fmt.Sprintf("%s (%s) cannot be checked (%v): CRI-O fails every pull of namespace %s (\"get context for namespace: read policy path\")", f, policyWhy, err, st.namespace)})
		case ok:
			ns.PolicyFileUsed = true
			notes = append(notes, fmt.Sprintf("%s exists (%s): it is the policy of this namespace's pulls", f, policyWhy))
		default:
			notes = append(notes, fmt.Sprintf("%s does not exist (%s): signature_policy or the system policy applies", f, policyWhy))
		}
	}
	ns.Note = "namespace " + st.namespace + ": " + strings.Join(notes, "; ")
	return ns, ws
}

func orWhy(dir, why string) string {
	if dir == "" {
		return why
	}
	return dir
}

// crioPendingAuthFiles are the namespaces that have a namespaced auth file
// for image waiting in dir (<namespace>-<sha256 of the name>.json).
func (c *Config) crioPendingAuthFiles(dir, image string) []string {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return nil
	}
	return c.namespacesIn(dir, fmt.Sprintf("-%x.json", sha256.Sum256([]byte(named.Name()))))
}

// crioNamespacePolicies are the namespaces with a policy file in dir.
func (c *Config) crioNamespacePolicies(dir string) []string {
	return c.namespacesIn(dir, ".json")
}

// namespacesIn lists, sorted, the non-empty names before suffix of the
// files in the node directory dir whose names end in it.
func (c *Config) namespacesIn(dir, suffix string) []string {
	hd, err := nodeview.InRoot(c.root, dir)
	if err != nil {
		return nil
	}
	names, _ := readDirNames(hd)
	var out []string
	for _, n := range names {
		if ns, ok := strings.CutSuffix(n, suffix); ok && ns != "" {
			out = append(out, ns)
		}
	}
	slices.Sort(out)
	return out
}

// crioAuthFile is the file containers/image reads credentials from for
// this pull, in CRI-O's order: the namespaced file when it exists, else
// global_auth_file, else the first of containers/image's default files for
// root that exists. A file that exists but is not a valid auth file is a
// config verdict: containers/image reads it before any network step
// (docker newDockerClientFromRef, pkg/docker/config) and fails every
// source.
func (c *Config) crioAuthFile(ns *CRIONamespace) (map[string]keychain.Entry, string, error) {
	var files []string
	switch {
	case ns != nil && ns.AuthFileUsed:
		files = []string{ns.AuthFile}
	case c.crio.image.GlobalAuthFile != "":
		files = []string{c.crio.image.GlobalAuthFile}
	default:
		files = crioDefaultAuthFiles
	}
	for _, f := range files {
		data, _, err := nodeview.ReadInRoot(c.root, f)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, f, verdict.Errorf(verdict.CodeConfigCrioAuthFile, verdict.RoleNone, "", "%s cannot be read (%v): containers/image fails the pull before any network step", f, err)
		}
		if !json.Valid(data) {
			return nil, f, verdict.Errorf(verdict.CodeConfigCrioAuthFile, verdict.RoleNone, "", "%s is not JSON: containers/image cannot read the auth file of this pull (\"unmarshaling JSON at\") and fails it before any network step", f)
		}
		// containers/image decodes only the entry it looks up; an entry
		// the kubelet's stricter parser refuses leaves the routes unknown.
		m, err := keychain.ParseDockerConfig(data, f)
		if err != nil {
			return nil, f, nil
		}
		return m, f, nil
	}
	return nil, "", nil
}
