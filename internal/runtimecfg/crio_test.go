package runtimecfg

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/verdict"
)

// manExample is the EXAMPLE of containers-registries.conf(5) (Debian's
// golang-github-containers-image 5.23 man page; its text says the primary
// is internal-registry-for-example.net, a typo for the .com it configures).
const manExample = `unqualified-search-registries = ["example.com"]

[[registry]]
prefix = "example.com/foo"
insecure = false
blocked = false
location = "internal-registry-for-example.com/bar"

[[registry.mirror]]
location = "example-mirror-0.local/mirror-for-foo"

[[registry.mirror]]
location = "example-mirror-1.local/mirrors/foo"
insecure = true

[[registry]]
location = "registry.com"

[[registry.mirror]]
location = "mirror.registry.com"
`

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func crioRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	all := map[string]string{"usr/bin/crio": "", "etc/containers/policy.json": `{"default":[{"type":"insecureAcceptAnything"}]}`}
	for k, v := range files {
		all[k] = v
	}
	return writeRoot(t, all)
}

func crioPlanOf(t *testing.T, root, image string) (*Config, *Plan, error) {
	t.Helper()
	c, err := Load(root, nodeview.RuntimeBinary{}, Options{})
	if err != nil {
		return c, nil, err
	}
	view, _ := nodeview.Load(root)
	p, err := c.PlanImage(context.Background(), view, image, "", false)
	return c, p, err
}

// sources is the plan as "role:host/repository" in order.
func sources(p *Plan) string {
	var s []string
	for _, e := range p.Endpoints {
		s = append(s, string(e.Role)+":"+e.Host+"/"+e.Repository)
	}
	return strings.Join(s, " ")
}

