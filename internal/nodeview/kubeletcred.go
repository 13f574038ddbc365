package nodeview

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/pullpath/pullpath/internal/keychain"
	"github.com/pullpath/pullpath/internal/verdict"
)

// The kubelet's image credential providers (KEP-2133): the kubelet reads
// --image-credential-provider-config (a CredentialProviderConfig,
// kubelet.config.k8s.io/v1) and runs the providers it names from
// --image-credential-provider-bin-dir.
//
// The types below mirror k8s.io/kubelet/config/v1 field for field (the JSON
// names and shapes; kubeletcred_test.go decodes every testdata config with
// both and compares, and walks k8s.io/kubelet's types so a field added there
// fails the test until it is mirrored here). They are not imported: that
// package registers itself with apimachinery's scheme, which would link 62
// more packages into cmd/pullpath-node, 4.2 MB of binary and 2.5 MiB of RSS
// in every command, the node agent's included (measured in the kubecred
// note), and internal/depcheck keeps Kubernetes API types out of it.

// Flag names of the kubelet.
const (
	FlagCredentialProviderConfig = "--image-credential-provider-config"
	FlagCredentialProviderBinDir = "--image-credential-provider-bin-dir"
	// FlagRootDir is the kubelet's directory; the node keyring looks there
	// first for config.json and .dockercfg (SetPreferredDockercfgPath).
	FlagRootDir = "--root-dir"
)

// CredentialProviderConfig is the kubelet's credential provider
// configuration file (kubelet.config.k8s.io/v1 CredentialProviderConfig).
type CredentialProviderConfig struct {
	APIVersion string               `json:"apiVersion"`
	Kind       string               `json:"kind"`
	Providers  []CredentialProvider `json:"providers"`
}

// CredentialProvider is one exec plugin of the configuration.
type CredentialProvider struct {
	Name                 string                         `json:"name"`
	MatchImages          []string                       `json:"matchImages"`
	DefaultCacheDuration *Duration                      `json:"defaultCacheDuration"`
	APIVersion           string                         `json:"apiVersion"`
	Args                 []string                       `json:"args,omitempty"`
	Env                  []ExecEnvVar                   `json:"env,omitempty"`
	TokenAttributes      *ServiceAccountTokenAttributes `json:"tokenAttributes,omitempty"`
}

// ExecEnvVar is one environment variable the kubelet sets for a provider.
type ExecEnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ServiceAccountTokenAttributes is a provider's opt-in to the pod's service
// account token (KEP-4412).
type ServiceAccountTokenAttributes struct {
	ServiceAccountTokenAudience          string   `json:"serviceAccountTokenAudience"`
	CacheType                            string   `json:"cacheType"`
	RequireServiceAccount                *bool    `json:"requireServiceAccount"`
	RequiredServiceAccountAnnotationKeys []string `json:"requiredServiceAccountAnnotationKeys,omitempty"`
	OptionalServiceAccountAnnotationKeys []string `json:"optionalServiceAccountAnnotationKeys,omitempty"`
}

// Duration is metav1.Duration's JSON form: a Go duration string ("12h").
type Duration struct{ time.Duration }

// UnmarshalJSON reads a quoted Go duration, as metav1.Duration does.
func (d *Duration) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return fmt.Errorf("duration %s is not a string", s)
	}
	v, err := time.ParseDuration(s[1 : len(s)-1])
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// MarshalJSON writes the duration as metav1.Duration does.
func (d Duration) MarshalJSON() ([]byte, error) { return []byte(`"` + d.Duration.String() + `"`), nil }

// kubeletConfigVersions are the config API versions the kubelet decodes.
var kubeletConfigVersions = map[string]bool{
	"kubelet.config.k8s.io/v1": true, "kubelet.config.k8s.io/v1beta1": true, "kubelet.config.k8s.io/v1alpha1": true,
}

// ProviderAPIVersions are the CredentialProviderRequest/Response versions a
// provider may speak.
var ProviderAPIVersions = map[string]bool{
	"credentialprovider.kubelet.k8s.io/v1": true, "credentialprovider.kubelet.k8s.io/v1beta1": true, "credentialprovider.kubelet.k8s.io/v1alpha1": true,
}

// KubeletCredentials is the kubelet's credential provider setup on a node.
type KubeletCredentials struct {
	ConfigPath string // node path of the config file
	BinDir     string // node path of the providers' directory
	// Sources are the node files the two flags were read from.
	Sources []string
	Config  CredentialProviderConfig
}

// kubeletUnits and kubeletDropIns are where systemd finds kubelet.service.
var (
	kubeletUnits = []string{
		"/etc/systemd/system/kubelet.service",
		"/run/systemd/system/kubelet.service",
		"/usr/lib/systemd/system/kubelet.service",
		"/lib/systemd/system/kubelet.service",
	}
	kubeletDropIns = []string{
		"/lib/systemd/system/kubelet.service.d",
		"/usr/lib/systemd/system/kubelet.service.d",
		"/run/systemd/system/kubelet.service.d",
		"/etc/systemd/system/kubelet.service.d",
	}
	// kubeletEnvFiles are read when the node has no kubelet unit under
	// root (a kubeadm or distribution layout copied without /etc/systemd).
	kubeletEnvFiles = []string{"/etc/default/kubelet", "/etc/sysconfig/kubelet", "/var/lib/kubelet/kubeadm-flags.env"}
)

