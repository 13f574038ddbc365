package nodeview

import (
	"crypto/tls"
	"debug/buildinfo"
	"go/version"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// loadRuntime reads containerd's service and binary under root, as Load does.
func loadRuntime(root string) RuntimeBinary { return runtimeOf(root, readContainerdService(root)) }

func TestClientHelloCurves(t *testing.T) {
	classic := []tls.CurveID{tls.X25519, tls.CurveP256, tls.CurveP384, tls.CurveP521}
	mlkem := append([]tls.CurveID{tls.X25519MLKEM768}, classic...)
	cases := []struct {
		rb       RuntimeBinary
		want     []tls.CurveID
		noteHas  string
		wantNote bool
	}{
		{RuntimeBinary{Path: "/usr/bin/containerd", GoVersion: "go1.19.8"}, classic, "no post-quantum", true}, // Debian 12's containerd 1.6.20
		{RuntimeBinary{Path: "/usr/bin/containerd", GoVersion: "go1.22.12"}, classic, "no post-quantum", true},
		{RuntimeBinary{Path: "/usr/bin/containerd", GoVersion: "go1.23.4"}, mlkem, "X25519Kyber768Draft00", true},
		{RuntimeBinary{Path: "/usr/bin/containerd", GoVersion: "go1.23.4", DefaultGODEBUG: "tlskyber=0"}, classic, "no post-quantum", true},
		{RuntimeBinary{Path: "/usr/bin/containerd", GoVersion: "go1.24.1"}, mlkem, "X25519MLKEM768", true},
		{RuntimeBinary{Path: "/usr/bin/containerd", GoVersion: "go1.25.3", GODEBUG: "x509sha1=1,tlsmlkem=0"}, classic, "no post-quantum", true},
		// The service's GODEBUG wins over the compiled-in default, and the last setting of a key wins.
		{RuntimeBinary{Path: "/usr/bin/containerd", GoVersion: "go1.24.1", DefaultGODEBUG: "tlsmlkem=0", GODEBUG: "tlsmlkem=1"}, mlkem, "X25519MLKEM768", true},
		{RuntimeBinary{Path: "/usr/bin/containerd", GoVersion: "go1.24.1", GODEBUG: "tlsmlkem=0,tlsmlkem=1"}, mlkem, "X25519MLKEM768", true},
		{RuntimeBinary{Path: "/usr/bin/containerd", GoVersion: "go1.26.0", GODEBUG: "tlssecpmlkem=0"}, mlkem, "X25519MLKEM768", true},
		{RuntimeBinary{Path: "/usr/bin/containerd", GoVersion: runtime.Version()}, nil, "defaults of this probe", true},
		{RuntimeBinary{Path: "/usr/bin/containerd"}, nil, "", false}, // no build information
		{RuntimeBinary{}, nil, "", false},
	}
	for _, tc := range cases {
		got, note := tc.rb.ClientHelloCurves()
		if !slices.Equal(got, tc.want) {
			t.Errorf("%+v: curves %v, want %v", tc.rb, got, tc.want)
		}
		if (note != "") != tc.wantNote || !strings.Contains(note, tc.noteHas) {
			t.Errorf("%+v: note %q, want one containing %q", tc.rb, note, tc.noteHas)
		}
	}
}

func TestLoadRuntime(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("unit ExecStart and its GODEBUG", func(t *testing.T) {
		root := t.TempDir()
		writeFiles(t, root, map[string]string{
			"/usr/bin/containerd":                                 "not an ELF file",
			"/opt/k8s/containerd":                                 string(data),
			"/lib/systemd/system/containerd.service":              "[Service]\nExecStart=/usr/bin/containerd\n",
			"/etc/systemd/system/containerd.service.d/10-go.conf": "[Service]\nEnvironment=GODEBUG=tlsmlkem=0\nExecStart=\nExecStart=/opt/k8s/containerd --log-level info\n",
		})
		rb := loadRuntime(root)
		if rb.Path != "/opt/k8s/containerd" || rb.GoVersion != runtime.Version() || rb.GODEBUG != "tlsmlkem=0" {
			t.Fatalf("loadRuntime = %+v, want /opt/k8s/containerd, %s, GODEBUG tlsmlkem=0", rb, runtime.Version())
		}
	})
	t.Run("no unit, not a Go binary", func(t *testing.T) {
		root := t.TempDir()
		writeFiles(t, root, map[string]string{"/usr/local/bin/containerd": "#!/bin/sh\n"})
		rb := loadRuntime(root)
		if rb.Path != "/usr/local/bin/containerd" || rb.GoVersion != "" {
			t.Fatalf("loadRuntime = %+v, want the path and no Go version", rb)
		}
	})
	t.Run("a symlink out of the root stays inside it", func(t *testing.T) {
		root := t.TempDir()
		// Absolute: resolved under root, where it does not exist.
		writeFiles(t, root, map[string]string{"/usr/bin/containerd": "->" + self})
		if rb := loadRuntime(root); rb.GoVersion != "" {
			t.Fatalf("loadRuntime followed a symlink out of the root: %+v", rb)
		}
	})
	t.Run("this machine's containerd", func(t *testing.T) {
		bi, err := buildinfo.ReadFile("/usr/bin/containerd")
		if err != nil {
			t.Skipf("no containerd with Go build information at /usr/bin/containerd (%v)", err)
		}
		rb := loadRuntime("/")
		if rb.GoVersion != bi.GoVersion || !version.IsValid(rb.GoVersion) {
			t.Fatalf("loadRuntime(/) = %+v, want Go %s", rb, bi.GoVersion)
		}
		_, note := rb.ClientHelloCurves()
		t.Logf("%s: %s", rb.Path, note)
	})
}