func TestCRIOPlanRegistriesConf(t *testing.T) {
	for _, tc := range []struct {
		name, conf, image, want, warn, code string
	}{
		{name: "man page example: prefix rewrite, two mirrors in order, then the primary",
			conf: manExample, image: "example.com/foo/image:latest",
			want: "mirror:example-mirror-0.local/mirror-for-foo/image mirror:example-mirror-1.local/mirrors/foo/image registry:internal-registry-for-example.com/bar/image"},
		{name: "man page: the other registry's mirrors only",
			conf: manExample, image: "registry.com/image:latest",
			want: "mirror:mirror.registry.com/image registry:registry.com/image"},
		{name: "no [[registry]] matches: the reference's own host",
			conf: manExample, image: "quay.io/team/app:1", want: "registry:quay.io/team/app"},
		{name: "docker.io is dialled as registry-1.docker.io",
			conf: "", image: "docker.io/library/busybox:1", want: "registry:registry-1.docker.io/library/busybox"},
		{name: "longest prefix wins",
			conf:  "[[registry]]\nprefix = \"lab.test\"\nlocation = \"a.test\"\n[[registry]]\nprefix = \"lab.test/team\"\nlocation = \"b.test/t\"\n",
			image: "lab.test/team/app:1", want: "registry:b.test/t/app"},
		{name: "wildcard subdomain prefix",
			conf: "[[registry]]\nprefix = \"*.lab.test\"\nlocation = \"w.test\"\n", image: "x.lab.test/app:1", want: "registry:w.test/app"},
		{name: "mirror-by-digest-only with a tag: mirror skipped",
			conf:  "[[registry]]\nlocation = \"lab.test\"\nmirror-by-digest-only = true\n[[registry.mirror]]\nlocation = \"m.test\"\n",
			image: "lab.test/app:1", want: "registry:lab.test/app", warn: "config.mirror-digest-only"},
		{name: "mirror-by-digest-only with a digest: mirror used",
			conf:  "[[registry]]\nlocation = \"lab.test\"\nmirror-by-digest-only = true\n[[registry.mirror]]\nlocation = \"m.test\"\n",
			image: "lab.test/app@" + digest, want: "mirror:m.test/app registry:lab.test/app"},
		{name: "pull-from-mirror digest-only per mirror",
			conf:  "[[registry]]\nlocation = \"lab.test\"\n[[registry.mirror]]\nlocation = \"d.test\"\npull-from-mirror = \"digest-only\"\n[[registry.mirror]]\nlocation = \"all.test\"\n",
			image: "lab.test/app:1", want: "mirror:all.test/app registry:lab.test/app", warn: "config.mirror-digest-only"},
		{name: "pull-from-mirror tag-only with a digest",
			conf:  "[[registry]]\nlocation = \"lab.test\"\n[[registry.mirror]]\nlocation = \"t.test\"\npull-from-mirror = \"tag-only\"\n",
			image: "lab.test/app@" + digest, want: "registry:lab.test/app", warn: "config.mirror-tag-only"},
		{name: "blocked registry",
			conf: "[[registry]]\nlocation = \"lab.test\"\nblocked = true\n", image: "lab.test/app:1", code: "config.registry-blocked"},
		{name: "short name, enforcing, two search registries: ambiguous",
			conf: "unqualified-search-registries = [\"a.test\", \"b.test\"]\nshort-name-mode = \"enforcing\"\n", image: "team/app:1", code: "config.short-name"},
		{name: "short name, default mode is enforcing",
			conf: "unqualified-search-registries = [\"a.test\", \"b.test\"]\n", image: "app", code: "config.short-name"},
		{name: "short name, registries.conf permissive: CRI-O's own mode, enforcing, refuses",
			conf: "unqualified-search-registries = [\"a.test\", \"docker.io\"]\nshort-name-mode = \"permissive\"\n", image: "app", code: "config.short-name"},
		{name: "short name, crio.conf disabled: every search registry in order",
			conf: "unqualified-search-registries = [\"a.test\", \"docker.io\"]\nshort-name-mode = \"enforcing\"\n", image: "app",
			want: "registry:a.test/app registry:registry-1.docker.io/library/app"},
		{name: "short name, enforcing, one search registry",
			conf: "unqualified-search-registries = [\"a.test\"]\n", image: "team/app:1", want: "registry:a.test/team/app"},
		{name: "short name with an alias",
			conf: "unqualified-search-registries = [\"a.test\", \"b.test\"]\n[aliases]\n\"app\" = \"c.test/x/app\"\n", image: "app:2", want: "registry:c.test/x/app"},
		{name: "short name, no search registries",
			conf: "", image: "app", code: "config.short-name"},
		{name: "drop-in overrides the main file's registry of the same prefix",
			conf: "[[registry]]\nlocation = \"lab.test\"\n[[registry.mirror]]\nlocation = \"old.test\"\n", image: "lab.test/app:1",
			want: "mirror:new.test/app registry:lab.test/app"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"etc/containers/registries.conf": tc.conf}
			if strings.Contains(tc.name, "crio.conf disabled") {
				files["etc/crio/crio.conf"] = "[crio.image]\nshort_name_mode = \"disabled\"\n"
			}
			if strings.HasPrefix(tc.name, "drop-in") {
				files["etc/containers/registries.conf.d/10-a.conf"] = "[[registry]]\nlocation = \"lab.test\"\n[[registry.mirror]]\nlocation = \"mid.test\"\n"
				files["etc/containers/registries.conf.d/20-b.conf"] = "[[registry]]\nlocation = \"lab.test\"\n[[registry.mirror]]\nlocation = \"new.test\"\n"
				files["etc/containers/registries.conf.d/30-c.txt"] = "[[registry]]\nlocation = \"lab.test\"\nblocked = true\n"
			}
			_, p, err := crioPlanOf(t, crioRoot(t, files), tc.image)
			if tc.code != "" {
				ve, ok := verdict.AsError(err)
				if !ok || ve.Cause != tc.code {
					t.Fatalf("err = %v, want %s", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := sources(p); got != tc.want {
				t.Errorf("plan %q, want %q", got, tc.want)
			}
			if got := codes(p.Warnings); !strings.Contains(got, tc.warn) || (tc.warn == "" && strings.Contains(got, "mirror")) {
				t.Errorf("warnings %q, want %q", got, tc.warn)
			}
			for i, e := range p.Endpoints {
				if e.Order != i+1 || e.Scheme != "https" || e.DialTimeout != "30s" || p.Hosts[i].Repo != e.Repository || !p.Hosts[i].NoNamespace {
					t.Errorf("endpoint %d: %+v / host %+v", i, e, p.Hosts[i])
				}
			}
		})
	}
}

func TestCRIOSources(t *testing.T) {
	root := crioRoot(t, map[string]string{
		"etc/containers/registries.conf": manExample,
		"etc/crio/crio.conf":             "[crio]\nroot = \"/var/lib/containers/storage\"\n[crio.image]\nglobal_auth_file = \"/etc/crio/auth.json\"\npause_image = \"x\"\nfrobnicate = 1\n",
		"etc/crio/crio.conf.d/01-a.conf": "[crio.image]\nglobal_auth_file = \"/var/lib/kubelet/config.json\"\n",
		"var/lib/kubelet/config.json":    `{"auths":{"example-mirror-0.local":{"auth":"dTpzZWNyZXQtcGFzcw=="}}}`,
	})
	c, p, err := crioPlanOf(t, root, "example.com/foo/image:latest")
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]Setting{}
	for _, s := range c.Settings {
		set[s.Key] = s
	}
	if s := set["crio.image.global_auth_file"]; s.Value != "/var/lib/kubelet/config.json" || s.Source != "/etc/crio/crio.conf.d/01-a.conf:2" {
		t.Errorf("global_auth_file %+v, want the drop-in's value with its line", s)
	}
	if s := set["unqualified-search-registries"]; s.Source != "/etc/containers/registries.conf:1" {
		t.Errorf("search %+v", s)
	}
	if codes(c.Warnings) != "config.unknown-key" || !strings.Contains(c.Warnings[0].Message, "/etc/crio/crio.conf:6") {
		t.Errorf("warnings %v, want crio.image.frobnicate at line 6", c.Warnings)
	}
	if p.Endpoints[0].Source != "/etc/containers/registries.conf:9" || p.Endpoints[1].Source != "/etc/containers/registries.conf:12" || p.Endpoints[2].Source != "/etc/containers/registries.conf:3" {
		t.Errorf("sources %s %s %s", p.Endpoints[0].Source, p.Endpoints[1].Source, p.Endpoints[2].Source)
	}
	if !p.Endpoints[1].TLS.SkipVerify || !p.Endpoints[1].TLS.HTTPFallback || p.Endpoints[0].TLS.SkipVerify {
		t.Errorf("insecure mirror TLS: %+v / %+v", p.Endpoints[0].TLS, p.Endpoints[1].TLS)
	}
	if p.CRIO.Registry != "example.com/foo" || p.CRIO.RegistrySource != "/etc/containers/registries.conf:3" {
		t.Errorf("matched %q at %q", p.CRIO.Registry, p.CRIO.RegistrySource)
	}
	// Credentials: the auth file's key for the first mirror, anonymous for
	// the others, and never the secret.
	if len(p.CRIO.Credentials) != 3 || p.CRIO.Credentials[0].Presented() != `node docker config /var/lib/kubelet/config.json, key "example-mirror-0.local"` || p.CRIO.Credentials[1].Presented() != "anonymous" {
		var got []string
		for _, r := range p.CRIO.Credentials {
			got = append(got, r.Presented())
		}
		t.Errorf("credentials %q", got)
	}
	js, _ := json.Marshal(p)
	if strings.Contains(string(js), "secret-pass") || strings.Contains(string(js), "dTpzZWNyZXQtcGFzcw") {
		t.Errorf("the plan's JSON holds the secret: %s", js)
	}
	// The request's credential, the namespaced file (not read: no
	// namespace), global_auth_file.
	if len(p.CRIO.AuthFiles) != 3 || !strings.Contains(p.CRIO.AuthFiles[1], "not read, the namespace is unknown") || !strings.Contains(p.CRIO.AuthFiles[2], "/var/lib/kubelet/config.json") {
		t.Errorf("auth files %q", p.CRIO.AuthFiles)
	}
}

