package keychain

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"

	"github.com/pullpath/pullpath/internal/verdict"
)

// Source kinds of the runtime's own credentials.
const (
	// KindHostsHeader is a hosts.toml [host."…".header] Authorization.
	KindHostsHeader = "hosts.toml header"
	// KindConfigAuth is containerd's registry.configs."<host>".auth
	// (k3s/RKE2 registries.yaml, Bottlerocket's
	// settings.container-registry.credentials).
	KindConfigAuth = "containerd config.toml auth"
)

// HeaderCredential returns the credential a hosts.toml header carries
// for a host (file is the hosts.toml, for the source): its Authorization
// header, Basic decoded to the user it names, any other scheme kept whole
// as the secret. containerd sends these headers on every request to the
// host (remotes/docker/config ConfigureHosts: RegistryHost.Header).
func HeaderCredential(file string, h http.Header) (Credential, bool) {
	v := h.Get("Authorization")
	if v == "" {
		return Credential{}, false
	}
	c := Credential{Source: Source{Kind: KindHostsHeader, Name: file}, Key: "Authorization"}
	scheme, rest, _ := strings.Cut(v, " ")
	if strings.EqualFold(scheme, "basic") {
		if dec, err := base64.StdEncoding.DecodeString(strings.TrimSpace(rest)); err == nil {
			if u, p, ok := strings.Cut(string(dec), ":"); ok {
				c.Username, c.Password = u, p
				return c, true
			}
		}
	}
	c.Password = v
	return c, true
}

// ConfigAuthCredential is containerd's registry.configs."<host>".auth as
// a credential (source names the table and file).
func ConfigAuthCredential(host, source, username, password, identityToken string) Credential {
	c := Credential{Source: Source{Kind: KindConfigAuth, Name: source}, Key: host, Username: username, Password: password}
	if username == "" && identityToken != "" {
		c.Password = identityToken
	}
	return c
}

// CodeHostsHeader is the warning for a host that gets a hosts.toml
// Authorization header.
const CodeHostsHeader = verdict.CodeAuthHostsHeaderCredential

// HeaderNotes returns a warning for every host of routes that receives a
// hosts.toml Authorization header, saying whose credential it stands in
// for (cred: the kubelet's, nil when it sends none). toRealm says the
// runtime sends the header on the token requests the host's challenge
// draws as well (containerd 2.1+: runtimecfg Config.Headers).
func HeaderNotes(routes []Routed, cred *Credential, toRealm bool) []Note {
	var out []Note
	for _, r := range routes {
		if r.Credential == nil || r.Credential.Source.Kind != KindHostsHeader {
			continue
		}
		instead := "the kubelet sends no credential for this image"
		if cred != nil && !cred.Anonymous() {
			instead = "it is sent in place of the kubelet's " + cred.Name() + ", which this host sees only if it answers 401 to the header"
		}
		realm := ""
		if toRealm {
			realm = " and, from containerd 2.1, on the token requests its challenge draws, to the realm that challenge names (which may be another host)"
		}
		out = append(out, Note{Code: CodeHostsHeader, Message: fmt.Sprintf(
			"%s: %s sets the Authorization header for %s, which containerd sends on every request there%s; %s", r.Host, r.Credential.Source.Name, r.Host, realm, instead)})
	}
	return out
}
