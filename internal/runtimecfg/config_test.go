package runtimecfg

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/verdict"
)

var (
	ctd16 = nodeview.RuntimeBinary{Path: "/usr/bin/containerd", ModulePath: "github.com/containerd/containerd/cmd/containerd"}
	ctd22 = nodeview.RuntimeBinary{Path: "/usr/local/bin/containerd", ModulePath: "github.com/containerd/containerd/v2", ModuleVersion: "v2.2.9"}
	ctd20 = nodeview.RuntimeBinary{Path: "/usr/local/bin/containerd", ModulePath: "github.com/containerd/containerd/v2", ModuleVersion: "v2.0.5"}
)

// writeRoot lays files out under a new node root.
func writeRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func plan(t *testing.T, root string, rb nodeview.RuntimeBinary, registry string, byDigest bool) (*Config, *Plan, error) {
	t.Helper()
	c, err := Load(root, rb, Options{})
	if err != nil {
		return c, nil, err
	}
	view, _ := nodeview.Load(root)
	p, err := c.Plan(context.Background(), view, registry, byDigest)
	return c, p, err
}

func order(p *Plan) string {
	var s []string
	for _, e := range p.Endpoints {
		s = append(s, string(e.Role)+":"+e.Scheme+"://"+e.Host+e.Path)
	}
	return strings.Join(s, " ")
}

func codes(ws []verdict.Warning) string {
	var s []string
	for _, w := range ws {
		s = append(s, w.Code)
	}
	return strings.Join(s, ",")
}

func TestRuntimeVersion(t *testing.T) {
	root := writeRoot(t, map[string]string{"var/lib/dpkg/status": "Package: runc\nStatus: install ok installed\nVersion: 1.1.5\n\nPackage: containerd\nStatus: install ok installed\nVersion: 1.6.20~ds1-1+deb12u3\n\n"})
	r := detectContainerd(root, ctd16)
	if r.Version != "1.6.20" || r.Major() != 1 || r.Minor() != 6 || !strings.Contains(r.VersionSource, "dpkg") {
		t.Errorf("dpkg: %+v", r)
	}
	r = detectContainerd(t.TempDir(), ctd16)
	if r.Version != "1.x" || r.Major() != 1 || r.Minor() != -1 {
		t.Errorf("module path only: %+v", r)
	}
	r = detectContainerd(root, ctd22)
	if r.Version != "2.2.9" || !r.AtLeast(2, 1) || r.AtLeast(2, 3) {
		t.Errorf("build info: %+v", r)
	}
	if r := detectContainerd(t.TempDir(), nodeview.RuntimeBinary{}); r.Version != "" || r.Major() != -1 {
		t.Errorf("nothing: %+v", r)
	}
}

// The k3s layout: config_path elsewhere; the default certs.d holds a stale
// directory that the runtime never reads.
func TestPlanConfigPathElsewhere(t *testing.T) {
	root := writeRoot(t, map[string]string{
		"etc/containerd/config.toml": "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".registry]\n  config_path = \"/var/lib/rancher/k3s/agent/etc/containerd/certs.d\"\n",
		"var/lib/rancher/k3s/agent/etc/containerd/certs.d/docker.io/hosts.toml": "server = \"https://registry-1.docker.io\"\n[host.\"https://mirror.lab:5000\"]\n  capabilities = [\"pull\", \"resolve\"]\n",
		"etc/containerd/certs.d/docker.io/hosts.toml":                           "[host.\"https://stale.example\"]\n",
	})
	c, p, err := plan(t, root, ctd16, "docker.io", false)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := order(p), "mirror:https://mirror.lab:5000/v2 registry:https://registry-1.docker.io/v2"; got != want {
		t.Errorf("plan %s, want %s", got, want)
	}
	if p.HostsDir != "/var/lib/rancher/k3s/agent/etc/containerd/certs.d/docker.io" {
		t.Errorf("hosts dir %q", p.HostsDir)
	}
	if p.Endpoints[0].Namespace != "docker.io" || p.Endpoints[1].Namespace != "" {
		t.Errorf("ns: %+v", p.Endpoints)
	}
	if !strings.HasSuffix(c.Settings[len(c.Settings)-1].Source, "config.toml:3") && !hasSetting(c, "registry.config_path", "/etc/containerd/config.toml:3") {
		t.Errorf("config_path source: %+v", c.Settings)
	}
	if c.PullPath != PullLocal {
		t.Errorf("1.x pull path %q", c.PullPath)
	}
}

