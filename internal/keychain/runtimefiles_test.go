package keychain

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
)

func TestContainerdRuntime(t *testing.T) {
	for _, tt := range []struct {
		major, minor int
		path         string
		want         Runtime
	}{
		{1, 6, "local", Containerd16},
		{1, 7, "", Containerd16},
		{2, 0, "transfer", Containerd2Local}, // 2.0 has no transfer pull for the CRI
		{2, 1, "transfer", Containerd2Transfer},
		{2, 2, "local", Containerd2Local},
		{3, 0, "transfer", Containerd2Transfer},
	} {
		if got := Containerd(tt.major, tt.minor, tt.path); got != tt.want {
			t.Errorf("Containerd(%d, %d, %q) = %s, want %s", tt.major, tt.minor, tt.path, got, tt.want)
		}
		if !tt.want.IsContainerd() {
			t.Errorf("%s is not containerd", tt.want)
		}
	}
	if ContainersImage.IsContainerd() {
		t.Error("containers/image is containerd")
	}
}

func TestHeaderCredential(t *testing.T) {
	basic := http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte("hdr:s3cret"))}}
	c, ok := HeaderCredential("/etc/containerd/certs.d/r/hosts.toml", basic)
	if !ok || c.Username != "hdr" || c.Password != "s3cret" || c.Key != "Authorization" || c.Source.Kind != KindHostsHeader {
		t.Errorf("basic: %+v %v", c, ok)
	}
	c, ok = HeaderCredential("f", http.Header{"Authorization": {"Bearer tok3n"}})
	if !ok || c.Username != "" || c.Password != "Bearer tok3n" || c.Anonymous() {
		t.Errorf("bearer: %+v %v", c, ok)
	}
	if _, ok := HeaderCredential("f", http.Header{"X-Meta": {"v"}}); ok {
		t.Error("a header without Authorization is a credential")
	}
	// Route: the header wins over the kubelet's credential on every
	// containerd rule, for its host only.
	hosts := []Host{PlanHost{Host: "mirror.lab.test", Mirror: true}, PlanHost{Host: "registry.lab.test"}}
	hc, _ := HeaderCredential("/etc/containerd/certs.d/registry.lab.test/hosts.toml", basic)
	up := &Credential{Source: Source{Kind: KindPodSecret, Name: "up"}, Key: "registry.lab.test", Username: "up", Password: "pw-up"}
	for _, rt := range []Runtime{Containerd16, Containerd2Local, Containerd2Transfer} {
		got := Route(rt, "registry.lab.test", "app", hosts, up, Fallbacks{Headers: map[string]Credential{"mirror.lab.test": hc}})
		if got[0].Credential == nil || got[0].Credential.Username != "hdr" || got[1].Credential == nil || got[1].Credential.Username != "up" {
			t.Errorf("%s: %+v", rt, got)
		}
		notes := HeaderNotes(got, up, false)
		if len(notes) != 1 || notes[0].Code != CodeHostsHeader || !strings.Contains(notes[0].Message, `key "registry.lab.test"`) || strings.Contains(notes[0].Message, "token requests") {
			t.Errorf("%s: HeaderNotes = %+v", rt, notes)
		}
		if n := HeaderNotes(got, up, true); len(n) != 1 || !strings.Contains(n[0].Message, "on the token requests its challenge draws") {
			t.Errorf("%s: HeaderNotes toward the realm = %+v", rt, n)
		}
		for _, n := range notes {
			if strings.Contains(n.Message, "s3cret") || strings.Contains(n.Message, "pw-up") {
				t.Errorf("a note shows a secret: %s", n.Message)
			}
		}
		// configs.auth reaches its host only when the kubelet sends
		// nothing.
		fb := Fallbacks{ConfigAuth: map[string]Credential{"mirror.lab.test": ConfigAuthCredential("mirror.lab.test", "registry.configs", "k3s", "pw", "")}}
		if got := Route(rt, "registry.lab.test", "app", hosts, nil, fb); got[0].Presented() != `containerd config.toml auth registry.configs, key "mirror.lab.test"` || got[1].Credential != nil {
			t.Errorf("%s: config auth: %+v", rt, got)
		}
		if got := Route(rt, "registry.lab.test", "app", hosts, up, fb); got[0].Credential.Username != "up" {
			t.Errorf("%s: the kubelet's credential does not win over config auth: %+v", rt, got)
		}
	}
	if tok := ConfigAuthCredential("h", "s", "", "", "idt"); tok.Password != "idt" || tok.Anonymous() {
		t.Errorf("identity token: %+v", tok)
	}
}

