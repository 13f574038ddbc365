package nodeview

import (
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// loadProxy reads containerd's proxy environment under root, as Load does.
func loadProxy(root string) Proxy { return proxyOf(readContainerdService(root)) }

func TestLoadProxy(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  Proxy
	}{
		{"none", map[string]string{"lib/systemd/system/containerd.service": "[Service]\nExecStart=/usr/bin/containerd\n"}, Proxy{}},
		{"drop-in, quoted, several per line", map[string]string{
			"lib/systemd/system/containerd.service":                   "[Service]\nExecStart=/usr/bin/containerd\n",
			"etc/systemd/system/containerd.service.d/http-proxy.conf": "[Service]\nEnvironment=\"HTTPS_PROXY=http://proxy.corp:3128\" \"NO_PROXY=localhost,10.0.0.0/8,.svc\"\n",
		}, Proxy{HTTPSProxy: "http://proxy.corp:3128", NoProxy: "localhost,10.0.0.0/8,.svc", Sources: []string{"/etc/systemd/system/containerd.service.d/http-proxy.conf"}}},
		{"later drop-in wins, /etc replaces same name", map[string]string{
			"usr/lib/systemd/system/containerd.service.d/10-proxy.conf": "[Service]\nEnvironment=HTTPS_PROXY=http://vendor:1\n",
			"etc/systemd/system/containerd.service.d/10-proxy.conf":     "[Service]\nEnvironment=HTTPS_PROXY=http://etc:2\n",
			"etc/systemd/system/containerd.service.d/20-more.conf":      "[Service]\nEnvironment=https_proxy=http://lower:3 HTTP_PROXY=http://plain:4\n",
		}, Proxy{HTTPSProxy: "http://etc:2", HTTPProxy: "http://plain:4", Sources: []string{"/etc/systemd/system/containerd.service.d/10-proxy.conf", "/etc/systemd/system/containerd.service.d/20-more.conf"}}},
		{"empty Environment= resets", map[string]string{
			"etc/systemd/system/containerd.service.d/a.conf": "[Service]\nEnvironment=HTTPS_PROXY=http://gone:1\n",
			"etc/systemd/system/containerd.service.d/b.conf": "[Service]\nEnvironment=\n",
		}, Proxy{}},
		{"EnvironmentFile, optional missing one", map[string]string{
			"etc/systemd/system/containerd.service.d/env.conf": "[Service]\nEnvironmentFile=-/etc/missing\nEnvironmentFile=/etc/default/containerd-proxy\n",
			"etc/default/containerd-proxy":                     "# corp\nexport HTTPS_PROXY=\"http://p:8080\"\nNO_PROXY=.internal\n",
		}, Proxy{HTTPSProxy: "http://p:8080", NoProxy: ".internal", Sources: []string{"/etc/systemd/system/containerd.service.d/env.conf"}}},
		{"other sections ignored", map[string]string{
			"etc/systemd/system/containerd.service.d/x.conf": "[Unit]\nEnvironment=HTTPS_PROXY=http://no:1\n",
		}, Proxy{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeFiles(t, root, tt.files)
			got := loadProxy(root)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("loadProxy mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProxyFor(t *testing.T) {
	p := Proxy{HTTPSProxy: "http://proxy.corp:3128", NoProxy: ".internal.example,10.0.0.0/8"}
	for raw, want := range map[string]string{
		"https://myreg.azurecr.io/v2/":      "http://proxy.corp:3128",
		"https://reg.internal.example/v2/":  "",
		"https://10.1.2.3/v2/":              "",
		"https://127.0.0.1:5000/v2/":        "",
		"http://plain.example/v2/":          "",
		"https://blob.core.windows.net/x/y": "http://proxy.corp:3128",
	} {
		u, _ := url.Parse(raw)
		got, err := p.For(u)
		if err != nil {
			t.Fatalf("For(%s): %v", raw, err)
		}
		gs := ""
		if got != nil {
			gs = got.String()
		}
		if gs != want {
			t.Errorf("For(%s) = %q, want %q", raw, gs, want)
		}
	}
}

func FuzzSplitQuoted(f *testing.F) {
	f.Add(`"A=b c" D=e 'F=g\'h'`)
	f.Fuzz(func(t *testing.T, s string) { _ = splitQuoted(s) })
}