func hasSetting(c *Config, key, source string) bool {
	for _, s := range c.Settings {
		if s.Key == key && s.Source == source {
			return true
		}
	}
	return false
}

// containerd 1.6 without config_path reads no certs.d: the plan is the
// registry alone, and the unread directory is a warning.
func TestPlan16DefaultReadsNoCertsD(t *testing.T) {
	root := writeRoot(t, map[string]string{
		"etc/containerd/certs.d/registry.lab/hosts.toml": "[host.\"https://mirror.lab\"]\n",
	})
	c, p, err := plan(t, root, ctd16, "registry.lab", false)
	if err != nil {
		t.Fatal(err)
	}
	if got := order(p); got != "registry:https://registry.lab/v2" {
		t.Errorf("plan %s", got)
	}
	if c.Mode != ModeLegacy || codes(p.Warnings) != "config.certs-d-unread" {
		t.Errorf("mode %s, warnings %v", c.Mode, p.Warnings)
	}
	// containerd 2.0 reads the same directory by default ...
	_, p, err = plan(t, root, ctd20, "registry.lab", false)
	if err != nil {
		t.Fatal(err)
	}
	if got := order(p); got != "mirror:https://mirror.lab/v2 registry:https://registry.lab/v2" {
		t.Errorf("2.0 plan %s", got)
	}
	// ... but 2.1+'s transfer service takes the default list as one
	// directory (containerd#12415, seen with the real 2.2.9).
	c, p, err = plan(t, root, ctd22, "registry.lab", false)
	if err != nil {
		t.Fatal(err)
	}
	if got := order(p); got != "registry:https://registry.lab/v2" || !strings.Contains(codes(c.Warnings), "config.transfer-path-list") {
		t.Errorf("2.2 plan %s, warnings %v", got, c.Warnings)
	}
}

// GKE's layout: legacy inline mirrors, in order, then the registry.
func TestPlanLegacyMirrors(t *testing.T) {
	root := writeRoot(t, map[string]string{
		"etc/containerd/config.toml": `version = 2
[plugins."io.containerd.grpc.v1.cri".registry.mirrors."docker.io"]
  endpoint = ["https://mirror.gcr.io", "mirror2.lab:5000"]
[plugins."io.containerd.grpc.v1.cri".registry.mirrors."*"]
  endpoint = ["http://localhost:5001"]
[plugins."io.containerd.grpc.v1.cri".registry.configs."mirror2.lab:5000".tls]
  insecure_skip_verify = true
`,
	})
	_, p, err := plan(t, root, ctd16, "docker.io", false)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := order(p), "mirror:https://mirror.gcr.io/v2 mirror:https://mirror2.lab:5000/v2 registry:https://registry-1.docker.io/v2"; got != want {
		t.Errorf("plan %s, want %s", got, want)
	}
	if !p.Endpoints[1].TLS.SkipVerify || p.Endpoints[0].TLS.SkipVerify || !p.Hosts[1].TLS.InsecureSkipVerify {
		t.Errorf("tls: %+v", p.Endpoints)
	}
	if p.Endpoints[0].Source != "/etc/containerd/config.toml:2" || p.Endpoints[2].Source != "default" {
		t.Errorf("sources: %q %q", p.Endpoints[0].Source, p.Endpoints[2].Source)
	}
	// "*" serves a registry without its own entry.
	_, p, err = plan(t, root, ctd16, "quay.io", false)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := order(p), "mirror:http://localhost:5001/v2 registry:https://quay.io/v2"; got != want {
		t.Errorf("plan %s, want %s", got, want)
	}
	// On containerd 2.x configs.tls is not read: a warning, and no skip.
	c, p, err := plan(t, root, ctd22, "docker.io", false)
	if err != nil {
		t.Fatal(err)
	}
	if p.Endpoints[1].TLS.SkipVerify || !strings.Contains(codes(c.Warnings), "config.legacy-ignored") {
		t.Errorf("2.x: %+v %v", p.Endpoints[1].TLS, c.Warnings)
	}
	if c.PullPath != PullLocal || !strings.Contains(c.PullPathReason, "mirrors") {
		t.Errorf("2.x with mirrors: pull path %s (%s)", c.PullPath, c.PullPathReason)
	}
}