// TestHeaderRejectedRetry: a host that answers 401 to its hosts.toml
// header gets containerd's CRI callback next (the kubelet's credential,
// else config.toml's auth), or nothing; a host without a header has one
// attempt only.
func TestHeaderRejectedRetry(t *testing.T) {
	basic := http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte("hdr:s3cret"))}}
	hc, _ := HeaderCredential("/etc/containerd/certs.d/registry.lab.test/hosts.toml", basic)
	hosts := []Host{PlanHost{Host: "mirror.lab.test", Mirror: true}, PlanHost{Host: "registry.lab.test"}}
	up := &Credential{Source: Source{Kind: KindPodSecret, Name: "up"}, Key: "registry.lab.test", Username: "up", Password: "pw-up"}
	k3s := ConfigAuthCredential("mirror.lab.test", "registry.configs", "k3s", "pw", "")
	users := func(cs []*Credential) string {
		var out []string
		for _, c := range cs {
			if c == nil {
				out = append(out, "anonymous")
				continue
			}
			out = append(out, c.Username)
		}
		return strings.Join(out, ",")
	}
	for _, rt := range []Runtime{Containerd16, Containerd2Local, Containerd2Transfer} {
		for _, tc := range []struct {
			name             string
			cred             *Credential
			fb               Fallbacks
			mirror, registry string
			retryNone        bool
		}{
			{"pod secret", up, Fallbacks{Headers: map[string]Credential{"mirror.lab.test": hc}}, "hdr,up", "up", false},
			{"no AuthConfig", nil, Fallbacks{Headers: map[string]Credential{"mirror.lab.test": hc}}, "hdr", "anonymous", true},
			{"no AuthConfig, config.toml auth", nil, Fallbacks{Headers: map[string]Credential{"mirror.lab.test": hc}, ConfigAuth: map[string]Credential{"mirror.lab.test": k3s}}, "hdr,k3s", "anonymous", false},
			{"server_address of the registry", &Credential{Username: "up", Password: "pw-up", ServerAddress: "https://registry.lab.test"}, Fallbacks{Headers: map[string]Credential{"mirror.lab.test": hc}}, "hdr", "up", true},
		} {
			got := Route(rt, "registry.lab.test", "app", hosts, tc.cred, tc.fb)
			if u := users(got[0].Attempts()); u != tc.mirror {
				t.Errorf("%s, %s: mirror attempts %s, want %s", rt, tc.name, u, tc.mirror)
			}
			if u := users(got[1].Attempts()); u != tc.registry {
				t.Errorf("%s, %s: registry attempts %s, want %s", rt, tc.name, u, tc.registry)
			}
			if got[1].OnRejected != nil {
				t.Errorf("%s, %s: a host without a header has a second attempt: %+v", rt, tc.name, got[1].OnRejected)
			}
			r := got[0].OnRejected
			if r == nil {
				t.Fatalf("%s, %s: no second attempt after the header", rt, tc.name)
			}
			if tc.retryNone != (r.Credential == nil) || (tc.retryNone && !strings.Contains(r.Why, "no basic auth credentials")) {
				t.Errorf("%s, %s: retry %+v", rt, tc.name, r)
			}
			for _, s := range []string{"s3cret", "pw-up"} {
				if strings.Contains(r.Why, s) || strings.Contains(got[0].Why, s) {
					t.Errorf("a reason shows a secret: %s", r.Why)
				}
			}
		}
	}
}
