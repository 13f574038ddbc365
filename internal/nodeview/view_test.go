package nodeview

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pullpath/pullpath/internal/testpki"
	"github.com/pullpath/pullpath/internal/verdict"
)

func TestLoad(t *testing.T) {
	nodeCA := testpki.MustCA(t, "node root CA")
	otherCA := testpki.MustCA(t, "other CA")
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"/run/systemd/resolve/stub-resolv.conf": "nameserver 127.0.0.53\nsearch corp.example\n",
		"/etc/resolv.conf":                      "->/run/systemd/resolve/stub-resolv.conf",
		"/etc/hosts":                            "127.0.0.1 localhost\n10.1.2.3 myreg.azurecr.io\nnot-an-ip x\n",
		"/etc/ssl/certs/ca-certificates.crt":    string(nodeCA.PEM),
	})
	v, err := Load(root)
	if err != nil {
		t.Fatalf("Load(%s) error = %v", root, err)
	}
	if diff := cmp.Diff(addrs("127.0.0.53"), v.Resolv.Nameservers, cmpAddr); diff != "" {
		t.Errorf("Load resolv.conf through an absolute symlink (-want +got):\n%s", diff)
	}
	if got := v.LookupHosts("myreg.azurecr.io"); len(got) != 1 || got[0] != netip.MustParseAddr("10.1.2.3") {
		t.Errorf("LookupHosts(myreg.azurecr.io) = %v, want [10.1.2.3]", got)
	}
	if !trusts(t, v.Roots, nodeCA, "registry.example") {
		t.Errorf("Load: node trust store does not trust the node CA")
	}
	if trusts(t, v.Roots, otherCA, "registry.example") {
		t.Errorf("Load: node trust store trusts a CA that is not in it")
	}
	if diff := cmp.Diff([]string{"/etc/ssl/certs/ca-certificates.crt"}, v.RootsFiles); diff != "" {
		t.Errorf("Load RootsFiles (-want +got):\n%s", diff)
	}
	if len(v.Problems) != 1 || v.Problems[0].Cause != "config.hosts-file" || !strings.Contains(v.Problems[0].Error(), "line 3") {
		t.Errorf("Load problems = %v, want one config.hosts-file problem naming line 3", v.Problems)
	}
	if v.HostsDir != "/etc/containerd/certs.d" {
		t.Errorf("Load HostsDir = %q, want /etc/containerd/certs.d", v.HostsDir)
	}
}

func TestLoadFailures(t *testing.T) {
	ca := testpki.MustCA(t, "node root CA")
	tests := []struct {
		name      string
		files     map[string]string
		dirs      []string // node paths created as directories
		wantCause string
		wantFile  string // node path the error must name
		wantWarn  string
	}{
		{
			name:     "missing resolv.conf means localhost, with a warning",
			files:    map[string]string{"/etc/ssl/cert.pem": string(ca.PEM)},
			wantWarn: "dns.no-resolv-conf",
		},
		{
			name:      "resolv.conf is a directory",
			files:     map[string]string{"/etc/ssl/cert.pem": string(ca.PEM)},
			dirs:      []string{"/etc/resolv.conf"},
			wantCause: "config.resolv-conf",
			wantFile:  "/etc/resolv.conf",
		},
		{
			name:      "resolv.conf names no usable nameserver",
			files:     map[string]string{"/etc/resolv.conf": "nameserver dns.corp.example\n", "/etc/ssl/cert.pem": string(ca.PEM)},
			wantCause: "config.resolv-conf",
			wantFile:  "/etc/resolv.conf",
		},
		{
			name:      "hosts is a directory",
			files:     map[string]string{"/etc/resolv.conf": "nameserver 10.0.0.1\n", "/etc/ssl/cert.pem": string(ca.PEM)},
			dirs:      []string{"/etc/hosts"},
			wantCause: "config.hosts-file",
			wantFile:  "/etc/hosts",
		},
		{
			name:      "trust bundle holds no certificate",
			files:     map[string]string{"/etc/resolv.conf": "nameserver 10.0.0.1\n", "/etc/pki/tls/certs/ca-bundle.crt": "not a PEM\n"},
			wantCause: "config.ca-file",
			wantFile:  "/etc/pki/tls/certs/ca-bundle.crt",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeFiles(t, root, tt.files)
			for _, d := range tt.dirs {
				if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			v, err := Load(root)
			if v == nil {
				t.Fatalf("Load() = nil view, want a partial view")
			}
			if tt.wantCause == "" {
				if err != nil {
					t.Fatalf("Load() error = %v, want nil", err)
				}
			} else {
				e, ok := verdict.AsError(err)
				if !ok || e.Cause != tt.wantCause || e.Layer != verdict.LayerConfig {
					t.Fatalf("Load() error = %v, want cause %s", err, tt.wantCause)
				}
				if !strings.Contains(e.Error(), filepath.Join(root, tt.wantFile)) {
					t.Errorf("Load() error = %q, want it to name %s", e.Error(), filepath.Join(root, tt.wantFile))
				}
			}
			if tt.wantWarn != "" {
				found := false
				for _, w := range v.Warnings {
					found = found || w.Code == tt.wantWarn
				}
				if !found {
					t.Errorf("Load() warnings = %v, want %s", v.Warnings, tt.wantWarn)
				}
			}
			if len(v.Resolv.Nameservers) == 0 {
				t.Errorf("Load() partial view has no nameservers")
			}
		})
	}
}

