package lab

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pullpath/pullpath/internal/verdict"
)

// Expect is the verdict a correct probe gives for a scenario.
type Expect struct {
	OK    bool          `json:"ok"`
	Layer verdict.Layer `json:"layer"`
	Cause string        `json:"cause,omitempty"`
	Role  verdict.Role  `json:"role,omitempty"`
	// Endpoint is the failing host:port (always with the port).
	Endpoint string `json:"endpoint,omitempty"`
	// Warnings are warning codes that must appear (others may too).
	Warnings []string `json:"warnings,omitempty"`
}

// Scenario is one served situation: an image, the node root to probe it
// from, the identity to use, and the expected verdict.
type Scenario struct {
	Name, Description string
	// Image is the full reference to pull.
	Image string
	// Root is the node root for this scenario: etc/resolv.conf (the lab
	// DNS), etc/hosts, etc/ssl/certs/ca-certificates.crt (the lab CA) and
	// etc/containerd/certs.d (empty unless the scenario needs a hosts.toml).
	Root string
	// Username and Password are the credentials to pull with; empty means
	// anonymous.
	Username, Password string
	// Platform is the node platform, "os/arch".
	Platform string
	Expect   Expect
}

// rootSpec is what a scenario's root differs in.
type rootSpec struct {
	nameservers []string // default: the lab DNS
	hosts       []string // extra etc/hosts lines
	hostsTOML   string   // etc/containerd/certs.d/<registry host>/hosts.toml
	proxyEnv    string   // Environment= of a containerd systemd drop-in (the node's proxy)
}

type scenarioSpec struct {
	name, description string
	host              string // the registry host's short name; default "registry"
	repo              string // default "team/app"
	tag               string // default "1.0"
	creds             bool   // pull with the valid identity
	badPassword       bool   // pull with the valid user and a wrong password
	platform          string // default "linux/amd64"
	root              rootSpec
	expect            Expect
}

func fail(cause string, role verdict.Role, endpoint string) Expect {
	return Expect{Layer: verdict.LayerOf(cause), Cause: cause, Role: role, Endpoint: endpoint}
}

