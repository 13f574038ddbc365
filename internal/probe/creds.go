package probe

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/pullpath/pullpath/internal/registry"
	"github.com/pullpath/pullpath/internal/verdict"
)

// dockerConfig is the dockerconfigjson format (and its legacy .dockercfg form).
type dockerConfig struct {
	Auths       map[string]dockerAuth `json:"auths"`
	CredsStore  string                `json:"credsStore,omitempty"`
	CredHelpers map[string]string     `json:"credHelpers,omitempty"`
}

type dockerAuth struct {
	Auth          string `json:"auth,omitempty"`
	Username      string `json:"username,omitempty"`
	Password      string `json:"password,omitempty"`
	IdentityToken string `json:"identitytoken,omitempty"`
}

// maxCredsFile bounds a credentials file.
const maxCredsFile = 1 << 20

// LoadDockerConfig reads a docker config.json (or a bare dockerconfigjson,
// or the legacy .dockercfg map) and returns the credentials for registry
// host, matched the way the kubelet matches pull secrets.
func LoadDockerConfig(file, host string) (*registry.Credentials, error) {
	data, err := readSmall(file)
	if err != nil {
		return nil, err
	}
	return credsFromDockerConfig(data, file, host)
}

// LoadPullSecret reads a Kubernetes Secret (JSON or YAML) of type
// kubernetes.io/dockerconfigjson or kubernetes.io/dockercfg, or a bare
// dockerconfigjson, and returns the credentials for host.
func LoadPullSecret(file, host string) (*registry.Credentials, error) {
	data, err := readSmall(file)
	if err != nil {
		return nil, err
	}
	var secret struct {
		Kind       string            `json:"kind"`
		Type       string            `json:"type"`
		Data       map[string]string `json:"data"`
		StringData map[string]string `json:"stringData"`
	}
	if err := yaml.Unmarshal(data, &secret); err == nil && secret.Kind == "Secret" {
		for _, key := range []string{".dockerconfigjson", ".dockercfg"} {
			if v, ok := secret.StringData[key]; ok {
				return credsFromDockerConfig([]byte(v), file, host)
			}
			if v, ok := secret.Data[key]; ok {
				raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
				if err != nil {
					return nil, verdict.Errorf("config.credentials", verdict.RoleNone, "", "%s: data[%s] is not base64", file, key)
				}
				return credsFromDockerConfig(raw, file, host)
			}
		}
		return nil, verdict.Errorf("config.credentials", verdict.RoleNone, "", "%s: secret (type %q) has no .dockerconfigjson or .dockercfg key", file, secret.Type)
	}
	return credsFromDockerConfig(data, file, host)
}

func readSmall(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, verdict.Wrap("config.credentials", verdict.RoleNone, "", fmt.Errorf("reading credentials: %w", err))
	}
	defer f.Close()
	buf := make([]byte, maxCredsFile+1)
	n, _ := f.Read(buf)
	for n < len(buf) {
		m, err := f.Read(buf[n:])
		n += m
		if err != nil || m == 0 {
			break
		}
	}
	if n > maxCredsFile {
		return nil, verdict.Errorf("config.credentials", verdict.RoleNone, "", "%s is larger than %d bytes", file, maxCredsFile)
	}
	return buf[:n], nil
}

func credsFromDockerConfig(data []byte, source, host string) (*registry.Credentials, error) {
	var cfg dockerConfig
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, verdict.Errorf("config.credentials", verdict.RoleNone, "", "%s is not a docker config: %v", source, err)
	}
	if cfg.Auths == nil {
		// Legacy .dockercfg: the map itself.
		var legacy map[string]dockerAuth
		if json.Unmarshal(data, &legacy) == nil {
			cfg.Auths = legacy
		}
	}
	key, entry, ok := MatchAuth(cfg.Auths, host)
	if !ok {
		return nil, nil
	}
	c := &registry.Credentials{Username: entry.Username, Password: entry.Password, Source: fmt.Sprintf("%s entry %q", source, key)}
	if entry.Auth != "" {
		raw, err := base64.StdEncoding.DecodeString(entry.Auth)
		if err != nil {
			return nil, verdict.Errorf("config.credentials", verdict.RoleNone, "", "%s: entry %q has an auth field that is not base64", source, key)
		}
		user, pass, found := strings.Cut(string(raw), ":")
		if !found {
			return nil, verdict.Errorf("config.credentials", verdict.RoleNone, "", "%s: entry %q auth is not user:password", source, key)
		}
		c.Username, c.Password = user, pass
	}
	if entry.IdentityToken != "" {
		c.Username, c.Password = "", entry.IdentityToken
	}
	return c, nil
}

// dockerHubAliases are the names under which Docker Hub credentials are kept.
var dockerHubAliases = map[string]bool{"docker.io": true, "index.docker.io": true, "registry-1.docker.io": true, "registry.hub.docker.com": true}

// MatchAuth finds the auths entry for host the way the kubelet's keyring
// does: the key is parsed as a URL (scheme optional), its host may use one
// '*' per label, its port must match, and the longest key wins. Docker Hub's
// aliases (https://index.docker.io/v1/, docker.io, ...) are one registry.
func MatchAuth(auths map[string]dockerAuth, host string) (string, dockerAuth, bool) {
	host = strings.ToLower(host)
	best, bestKey := -1, ""
	var bestEntry dockerAuth
	for key, entry := range auths {
		k := strings.ToLower(key)
		k = strings.TrimPrefix(strings.TrimPrefix(k, "https://"), "http://")
		k, _, _ = strings.Cut(k, "/")
		match := k == host || (dockerHubAliases[k] && dockerHubAliases[host]) || globHost(k, host)
		if match && len(key) > best {
			best, bestKey, bestEntry = len(key), key, entry
		}
	}
	return bestKey, bestEntry, best >= 0
}

func globHost(pattern, host string) bool {
	if !strings.Contains(pattern, "*") {
		return false
	}
	pp, hp := strings.Split(pattern, "."), strings.Split(host, ".")
	if len(pp) != len(hp) {
		return false
	}
	for i := range pp {
		if ok, err := path.Match(pp[i], hp[i]); err != nil || !ok {
			return false
		}
	}
	return true
}