func TestLoadTrustDirs(t *testing.T) {
	a, b := testpki.MustCA(t, "bundle CA"), testpki.MustCA(t, "dir CA")
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"/etc/resolv.conf": "nameserver 10.0.0.1\n",
		"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem": string(a.PEM),
		"/usr/share/extra/dir-ca.pem":                       string(b.PEM),
		"/etc/pki/tls/certs/dir-ca.pem":                     "->/usr/share/extra/dir-ca.pem",
		"/etc/pki/tls/certs/abcd.0":                         "->dir-ca.pem",
	})
	v, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if !trusts(t, v.Roots, a, "x.example") || !trusts(t, v.Roots, b, "x.example") {
		t.Errorf("Load: trust store misses the bundle or the directory CA")
	}
	want := []string{"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", "/etc/pki/tls/certs/dir-ca.pem"}
	if diff := cmp.Diff(want, v.RootsFiles); diff != "" {
		t.Errorf("RootsFiles (-want +got):\n%s", diff)
	}
}

func TestLoadResolvedUpstream(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"run/systemd/resolve/stub-resolv.conf": "nameserver 127.0.0.53\noptions edns0 trust-ad\nsearch internal.cloudapp.net\n",
		"run/systemd/resolve/resolv.conf":      "nameserver 168.63.129.16\nsearch internal.cloudapp.net\n",
	})
	// Ubuntu's /etc/resolv.conf is a link into /run: it must be followed
	// inside the root.
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../run/systemd/resolve/stub-resolv.conf", filepath.Join(root, "etc", "resolv.conf")); err != nil {
		t.Fatal(err)
	}
	v, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Resolv.Nameservers; len(got) != 1 || got[0].String() != "127.0.0.53" {
		t.Fatalf("resolv.conf through the symlink under root = %v, want the stub", got)
	}
	if v.ResolvedUpstream == nil || len(v.ResolvedUpstream.Nameservers) != 1 || v.ResolvedUpstream.Nameservers[0].String() != "168.63.129.16" {
		t.Errorf("ResolvedUpstream = %+v, want 168.63.129.16", v.ResolvedUpstream)
	}
	// Not behind the stub: no upstream list.
	root2 := t.TempDir()
	writeFiles(t, root2, map[string]string{"etc/resolv.conf": "nameserver 10.0.0.10\n", "run/systemd/resolve/resolv.conf": "nameserver 168.63.129.16\n"})
	if v2, _ := Load(root2); v2.ResolvedUpstream != nil {
		t.Errorf("ResolvedUpstream = %+v without the stub, want nil", v2.ResolvedUpstream)
	}
}