func TestMirrorsWithConfigPathRefused(t *testing.T) {
	root := writeRoot(t, map[string]string{
		"etc/containerd/config.toml": "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".registry]\nconfig_path = \"/etc/containerd/certs.d\"\n[plugins.\"io.containerd.grpc.v1.cri\".registry.mirrors.\"docker.io\"]\nendpoint = [\"https://m\"]\n",
	})
	for _, rb := range []nodeview.RuntimeBinary{ctd16, ctd22} {
		_, _, err := plan(t, root, rb, "docker.io", false)
		ve, ok := verdict.AsError(err)
		if !ok || ve.Cause != "config.containerd" || !strings.Contains(ve.Error(), "/etc/containerd/config.toml:4") {
			t.Errorf("%s: %v", rb.ModulePath, err)
		}
	}
}

func TestCorruptConfigNamesFileAndLine(t *testing.T) {
	root := writeRoot(t, map[string]string{
		"etc/containerd/config.toml":   "version = 2\nimports = [\"/etc/containerd/conf.d/*.toml\"]\n",
		"etc/containerd/conf.d/a.toml": "version = 2\n\n[plugins.\"io.containerd.grpc.v1.cri\".registry\nconfig_path = 1\n",
	})
	c, err := Load(root, ctd16, Options{})
	ve, ok := verdict.AsError(err)
	if !ok || ve.Cause != "config.containerd" || ve.Layer != verdict.LayerConfig || !strings.Contains(ve.Error(), "/etc/containerd/conf.d/a.toml:3") {
		t.Fatalf("%v", err)
	}
	if len(c.Files) != 1 {
		t.Errorf("files read before the corrupt one: %+v", c.Files)
	}
	// A value of the wrong type fails the CRI plugin, naming the line.
	root = writeRoot(t, map[string]string{
		"etc/containerd/config.toml": "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".registry]\nconfig_path = 1\n",
	})
	_, err = Load(root, ctd16, Options{})
	if ve, ok := verdict.AsError(err); !ok || ve.Cause != "config.containerd" || !strings.Contains(ve.Error(), "config.toml:3") {
		t.Errorf("type error: %v", err)
	}
	// A missing import stops containerd.
	root = writeRoot(t, map[string]string{"etc/containerd/config.toml": "version = 2\nimports = [\"/etc/containerd/missing.toml\"]\n"})
	if _, err := Load(root, ctd16, Options{}); err == nil || !strings.Contains(err.Error(), "missing.toml") {
		t.Errorf("missing import: %v", err)
	}
}

func TestVersion3On16Ignored(t *testing.T) {
	root := writeRoot(t, map[string]string{
		"etc/containerd/config.toml":                     "version = 3\n[plugins.\"io.containerd.cri.v1.images\".registry]\nconfig_path = \"/etc/containerd/certs.d\"\n",
		"etc/containerd/certs.d/registry.lab/hosts.toml": "[host.\"https://mirror.lab\"]\n",
	})
	c, p, err := plan(t, root, ctd16, "registry.lab", false)
	if err != nil {
		t.Fatal(err)
	}
	if order(p) != "registry:https://registry.lab/v2" || !strings.Contains(codes(c.Warnings), "config.version-ignored") {
		t.Errorf("1.6 on v3: %s %v", order(p), c.Warnings)
	}
	c, p, err = plan(t, root, ctd22, "registry.lab", false)
	if err != nil {
		t.Fatal(err)
	}
	if order(p) != "mirror:https://mirror.lab/v2 registry:https://registry.lab/v2" || len(c.Warnings) != 0 {
		t.Errorf("2.2 on v3: %s %v", order(p), c.Warnings)
	}
	if c.PullPath != PullTransfer {
		t.Errorf("2.2 default pull path %s", c.PullPath)
	}
	c, _, _ = plan(t, root, ctd20, "registry.lab", false)
	if c.PullPath != PullLocal {
		t.Errorf("2.0 pull path %s", c.PullPath)
	}
}