func TestCRIOCorruptFiles(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		code  string
		want  string
	}{
		{"crio.conf not TOML", map[string]string{"etc/crio/crio.conf": "[crio.image]\nglobal_auth_file = \n"}, "config.crio", "/etc/crio/crio.conf:2"},
		{"crio.conf drop-in wrong type", map[string]string{"etc/crio/crio.conf.d/10.conf": "[crio.image]\n\ninsecure_registries = \"a\"\n"}, "config.crio", "/etc/crio/crio.conf.d/10.conf:3"},
		{"registries.conf not TOML", map[string]string{"etc/containers/registries.conf": "[[registry]]\nlocation = \"a.test\"\nblocked = tru\n"}, "config.registries-conf", "/etc/containers/registries.conf:3"},
		{"registries.conf drop-in not TOML", map[string]string{"etc/containers/registries.conf.d/50.conf": "x = [\n"}, "config.registries-conf", "/etc/containers/registries.conf.d/50.conf:"},
		{"registries.conf v1 format", map[string]string{"etc/containers/registries.conf": "[registries.search]\nregistries = ['a.test']\n"}, "config.registries-conf", "v1"},
		{"bad wildcard prefix", map[string]string{"etc/containers/registries.conf": "[[registry]]\nprefix = \"*.a.test/x\"\nlocation = \"b.test\"\n"}, "config.registries-conf", "Wildcarded prefix"},
		{"certs.d client cert without key", map[string]string{"etc/containers/certs.d/a.test/client.cert": "x"}, "config.ca-file", "missing key client.key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := crioPlanOf(t, crioRoot(t, tc.files), "a.test/app:1")
			ve, ok := verdict.AsError(err)
			if !ok || ve.Cause != tc.code || !strings.Contains(ve.Error(), tc.want) {
				t.Fatalf("err = %v, want %s naming %q", err, tc.code, tc.want)
			}
		})
	}
}

