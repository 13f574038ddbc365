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
	out := make(map[string]Entry, len(cfg.Auths))
	for key, e := range cfg.Auths {
		ent := Entry{Username: e.Username, Password: e.Password}
		if e.Auth != "" {
			raw, err := base64.StdEncoding.DecodeString(e.Auth)
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
