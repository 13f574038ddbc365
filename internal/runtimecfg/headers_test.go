package runtimecfg

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/testpki"
)

// TestHeaders: config.toml's registry.headers go, before a host's own
// hosts.toml headers, on every registry request; the token requests get
// none before containerd 2.1, the host's from 2.1, and registry.headers too
// on the local pull only (the rule measured on real daemons in test/netlab
// TestConfiguredHeaderRows). CRI-O sends none.
func TestHeaders(t *testing.T) {
	v2 := "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".registry]\n  config_path = \"/etc/containerd/certs.d\"\n[plugins.\"io.containerd.grpc.v1.cri\".registry.headers]\n  X-Mark = [\"global\"]\n"
	v3 := func(extra string) string {
		return "version = 3\n[plugins.\"io.containerd.cri.v1.images\"]\n" + extra + "[plugins.\"io.containerd.cri.v1.images\".registry]\n  config_path = \"/etc/containerd/certs.d\"\n[plugins.\"io.containerd.cri.v1.images\".registry.headers]\n  X-Mark = [\"global\"]\n"
	}
	host := http.Header{"X-Mark": {"host"}, "Authorization": {"Basic eDp5"}}
	both := http.Header{"X-Mark": {"global", "host"}, "Authorization": {"Basic eDp5"}}
	for _, tt := range []struct {
		name, version, config string
		files                 map[string]string
		req, token            http.Header
	}{
		{name: "1.6", version: "containerd://1.6.20", config: v2, req: both},
		{name: "1.7", version: "containerd://1.7.27", config: v2, req: both},
		{name: "2.0, local pull only", version: "containerd://2.0.7", config: v3(""), req: both},
		{name: "2.1 transfer service", version: "containerd://2.1.0", config: v3(""), req: both, token: host},
		{name: "2.2 local pull", version: "containerd://2.2.9", config: v3("  use_local_image_pull = true\n"), req: both, token: both},
		{name: "2.2 without registry.headers", version: "containerd://2.2.9", config: "version = 3\n", req: host, token: host},
		{name: "CRI-O", version: "cri-o://1.34.2", files: map[string]string{"etc/crio/crio.conf": "[crio.image]\n"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"etc/containerd/config.toml": tt.config}
			for k, v := range tt.files {
				files[k] = v
			}
			root := writeRoot(t, files)
			c, err := Load(root, nodeview.RuntimeBinary{}, Options{RuntimeVersion: tt.version})
			if err != nil {
				t.Fatal(err)
			}
			req, token := c.Headers(host)
			if !reflect.DeepEqual(req, tt.req) || !reflect.DeepEqual(token, tt.token) {
				t.Errorf("Headers = %v, %v; want %v, %v (pull path %q)", req, token, tt.req, tt.token, c.PullPath)
			}
		})
	}
	var none *Config
	if req, token := none.Headers(host); !reflect.DeepEqual(req, host) || token != nil {
		t.Errorf("nil config: Headers = %v, %v; want the host's alone, none on tokens", req, token)
	}
}

// TestHostTreeRequired: containerd 1.x refuses a hosts.toml with no
// top-level host table ("invalid `host` tree") and pulls from the
// registry's default endpoint with the directory's cert files; 2.x reads
// the same file as written. An empty [host] table is enough for 1.x.
func TestHostTreeRequired(t *testing.T) {
	dpkg16 := "Package: containerd\nStatus: install ok installed\nVersion: 1.6.20~ds1-1+deb12u3\n\n"
	cfg := "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".registry]\n  config_path = \"/etc/containerd/certs.d\"\n"
	rootOnly := "server = \"https://mirror.example\"\n[header]\n  X-Mark = [\"host\"]\n"
	for _, tt := range []struct {
		name     string
		rb       nodeview.RuntimeBinary
		hosts    string
		want     string // order()
		header   bool   // the endpoint carries the header
		warn     bool   // config.hosts-toml-no-host-table
		fromCert bool   // the fallback's CA is the directory's .crt
	}{
		{"1.6 refuses a root-only file", ctd16, rootOnly, "registry:https://registry.example/v2", false, true, true},
		{"1.6 takes an empty [host] table", ctd16, rootOnly + "[host]\n", "registry:https://mirror.example/v2", true, false, false},
		{"2.0 reads the root-only file", ctd20, rootOnly, "registry:https://mirror.example/v2", true, false, false},
		{"2.2 reads the root-only file", ctd22, rootOnly, "registry:https://mirror.example/v2", true, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{
				"etc/containerd/config.toml":                         cfg,
				"etc/containerd/certs.d/registry.example/hosts.toml": tt.hosts,
				"etc/containerd/certs.d/registry.example/ca.crt":     string(testpki.MustCA(t, "certs.d CA").PEM),
			}
			if tt.rb.ModulePath == ctd16.ModulePath {
				files["var/lib/dpkg/status"] = dpkg16
			}
			root := writeRoot(t, files)
			_, p, err := plan(t, root, tt.rb, "registry.example", false)
			if err != nil {
				t.Fatal(err)
			}
			if got := order(p); got != tt.want {
				t.Errorf("plan %s, want %s", got, tt.want)
			}
			if got := len(p.Hosts) > 0 && p.Hosts[len(p.Hosts)-1].Header.Get("X-Mark") == "host"; got != tt.header {
				t.Errorf("the header is on the plan's host: %v, want %v", got, tt.header)
			}
			if got := strings.Contains(codes(p.Warnings), "config.hosts-toml-no-host-table"); got != tt.warn {
				t.Errorf("warnings %s; want config.hosts-toml-no-host-table: %v", codes(p.Warnings), tt.warn)
			}
			if tt.fromCert {
				h := p.Hosts[0]
				if len(h.CAFiles) != 1 || !strings.HasSuffix(h.CAFiles[0], "ca.crt") || h.Refused == "" || !strings.Contains(p.Endpoints[0].Source, "hosts.toml refused") {
					t.Errorf("the fallback host %+v (source %q), want the directory's ca.crt and the refused file named", h, p.Endpoints[0].Source)
				}
			}
		})
	}
}