func TestCRIOUnknownRegistriesKey(t *testing.T) {
	root := crioRoot(t, map[string]string{"etc/containers/registries.conf": "[[registry]]\nlocation = \"a.test\"\nmirror-by-digest = true\n"})
	c, _, err := crioPlanOf(t, root, "a.test/app:1")
	if err != nil {
		t.Fatal(err)
	}
	if codes(c.Warnings) != "config.unknown-key" || !strings.Contains(c.Warnings[0].Message, "registries.conf:3") {
		t.Errorf("warnings %v", c.Warnings)
	}
}

func TestCRIOPolicy(t *testing.T) {
	for _, tc := range []struct{ policy, image, reqs, scope, warn string }{
		{`{"default":[{"type":"insecureAcceptAnything"}]}`, "a.test/app:1", "insecureAcceptAnything", "default", ""},
		{`{"default":[{"type":"insecureAcceptAnything"}],"transports":{"docker":{"a.test/team":[{"type":"reject"}]}}}`, "a.test/team/app:1", "reject", "a.test/team", "config.signature-policy"},
		{`{"default":[{"type":"reject"}],"transports":{"docker":{"*.test":[{"type":"signedBy","keyType":"GPGKeys","keyPath":"/k"}]}}}`, "x.a.test/app:1", "signedBy", "*.test", "config.signature-policy"},
		{`{"default":[{"type":"reject"}],"transports":{"docker":{"a.test/app:1":[{"type":"insecureAcceptAnything"}],"a.test":[{"type":"sigstoreSigned"}]}}}`, "a.test/app:1", "insecureAcceptAnything", "a.test/app:1", ""},
		{`{"default":[{"type":"reject"}],"transports":{"docker":{"":[{"type":"insecureAcceptAnything"}]}}}`, "a.test/app:1", "insecureAcceptAnything", "", ""},
	} {
		root := crioRoot(t, map[string]string{"etc/containers/policy.json": tc.policy})
		_, p, err := crioPlanOf(t, root, tc.image)
		if err != nil {
			t.Fatal(err)
		}
		got := p.CRIO.Policy
		if strings.Join(got.Requirements, ",") != tc.reqs || got.Scope != tc.scope || codes(p.Warnings) != tc.warn {
			t.Errorf("%s %s: policy %+v warnings %q, want %s at %q, %q", tc.image, tc.policy, got, codes(p.Warnings), tc.reqs, tc.scope, tc.warn)
		}
	}
}

// CRI-O reads every file of crio.conf.d, subdirectories included, in
// lexical walk order (pkg/config UpdateFromPath): a later file's key wins.
func TestCRIODropInsWalk(t *testing.T) {
	root := crioRoot(t, map[string]string{
		"etc/crio/crio.conf":               "[crio.image]\nglobal_auth_file = \"/main\"\n",
		"etc/crio/crio.conf.d/10-a.conf":   "[crio.image]\nglobal_auth_file = \"/a\"\n",
		"etc/crio/crio.conf.d/20-b/x.toml": "[crio.image]\nglobal_auth_file = \"/b\"\n",
		"etc/crio/crio.conf.d/05-notes":    "[crio.image]\nsignature_policy = \"/p.json\"\n",
	})
	c, err := Load(root, nodeview.RuntimeBinary{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range c.Files {
		files = append(files, f.Path)
	}
	if got := strings.Join(files[:4], " "); got != "/etc/crio/crio.conf /etc/crio/crio.conf.d/05-notes /etc/crio/crio.conf.d/10-a.conf /etc/crio/crio.conf.d/20-b/x.toml" {
		t.Errorf("files %s", got)
	}
	if c.crio.image.GlobalAuthFile != "/b" || c.crio.from["global_auth_file"] != "/etc/crio/crio.conf.d/20-b/x.toml:2" || c.crio.image.SignaturePolicy != "/p.json" {
		t.Errorf("image %+v from %v", c.crio.image, c.crio.from)
	}
	// A drop-in that is not TOML stops CRI-O, whatever its name.
	root = crioRoot(t, map[string]string{"etc/crio/crio.conf.d/README": "CRI-O drop-ins go here\n"})
	if _, err := Load(root, nodeview.RuntimeBinary{}, Options{}); err == nil || !strings.Contains(err.Error(), "/etc/crio/crio.conf.d/README:1") {
		t.Errorf("err = %v, want config.crio naming README:1", err)
	}
}

func TestCRIOVersionFromPackages(t *testing.T) {
	root := crioRoot(t, map[string]string{"var/lib/dpkg/status": "Package: cri-o\nStatus: install ok installed\nVersion: 1.31.3-1.1\n\n"})
	c, err := Load(root, nodeview.RuntimeBinary{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Runtime.Name != CRIO || c.Runtime.Version != "1.31.3" || !strings.Contains(c.Runtime.VersionSource, "package cri-o") || c.Runtime.Binary != "/usr/bin/crio" {
		t.Errorf("runtime %+v", c.Runtime)
	}
}
