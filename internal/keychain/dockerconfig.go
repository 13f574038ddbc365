package keychain

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/pullpath/pullpath/internal/verdict"
)

// MaxFile bounds a credentials file.
const MaxFile = 1 << 20

// dockerEntry is one auths entry as written.
type dockerEntry struct {
	Auth     string `json:"auth,omitempty"`
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
}

// ParseDockerConfig reads a dockerconfigjson ({"auths": {...}}) or the
// legacy .dockercfg map as the kubelet does (credentialprovider
// DockerConfigEntry.UnmarshalJSON: a non-empty "auth" field, base64 of
// user:password, replaces username and password; "identitytoken" is not
// read). name says where the data came from, for errors; no secret is in
// an error.
func ParseDockerConfig(data []byte, name string) (map[string]Entry, error) {
	var cfg struct {
		Auths map[string]dockerEntry `json:"auths"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, verdict.Errorf(verdict.CodeConfigCredentials, verdict.RoleNone, "", "%s is not a docker config: %v", name, errNoBytes(err))
	}
	if cfg.Auths == nil {
		var legacy map[string]dockerEntry
		if json.Unmarshal(data, &legacy) == nil {
			cfg.Auths = legacy
		}
	}
	return dockerEntries(cfg.Auths, name)
}

// dockerEntries decodes auths entries as the kubelet's
// DockerConfigEntry.UnmarshalJSON does: a non-empty "auth" replaces
// username and password, decoded with padding when it ends in "=" and
// without otherwise (decodeDockerConfigFieldAuth); one that does not
// decode fails the whole file.
func dockerEntries(auths map[string]dockerEntry, name string) (map[string]Entry, error) {
	out := make(map[string]Entry, len(auths))
	for key, e := range auths {
		ent := Entry{Username: e.Username, Password: e.Password}
		if e.Auth != "" {
			enc := base64.RawStdEncoding
			if strings.HasSuffix(strings.TrimSpace(e.Auth), "=") {
				enc = base64.StdEncoding
			}
			raw, err := enc.DecodeString(e.Auth)
			if err != nil {
				return nil, verdict.Errorf(verdict.CodeConfigCredentials, verdict.RoleNone, "", "%s: entry %q has an auth field that is not base64", name, key)
			}
			user, pass, found := strings.Cut(string(raw), ":")
			if !found {
				return nil, verdict.Errorf(verdict.CodeConfigCredentials, verdict.RoleNone, "", "%s: entry %q auth is not user:password", name, key)
			}
			ent = Entry{Username: user, Password: strings.Trim(pass, "\x00")}
		}
		out[key] = ent
	}
	return out, nil
}

// NodeDockerConfig reads the node's docker config as the kubelet's
// ".dockercfg" credential provider does (k8s.io/kubernetes
// pkg/credentialprovider ReadDockerConfigFile, registered in every
// kubelet): the first of jsonFiles that reads and decodes as
// {"auths": ...} wins, even one with no auths (it ends the search with no
// credential); only when none does, the first of cfgFiles that decodes as
// the legacy .dockercfg map. A file that is missing, unreadable, too large
// or does not decode is passed over, as the kubelet passes over it with a
// V(4) log line; skipped names those that exist, with why (no secret in
// it). read reads a node path; file is the one used, "" when none.
func NodeDockerConfig(read func(string) ([]byte, error), jsonFiles, cfgFiles []string) (auths map[string]Entry, file string, skipped []string) {
	try := func(f string, legacy bool) (map[string]Entry, bool) {
		data, err := read(f)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return nil, false
		case err != nil:
			skipped = append(skipped, f+": "+err.Error())
			return nil, false
		case len(data) > MaxFile:
			skipped = append(skipped, fmt.Sprintf("%s: larger than %d bytes", f, MaxFile))
			return nil, false
		}
		var entries map[string]dockerEntry
		if legacy {
			err = json.Unmarshal(data, &entries)
		} else {
			var cfg struct {
				Auths map[string]dockerEntry `json:"auths"`
			}
			err = json.Unmarshal(data, &cfg)
			entries = cfg.Auths
		}
		if err != nil {
			skipped = append(skipped, f+": "+errNoBytes(err))
			return nil, false
		}
		out, err := dockerEntries(entries, f)
		if err != nil {
			skipped = append(skipped, err.Error())
			return nil, false
		}
		return out, true
	}
	for _, f := range jsonFiles {
		if a, ok := try(f, false); ok {
			return a, f, skipped
		}
	}
	for _, f := range cfgFiles {
		if a, ok := try(f, true); ok {
			return a, f, skipped
		}
	}
	return nil, "", skipped
}

// errNoBytes keeps a JSON error's kind but not the bytes it quotes.
func errNoBytes(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("invalid JSON at offset %d", se.Offset)
	}
	return "not a JSON object of the expected shape"
}

// ParseSecret reads a Kubernetes Secret (JSON or YAML) of type
// kubernetes.io/dockerconfigjson or kubernetes.io/dockercfg, or a bare
// docker config, and returns its auths.
func ParseSecret(data []byte, name string) (map[string]Entry, error) {
	var secret struct {
		Kind       string            `json:"kind"`
		Type       string            `json:"type"`
		Data       map[string]string `json:"data"`
		StringData map[string]string `json:"stringData"`
	}
	if err := yaml.Unmarshal(data, &secret); err == nil && secret.Kind == "Secret" {
		for _, key := range []string{".dockerconfigjson", ".dockercfg"} {
			if v, ok := secret.StringData[key]; ok {
				return ParseDockerConfig([]byte(v), name)
			}
			if v, ok := secret.Data[key]; ok {
				raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
				if err != nil {
					return nil, verdict.Errorf(verdict.CodeConfigCredentials, verdict.RoleNone, "", "%s: data[%s] is not base64", name, key)
				}
				return ParseDockerConfig(raw, name)
			}
		}
		return nil, verdict.Errorf(verdict.CodeConfigCredentials, verdict.RoleNone, "", "%s: secret (type %q) has no .dockerconfigjson or .dockercfg key", name, secret.Type)
	}
	return ParseDockerConfig(data, name)
}

// ReadFile reads a credentials file of at most MaxFile bytes.
func ReadFile(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, verdict.Wrap(verdict.CodeConfigCredentials, verdict.RoleNone, "", fmt.Errorf("reading credentials: %w", err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFile+1))
	if err != nil {
		return nil, verdict.Wrap(verdict.CodeConfigCredentials, verdict.RoleNone, "", fmt.Errorf("reading credentials: %w", err))
	}
	if len(data) > MaxFile {
		return nil, verdict.Errorf(verdict.CodeConfigCredentials, verdict.RoleNone, "", "%s is larger than %d bytes", file, MaxFile)
	}
	return data, nil
}