// scenarioSpecs is the scenario table: data, one row per scenario. The
// mechanism of each fault is in its description and, in detail, in
// buildZones (names), makeCerts (certificates), front (repository
// prefixes), tokenService (identities) and blobHost (corruption).
func (l *Lab) scenarioSpecs() []scenarioSpec {
	reg := l.Endpoint(hRegistry)
	auth := l.Endpoint(hAuth)
	deadMirror := "https://" + l.host(hDeadMirror)
	return []scenarioSpec{
		{name: "healthy", description: "Anonymous pull of a public image; touches the registry, the token service and the blob host.",
			expect: Expect{OK: true, Layer: verdict.LayerNone}},
		{name: "healthy-auth", description: "Pull of a private image with valid credentials.",
			repo: "private/app", creds: true, expect: Expect{OK: true, Layer: verdict.LayerNone}},
		{name: "dns-nxdomain", description: "The registry name is not in DNS (NXDOMAIN).",
			host: hNX, expect: fail(verdict.CodeDNSNXDomain, verdict.RoleRegistry, l.Endpoint(hNX))},
		{name: "dns-resolver-down", description: "The node's only nameserver has nothing listening; on loopback UDP the query is refused at once (ICMP port unreachable).",
			root:   rootSpec{nameservers: []string{l.Addrs.DeadDNS.String()}},
			expect: fail(verdict.CodeDNSUnreachable, verdict.RoleRegistry, reg)},
		{name: "dns-private-zone", description: "The registry name resolves through privatelink CNAMEs to a public address (" + l.PublicAddr.String() + "), as when the node's resolver cannot see the private zone.",
			host: hPrivReg, expect: fail(verdict.CodeDNSPrivateZone, verdict.RoleRegistry, l.Endpoint(hPrivReg))},
		{name: "route-refused", description: "The registry name resolves to an address where nothing listens.",
			host: hRefused, expect: fail(verdict.CodeRouteRefused, verdict.RoleRegistry, l.Endpoint(hRefused))},
		{name: "tls-untrusted", description: "The registry's certificate is signed by a CA the node does not trust.",
			host: hUntrusted, expect: fail(verdict.CodeTLSUntrusted, verdict.RoleRegistry, l.Endpoint(hUntrusted))},
		{name: "tls-name", description: "The registry's certificate is valid only for " + hOtherName + "." + Domain + ".",
			host: hWrongName, expect: fail(verdict.CodeTLSName, verdict.RoleRegistry, l.Endpoint(hWrongName))},
		{name: "tls-expired", description: "The registry's certificate expired yesterday.",
			host: hExpired, expect: fail(verdict.CodeTLSExpired, verdict.RoleRegistry, l.Endpoint(hExpired))},
		{name: "auth-anonymous", description: "Anonymous pull of a private repository: the token service refuses an anonymous token with 401 (ACR style).",
			repo: "private/app", expect: fail(verdict.CodeAuthNoCredentials, verdict.RoleAuth, auth)},
		{name: "auth-bad-credentials", description: "Pull of a private repository with a wrong password: the token service answers 401.",
			repo: "private/app", badPassword: true, expect: fail(verdict.CodeAuthBadCredentials, verdict.RoleAuth, auth)},
		{name: "authz-scope", description: "The token service issues a token with no access to forbidden/app; the registry answers 401 error=\"insufficient_scope\".",
			repo: "forbidden/app", creds: true, expect: fail(verdict.CodeAuthzDenied, verdict.RoleRegistry, reg)},
		{name: "authz-denied", description: "With a valid token the registry answers 403 DENIED for denied/app.",
			repo: "denied/app", creds: true, expect: fail(verdict.CodeAuthzDenied, verdict.RoleRegistry, reg)},
		{name: "manifest-unknown", description: "The tag does not exist (404 MANIFEST_UNKNOWN).",
			tag: "nope", expect: fail(verdict.CodeManifestUnknown, verdict.RoleRegistry, reg)},
		{name: "manifest-platform", description: "The index of foreign/app has " + strings.Join(ForeignPlatforms(), " and ") + " only; the node is " + NodePlatform() + " (this machine, so a runtime here fails too).",
			repo: "foreign/app", platform: NodePlatform(), expect: fail(verdict.CodeManifestPlatform, verdict.RoleRegistry, reg)},
		{name: "healthy-index", description: "A multi-platform index (linux/amd64, linux/arm64); the node is linux/arm64, so its manifest is picked from the index.",
			repo: "multi/app", platform: "linux/arm64", expect: Expect{OK: true, Layer: verdict.LayerNone}},
		{name: "auth-host-down", description: "The registry's challenge names a token realm on " + hAuthDown + "." + Domain + ", where nothing listens.",
			repo: "authdown/app", creds: true, expect: fail(verdict.CodeRouteRefused, verdict.RoleAuth, l.Endpoint(hAuthDown))},
		{name: "blob-nxdomain", description: "Blob downloads are redirected to " + hNXBlob + "." + Domain + ", which is not in DNS.",
			repo: "blobnx/app", creds: true, expect: fail(verdict.CodeDNSNXDomain, verdict.RoleBlob, l.Endpoint(hNXBlob))},
		{name: "blob-refused", description: "Blob downloads are redirected to " + hDeadBlob + "." + Domain + ", where nothing listens.",
			repo: "blobdead/app", creds: true, expect: fail(verdict.CodeRouteRefused, verdict.RoleBlob, l.Endpoint(hDeadBlob))},
		{name: "blob-corrupt", description: "The blob host serves the first layer of corrupt/app with one byte flipped (digest mismatch).",
			repo: "corrupt/app", creds: true, expect: fail(verdict.CodeTransferDigest, verdict.RoleBlob, l.Endpoint(hBlob))},
		{name: "ratelimit", description: "With a valid token the registry answers 429 TOOMANYREQUESTS for ratelimited/app.",
			repo: "ratelimited/app", creds: true, expect: fail(verdict.CodeRegistryRatelimit, verdict.RoleRegistry, reg)},
		{name: "server-error", description: "The registry answers 503 UNAVAILABLE for broken/app.",
			repo: "broken/app", creds: true, expect: fail(verdict.CodeRegistryUnavailable, verdict.RoleRegistry, reg)},
		{name: "mirror-fallback", description: "hosts.toml names a mirror on " + hDeadMirror + "." + Domain + " (nothing listens) before the registry itself, which serves the pull.",
			root: rootSpec{hostsTOML: fmt.Sprintf("# pullpath lab: a dead mirror, then the registry itself\nserver = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n",
				"https://"+l.Registry, deadMirror)},
			expect: Expect{OK: true, Layer: verdict.LayerNone, Warnings: []string{verdict.CodeMirrorUnreachable}}},
		{name: "proxy", description: "containerd's systemd drop-in sets HTTPS_PROXY to the lab proxy; every host is reached through a CONNECT tunnel.",
			root:   rootSpec{proxyEnv: fmt.Sprintf(`"HTTPS_PROXY=http://%s.%s:%d" "NO_PROXY=localhost,127.0.0.1"`, hProxy, Domain, l.ProxyPort)},
			expect: Expect{OK: true, Layer: verdict.LayerNone}},
		{name: "proxy-down", description: "HTTPS_PROXY names " + hDeadProxy + "." + Domain + ", where nothing listens: the node cannot reach the registry at all.",
			root:   rootSpec{proxyEnv: fmt.Sprintf(`"HTTPS_PROXY=http://%s.%s:%d"`, hDeadProxy, Domain, l.ProxyPort)},
			expect: fail(verdict.CodeRouteProxy, verdict.RoleProxy, fmt.Sprintf("%s.%s:%d", hDeadProxy, Domain, l.ProxyPort))},
		{name: "proxy-denied", description: "HTTPS_PROXY names a proxy that refuses the tunnel to the registry (403), as one whose allowlist lacks it.",
			root:   rootSpec{proxyEnv: fmt.Sprintf(`"HTTPS_PROXY=http://%s.%s:%d"`, hProxy, Domain, l.DenyProxyPort)},
			expect: fail(verdict.CodeRouteProxy, verdict.RoleProxy, fmt.Sprintf("%s.%s:%d", hProxy, Domain, l.DenyProxyPort))},
		{name: "proxy-bypass", description: "HTTPS_PROXY names a dead proxy but NO_PROXY covers ." + Domain + ": the pull goes direct.",
			root:   rootSpec{proxyEnv: fmt.Sprintf(`"HTTPS_PROXY=http://%s.%s:%d" "NO_PROXY=.%s"`, hDeadProxy, Domain, l.ProxyPort, Domain)},
			expect: Expect{OK: true, Layer: verdict.LayerNone}},
		{name: "hosts-entry", description: hHostsOnly + "." + Domain + " is not in DNS; the node's etc/hosts maps it to the registry address.",
			host: hHostsOnly, root: rootSpec{hosts: []string{l.Addrs.Registry.String() + " " + hHostsOnly + "." + Domain}},
			expect: Expect{OK: true, Layer: verdict.LayerNone, Warnings: []string{verdict.CodeDNSHostsEntry}}},
		{name: "split-answer", description: "The node has two nameservers; they answer " + hSplit + "." + Domain + " with different addresses (both serve the registry).",
			host: hSplit, root: rootSpec{nameservers: []string{l.Addrs.DNS.String(), l.Addrs.DNS2.String()}},
			expect: Expect{OK: true, Layer: verdict.LayerNone, Warnings: []string{verdict.CodeDNSSplitAnswer}}},
	}
}