func TestHostsLints(t *testing.T) {
	root := writeRoot(t, map[string]string{
		"etc/containerd/certs.d/docker.io/hosts.toml": "server = \"https://registry-1.docker.io\"\n[host.\"https://digest.lab\"]\n  capabilities = [\"pull\"]\n[host.\"https://digest.lab\".auth]\n  username = \"u\"\n",
		"etc/containerd/certs.d/reg.lab/hosts.toml":   "ca = \"/etc/ca.pem\"\n",
		"etc/containerd/certs.d/port.lab/hosts.toml":  "[host.\"https://m\"]\n",
		"etc/ca.pem": testCA(t),
	})
	_, p, err := plan(t, root, ctd20, "docker.io", false)
	if err != nil {
		t.Fatal(err)
	}
	if got := codes(p.Warnings); got != "config.hosts-toml-auth,config.mirror-digest-only" {
		t.Errorf("docker.io lints %s", got)
	}
	_, p, _ = plan(t, root, ctd20, "docker.io", true)
	if strings.Contains(codes(p.Warnings), "digest-only") {
		t.Errorf("a digest reference uses the digest-only mirror: %v", p.Warnings)
	}
	_, p, _ = plan(t, root, ctd20, "reg.lab", false)
	if !strings.Contains(codes(p.Warnings), "config.hosts-toml-root-tls") {
		t.Errorf("root tls: %v", p.Warnings)
	}
	_, p, err = plan(t, root, ctd20, "port.lab:5000", false)
	if err != nil {
		t.Fatal(err)
	}
	if codes(p.Warnings) != "config.hosts-dir-port" || order(p) != "registry:https://port.lab:5000/v2" {
		t.Errorf("port: %s %v", order(p), p.Warnings)
	}
}

// testCA is a self-signed CA certificate in PEM.
func testCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "lab CA"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func TestDefaultDirAndHostPort(t *testing.T) {
	root := writeRoot(t, map[string]string{
		"etc/containerd/config.toml":                     "version = 3\n[plugins.'io.containerd.cri.v1.images'.registry]\nconfig_path = '/etc/containerd/certs.d'\n",
		"etc/containerd/certs.d/_default/hosts.toml":     "[host.\"https://catchall.lab\"]\n  capabilities = [\"pull\", \"resolve\"]\n",
		"etc/containerd/certs.d/reg.lab:5000/hosts.toml": "server = \"https://reg.lab:5000\"\n[host.\"https://m5000.lab\"]\n  skip_verify = true\n  dial_timeout = \"2s\"\n  override_path = true\n",
	})
	_, p, err := plan(t, root, ctd22, "quay.io", false)
	if err != nil {
		t.Fatal(err)
	}
	if order(p) != "mirror:https://catchall.lab/v2 registry:https://quay.io/v2" || p.HostsDir != "/etc/containerd/certs.d/_default" {
		t.Errorf("_default: %s in %s", order(p), p.HostsDir)
	}
	_, p, err = plan(t, root, ctd22, "reg.lab:5000", false)
	if err != nil {
		t.Fatal(err)
	}
	e := p.Endpoints[0]
	if e.Host != "m5000.lab" || !e.TLS.SkipVerify || e.DialTimeout != "2s" || !e.OverridePath || e.Path != "" {
		t.Errorf("host:port dir: %+v", e)
	}
}

// Without a containerd binary under the root, containerd 2.0's rules are
// assumed and said so.
func TestUnknownRuntimeAssumes20(t *testing.T) {
	root := writeRoot(t, map[string]string{"etc/docker/certs.d/registry.lab/hosts.toml": "[host.\"https://mirror.lab\"]\n"})
	c, p, err := plan(t, root, nodeview.RuntimeBinary{}, "registry.lab", false)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Runtime.Assumed || !hasSetting(c, "runtime version", "no containerd binary with a version under the root: containerd 2.0's rules assumed") {
		t.Errorf("%+v %+v", c.Runtime, c.Settings)
	}
	if order(p) != "mirror:https://mirror.lab/v2 registry:https://registry.lab/v2" {
		t.Errorf("plan %s", order(p))
	}
}

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]string{"v2.2.9": "2.2.9", "1.6.20~ds1-1+deb12u3": "1.6.20", "1.7-0ubuntu1": "1.7.0", "2.1.0-rc.1": "2.1.0"} {
		v, ok := parseVersion(in)
		if got := fmt.Sprintf("%d.%d.%d", v.major, v.minor, v.patch); !ok || got != want {
			t.Errorf("parseVersion(%q) = %s %v, want %s", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "(devel)", "v2", "x1.2", "1234567890.1"} {
		if _, ok := parseVersion(in); ok {
			t.Errorf("parseVersion(%q) ok", in)
		}
	}
}