// maxProviderConfig bounds the config file.
const maxProviderConfig = 1 << 20

// LoadKubeletCredentials reads the kubelet's credential provider flags from
// its systemd unit under root (ExecStart with its $VARIABLES expanded from
// Environment= and EnvironmentFile=, e.g. /etc/default/kubelet's
// KUBELET_FLAGS or KUBELET_EXTRA_ARGS) and the config file they name. It
// returns nil, nil when the kubelet has no --image-credential-provider-config;
// a named config that is missing, unreadable or invalid is a
// config.credential-provider error, as it stops the kubelet from starting.
func LoadKubeletCredentials(root string) (*KubeletCredentials, error) {
	flags, _, sources := kubeletFlags(root)
	cfgPath := flags[FlagCredentialProviderConfig]
	if cfgPath == "" {
		return nil, nil
	}
	kc := &KubeletCredentials{ConfigPath: cfgPath, BinDir: flags[FlagCredentialProviderBinDir], Sources: sources}
	data, _, err := readInRoot(root, cfgPath)
	if err != nil {
		return kc, verdict.Errorf(verdict.CodeConfigCredentialProvider, verdict.RoleNone, "", "reading the kubelet's credential provider config %s (%s, from %s): %v", cfgPath, FlagCredentialProviderConfig, strings.Join(sources, ", "), err)
	}
	if len(data) > maxProviderConfig {
		return kc, verdict.Errorf(verdict.CodeConfigCredentialProvider, verdict.RoleNone, "", "the kubelet's credential provider config %s is larger than %d bytes", cfgPath, maxProviderConfig)
	}
	cfg, err := ParseCredentialProviderConfig(data)
	if err != nil {
		return kc, verdict.Errorf(verdict.CodeConfigCredentialProvider, verdict.RoleNone, "", "decoding the kubelet's credential provider config %s: %v", cfgPath, err)
	}
	kc.Config = *cfg
	if kc.BinDir == "" {
		return kc, verdict.Errorf(verdict.CodeConfigCredentialProvider, verdict.RoleNone, "", "the kubelet has %s=%s but no %s: it cannot find the providers", FlagCredentialProviderConfig, cfgPath, FlagCredentialProviderBinDir)
	}
	return kc, nil
}