// buildScenarios writes every scenario's root under Dir/roots and fills
// l.Scenarios.
func (l *Lab) buildScenarios() error {
	for _, sp := range l.scenarioSpecs() {
		host, repo, t, platform := sp.host, sp.repo, sp.tag, sp.platform
		if host == "" {
			host = hRegistry
		}
		if repo == "" {
			repo = "team/app"
		}
		if t == "" {
			t = tag
		}
		if platform == "" {
			platform = "linux/amd64"
		}
		s := Scenario{
			Name: sp.name, Description: sp.description,
			Image:    l.host(host) + "/" + repo + ":" + t,
			Root:     filepath.Join(l.RootsDir, sp.name),
			Platform: platform,
			Expect:   sp.expect,
		}
		switch {
		case sp.creds:
			s.Username, s.Password = l.Username, l.Password
		case sp.badPassword:
			s.Username, s.Password = l.Username, "wrong-"+l.Password[:6]
		}
		if err := l.writeRoot(s.Root, sp.name, sp.root); err != nil {
			return err
		}
		l.Scenarios = append(l.Scenarios, s)
	}
	return nil
}

// writeRoot writes a node root for one scenario.
func (l *Lab) writeRoot(root, scenario string, spec rootSpec) error {
	ns := spec.nameservers
	if len(ns) == 0 {
		ns = []string{l.Addrs.DNS.String()}
	}
	var resolv strings.Builder
	fmt.Fprintf(&resolv, "# pullpath lab, scenario %s\n", scenario)
	if l.DNSPort != 53 {
		fmt.Fprintf(&resolv, "# the lab's DNS servers listen on port %d, not 53\n", l.DNSPort)
	}
	for _, n := range ns {
		fmt.Fprintf(&resolv, "nameserver %s\n", n)
	}
	resolv.WriteString("options timeout:1 attempts:1\n")
	hosts := "127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n"
	for _, h := range spec.hosts {
		hosts += h + "\n"
	}
	files := map[string]string{
		"etc/resolv.conf":                   resolv.String(),
		"etc/hosts":                         hosts,
		"etc/ssl/certs/ca-certificates.crt": string(l.CAPEM),
	}
	if spec.hostsTOML != "" {
		files["etc/containerd/certs.d/"+l.Registry+"/hosts.toml"] = spec.hostsTOML
	}
	if spec.proxyEnv != "" {
		files["etc/systemd/system/containerd.service.d/http-proxy.conf"] = "# pullpath lab: containerd's proxy environment\n[Service]\nEnvironment=" + spec.proxyEnv + "\n"
	}
	if err := os.MkdirAll(filepath.Join(root, "etc", "containerd", "certs.d"), 0o755); err != nil {
		return fmt.Errorf("writing root of %s: %w", scenario, err)
	}
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("writing root of %s: %w", scenario, err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return fmt.Errorf("writing root of %s: %w", scenario, err)
		}
	}
	return nil
}