// ParseCredentialProviderConfig decodes and validates a
// CredentialProviderConfig (YAML or JSON) with the kubelet's rules: its
// kind and apiVersion, and per provider a name usable as a file name, a
// supported apiVersion, at least one valid matchImages entry and a
// non-negative defaultCacheDuration. Unknown fields are an error, as in the
// kubelet's strict decoding.
func ParseCredentialProviderConfig(data []byte) (*CredentialProviderConfig, error) {
	var cfg CredentialProviderConfig
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, err
	}
	// apimachinery's strict decoding: case-sensitive names, unknown and
	// duplicate fields are errors.
	strict, err := kjson.UnmarshalStrict(js, &cfg, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields)
	if err != nil {
		return nil, err
	}
	if len(strict) > 0 {
		return nil, errors.Join(strict...)
	}
	if cfg.Kind != "CredentialProviderConfig" {
		return nil, fmt.Errorf("failed to decode %q (wrong Kind)", cfg.Kind)
	}
	if !kubeletConfigVersions[cfg.APIVersion] {
		return nil, fmt.Errorf("unsupported apiVersion %q (want kubelet.config.k8s.io/v1)", cfg.APIVersion)
	}
	var errs []string
	if len(cfg.Providers) == 0 {
		errs = append(errs, "providers: Required value: at least 1 item in plugins is required")
	}
	seen := map[string]bool{}
	for i, p := range cfg.Providers {
		at := fmt.Sprintf("providers[%d]", i)
		switch {
		case p.Name == "":
			errs = append(errs, at+".name: Required value")
		case strings.ContainsAny(p.Name, "/ ") || p.Name == "." || p.Name == "..":
			errs = append(errs, fmt.Sprintf("%s.name: Invalid value: %q: not a file name", at, p.Name))
		case seen[p.Name]:
			errs = append(errs, fmt.Sprintf("%s.name: Duplicate value: %q", at, p.Name))
		}
		seen[p.Name] = true
		if !ProviderAPIVersions[p.APIVersion] {
			errs = append(errs, fmt.Sprintf("%s.apiVersion: Unsupported value: %q", at, p.APIVersion))
		}
		if len(p.MatchImages) == 0 {
			errs = append(errs, at+".matchImages: Required value: at least 1 item in matchImages is required")
		}
		for _, m := range p.MatchImages {
			if err := keychain.ParseGlob(m); err != nil {
				errs = append(errs, fmt.Sprintf("%s.matchImages: Invalid value: %q: match image is invalid: %v", at, m, err))
			}
		}
		switch {
		case p.DefaultCacheDuration == nil:
			errs = append(errs, at+".defaultCacheDuration: Required value")
		case p.DefaultCacheDuration.Duration < 0:
			errs = append(errs, at+".defaultCacheDuration: Invalid value: must be greater than or equal to 0")
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return &cfg, nil
}

// kubeletFlags returns the kubelet's credential provider and root-dir
// flags (the last occurrence of each wins, as with pflag), the unit's
// environment and the files they came from.
func kubeletFlags(root string) (map[string]string, map[string]string, []string) {
	env := map[string]string{}
	var exec []string
	var sources []string
	files := unitFiles(root, kubeletUnits, kubeletDropIns)
	for _, f := range files {
		data, _, err := readInRoot(root, f)
		if err != nil || len(data) > maxUnitFile {
			continue
		}
		applyUnit(root, data, env)
		if e, ok := execStart(data); ok {
			exec = e
		}
		sources = append(sources, f)
	}
	var words []string
	if len(files) == 0 {
		// No unit: the environment files alone, every value a flag list.
		sources = nil
		for _, f := range kubeletEnvFiles {
			data, _, err := readInRoot(root, f)
			if err != nil || len(data) > maxUnitFile {
				continue
			}
			e := map[string]string{}
			applyUnit(root, []byte("[Service]\nEnvironmentFile="+f+"\n"), e)
			for _, v := range e {
				words = append(words, strings.Fields(v)...)
			}
			sources = append(sources, f)
		}
	} else {
		words = expandExec(exec, env)
	}
	flags := map[string]string{}
	for i := 0; i < len(words); i++ {
		for _, name := range []string{FlagCredentialProviderConfig, FlagCredentialProviderBinDir, FlagRootDir} {
			switch {
			case strings.HasPrefix(words[i], name+"="):
				flags[name] = strings.Trim(strings.TrimPrefix(words[i], name+"="), `"'`)
			case words[i] == name && i+1 < len(words):
				flags[name] = strings.Trim(words[i+1], `"'`)
			}
		}
	}
	for name, v := range flags {
		if v != "" && !strings.HasPrefix(v, "/") {
			flags[name] = path.Join("/", v) // the kubelet runs in /
		}
	}
	return flags, env, sources
}

// defaultKubeletRootDir is the kubelet's --root-dir default.
const defaultKubeletRootDir = "/var/lib/kubelet"

// KubeletDockerConfigFiles returns the node paths the kubelet's node
// keyring reads, in its order (k8s.io/kubernetes pkg/credentialprovider
// DefaultDockerConfigJSONPaths, then DefaultDockercfgPaths): config.json
// under its --root-dir (from its unit, default /var/lib/kubelet), its
// working directory (/ for a systemd service), $HOME/.docker and /.docker;
// then .dockercfg under the root dir, the working directory, $HOME and /.
// $HOME is the unit's Environment=HOME, else unset, as systemd leaves it
// for a service without User= (os.UserHomeDir fails, and the relative
// ".docker" is taken from /). sources are the unit files read.
func KubeletDockerConfigFiles(root string) (jsonFiles, cfgFiles, sources []string) {
	flags, env, sources := kubeletFlags(root)
	rootDir := flags[FlagRootDir]
	if rootDir == "" {
		rootDir = defaultKubeletRootDir
	}
	home := path.Join("/", env["HOME"])
	add := func(list []string, p string) []string {
		if !slices.Contains(list, p) {
			list = append(list, p)
		}
		return list
	}
	for _, d := range []string{rootDir, "/", path.Join(home, ".docker"), "/.docker"} {
		jsonFiles = add(jsonFiles, path.Join(d, "config.json"))
	}
	for _, d := range []string{rootDir, "/", home, "/"} {
		cfgFiles = add(cfgFiles, path.Join(d, ".dockercfg"))
	}
	return jsonFiles, cfgFiles, sources
}

// execStart returns the last ExecStart= command line of a unit file (with
// backslash continuations joined, systemd's prefixes -@+!: dropped) and
// whether the file set one; an empty ExecStart= resets it.
func execStart(data []byte) ([]string, bool) {
	var out []string
	found := false
	section := ""
	var pending string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), maxUnitFile)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasSuffix(line, `\`) {
			pending += strings.TrimSuffix(line, `\`) + " "
			continue
		}
		line, pending = pending+line, ""
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if strings.HasPrefix(line, "[") {
			section = line
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok || section != "[Service]" || strings.TrimSpace(key) != "ExecStart" {
			continue
		}
		found = true
		val = strings.TrimLeft(strings.TrimSpace(val), "-@+!:")
		out = splitQuoted(val)
	}
	return out, found
}

// expandExec expands $VAR (split into words) and ${VAR} (one word) in an
// ExecStart command line from the unit's environment.
func expandExec(words []string, env map[string]string) []string {
	var out []string
	for _, w := range words {
		if strings.HasPrefix(w, "$") && !strings.HasPrefix(w, "${") {
			out = append(out, strings.Fields(env[w[1:]])...)
			continue
		}
		out = append(out, os.Expand(w, func(k string) string { return env[k] }))
	}
	return out
}
