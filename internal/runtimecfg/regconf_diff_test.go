package runtimecfg

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/distribution/reference"
	podref "go.podman.io/image/v5/docker/reference"
	"go.podman.io/image/v5/pkg/shortnames"
	"go.podman.io/image/v5/pkg/sysregistriesv2"
	"go.podman.io/image/v5/types"

	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/verdict"
)

// The differential test: the same node files through regconf.go's rules
// and through containers/image's pkg/sysregistriesv2 (v5.42.1, the
// library CRI-O links), which only tests import. Both must refuse the
// same configurations, and for every image both must agree on the
// [[registry]] that matches, blocked, the pull sources (endpoint
// location, insecure, the rewritten reference, mirrors filtered for tag
// and digest references) and the short-name facts (search list, mode,
// aliases).

// rcFiles is one node's registries configuration: the main file ("" is
// no file), drop-ins by name and short-name-aliases.conf ("" is none).
type rcFiles struct {
	main     string
	dropIns  map[string]string
	userAlia string
}

func (f rcFiles) write(t testing.TB, root string) {
	t.Helper()
	put := func(rel, content string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if f.main != "" {
		put("etc/containers/registries.conf", f.main)
	}
	for name, c := range f.dropIns {
		put("etc/containers/registries.conf.d/"+name, c)
	}
	if f.userAlia != "" {
		put("var/cache/containers/short-name-aliases.conf", f.userAlia)
	}
}

// libSys is the SystemContext that makes containers/image read root's
// files only (a missing main file read as empty, as CRI-O's default search
// finds none).
func libSys(root string) *types.SystemContext {
	main := filepath.Join(root, "etc/containers/registries.conf")
	if _, err := os.Stat(main); err != nil {
		main = os.DevNull
	}
	return &types.SystemContext{SystemRegistriesConfPath: main,
		SystemRegistriesConfDirPath: filepath.Join(root, "etc/containers/registries.conf.d"),
		UserShortNameAliasConfPath:  filepath.Join(root, "var/cache/containers/short-name-aliases.conf")}
}

// rcImages are the qualified references tried on every configuration:
// fixed ones, and for each prefix the configuration names, a repository
// under it by tag and by digest.
func rcImages(confs ...string) []string {
	out := []string{"example.com/foo/image:latest", "registry.com/image:latest", "docker.io/library/busybox:1",
		"quay.io/team/app:1", "lab.test/app:1", "lab.test/app@" + digest, "a.test/x/app:1", "b.a.test/app@" + digest,
		"a.test:5000/app:1", "localhost/app:1", "localhost:5000/app@" + digest}
	for _, c := range confs {
		for _, line := range strings.Split(c, "\n") {
			k, v, ok := strings.Cut(line, "=")
			if !ok || (strings.TrimSpace(k) != "prefix" && strings.TrimSpace(k) != "location") {
				continue
			}
			p := strings.Trim(strings.TrimSpace(v), `"'`)
			p = strings.TrimPrefix(p, "*.")
			if p == "" {
				continue
			}
			if strings.HasPrefix(strings.TrimSpace(line), "prefix") && strings.HasPrefix(strings.Trim(strings.TrimSpace(v), `"'`), "*.") {
				p = "x." + p
			}
			out = append(out, p+"/app:1", p+"/team/app@"+digest, p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// rcShortNames are the short names tried on every configuration.
var rcShortNames = []string{"app", "team/app:1", "app@" + digest, "busybox", "foo", "image"}

// oursOutcome is the rules' answer: "load error", or one line per fact.
func oursOutcome(t testing.TB, root string, images []string) (string, *registriesConf) {
	rc, err := loadRegistriesConf(root)
	if err != nil {
		if _, ok := verdict.AsError(err); !ok {
			t.Fatalf("load error without a verdict: %v", err)
		}
		return "load error", rc
	}
	var b strings.Builder
	mode := rc.conf.modeSet
	if mode == "" {
		mode = "permissive"
	}
	fmt.Fprintf(&b, "search %q (set %v) mode %s\n", rc.conf.search, rc.conf.search != nil, mode)
	for _, name := range []string{"app", "busybox", "foo", "image", "team/app"} {
		v, _, ok, err := rc.alias(name)
		switch {
		case err != nil:
			fmt.Fprintf(&b, "alias %s: error\n", name)
		case ok:
			a, err := parseAliasValue(v)
			if err != nil {
				t.Fatalf("alias %s = %q validated at load, then %v", name, v, err)
			}
			fmt.Fprintf(&b, "alias %s = %s\n", name, a)
		}
	}
	for _, img := range images {
		fmt.Fprintf(&b, "%s: ", img)
		ref, err := parseNormalizedNamed(img)
		if err != nil {
			b.WriteString("not a reference\n")
			continue
		}
		ref = reference.TagNameOnly(ref)
		reg := rc.conf.findRegistry(ref.Name())
		if reg == nil {
			b.WriteString("no registry\n")
			continue
		}
		fmt.Fprintf(&b, "prefix %s blocked %v:", reg.Prefix, reg.Blocked)
		srcs, err := reg.pullSources(ref)
		if err != nil {
			b.WriteString(" sources error\n")
			continue
		}
		for _, s := range srcs {
			fmt.Fprintf(&b, " [%s insecure=%v %s]", s.endpoint.Location, s.endpoint.Insecure, s.ref)
		}
		b.WriteString("\n")
	}
	return b.String(), rc
}

// libOutcome is containers/image's answer, in oursOutcome's form.
func libOutcome(t testing.TB, root string, images []string) string {
	sys := libSys(root)
	sysregistriesv2.InvalidateCache()
	if _, err := sysregistriesv2.TryUpdatingCache(sys); err != nil {
		return "load error"
	}
	var b strings.Builder
	search, err := sysregistriesv2.UnqualifiedSearchRegistries(sys)
	if err != nil {
		t.Fatal(err)
	}
	mode, err := sysregistriesv2.GetShortNameMode(sys)
	if err != nil {
		t.Fatal(err)
	}
	modes := map[types.ShortNameMode]string{types.ShortNameModeDisabled: "disabled", types.ShortNameModePermissive: "permissive", types.ShortNameModeEnforcing: "enforcing"}
	fmt.Fprintf(&b, "search %q (set %v) mode %s\n", search, search != nil, modes[mode])
	for _, name := range []string{"app", "busybox", "foo", "image", "team/app"} {
		a, _, err := sysregistriesv2.ResolveShortNameAlias(sys, name)
		switch {
		case err != nil:
			fmt.Fprintf(&b, "alias %s: error\n", name)
		case a != nil:
			fmt.Fprintf(&b, "alias %s = %s\n", name, a)
		}
	}
	for _, img := range images {
		fmt.Fprintf(&b, "%s: ", img)
		ref, err := podref.ParseNormalizedNamed(img)
		if err != nil {
			b.WriteString("not a reference\n")
			continue
		}
		ref = podref.TagNameOnly(ref)
		reg, err := sysregistriesv2.FindRegistry(sys, ref.Name())
		if err != nil {
			t.Fatal(err)
		}
		if reg == nil {
			b.WriteString("no registry\n")
			continue
		}
		fmt.Fprintf(&b, "prefix %s blocked %v:", reg.Prefix, reg.Blocked)
		srcs, err := reg.PullSourcesFromReference(ref)
		if err != nil {
			b.WriteString(" sources error\n")
			continue
		}
		for _, s := range srcs {
			fmt.Fprintf(&b, " [%s insecure=%v %s]", s.Endpoint.Location, s.Endpoint.Insecure, s.Reference)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// rcCorpus is the differential test's corpus: the man page's examples,
// the configurations of the CRI-O tests (internal/runtimecfg and the
// namespace tier's crioRows, with their host names), and edge cases of
// every rule.
func rcCorpus() map[string]rcFiles {
	const dead, mirror, reg = "dead.netlab.test", "mirror.netlab.test", "registry.netlab.test"
	one := func(s string) rcFiles { return rcFiles{main: s} }
	c := map[string]rcFiles{
		"man EXAMPLE":            one(manExample),
		"man prefix rewrite":     one("[[registry]]\nprefix = \"example.com/foo\"\nlocation = \"internal-registry-for-example.com/bar\"\n"),
		"man wildcard as-is":     one("[[registry]]\nprefix = \"*.example.com\"\n"),
		"man docker.io":          one("[[registry]]\nprefix = \"docker.io/library/alpine\"\nlocation = \"m.test/alpine\"\n[[registry]]\nprefix = \"docker.io/alpine\"\nlocation = \"n.test/alpine\"\n"),
		"man aliases":            one("unqualified-search-registries = [\"registry1.com\", \"registry2.com\"]\n[aliases]\n\"image\" = \"registry.com/namespace/image\"\n"),
		"man pull-from-mirror":   one("[[registry]]\nlocation = \"lab.test\"\n[[registry.mirror]]\nlocation = \"d.test\"\npull-from-mirror = \"digest-only\"\n[[registry.mirror]]\nlocation = \"t.test\"\npull-from-mirror = \"tag-only\"\n[[registry.mirror]]\nlocation = \"all.test\"\npull-from-mirror = \"all\"\n"),
		"man digest-only":        one("[[registry]]\nlocation = \"lab.test\"\nmirror-by-digest-only = true\n[[registry.mirror]]\nlocation = \"m.test\"\n"),
		"man credential helpers": one("credential-helpers = [\"containers-auth.json\", \"pass\"]\nadditional-layer-store-auth-helper = \"als-helper\"\n"),

		"crio longest prefix":   one("[[registry]]\nprefix = \"lab.test\"\nlocation = \"a.test\"\n[[registry]]\nprefix = \"lab.test/team\"\nlocation = \"b.test/t\"\n"),
		"crio wildcard":         one("[[registry]]\nprefix = \"*.lab.test\"\nlocation = \"w.test\"\n"),
		"crio blocked":          one("[[registry]]\nlocation = \"lab.test\"\nblocked = true\n"),
		"crio enforcing":        one("unqualified-search-registries = [\"a.test\", \"b.test\"]\nshort-name-mode = \"enforcing\"\n"),
		"crio permissive":       one("unqualified-search-registries = [\"a.test\", \"docker.io\"]\nshort-name-mode = \"permissive\"\n"),
		"crio alias":            one("unqualified-search-registries = [\"a.test\", \"b.test\"]\n[aliases]\n\"app\" = \"c.test/x/app\"\n"),
		"crio unknown key":      one("[[registry]]\nlocation = \"a.test\"\nmirror-by-digest = true\n"),
		"crio not TOML":         one("[[registry]]\nlocation = \"a.test\"\nblocked = tru\n"),
		"crio v1":               one("[registries.search]\nregistries = ['a.test']\n"),
		"crio bad wildcard":     one("[[registry]]\nprefix = \"*.a.test/x\"\nlocation = \"b.test\"\n"),
		"netlab prefix rewrite": one("[[registry]]\nprefix = \"" + dead + "/team\"\nlocation = \"" + reg + "/rewritten\"\n"),
		"netlab two mirrors":    one("[[registry]]\nlocation = \"" + reg + "\"\n\n[[registry.mirror]]\nlocation = \"" + dead + "\"\n\n[[registry.mirror]]\nlocation = \"" + mirror + "\"\n"),
		"netlab digest-only":    one("[[registry]]\nlocation = \"" + dead + "\"\nmirror-by-digest-only = true\n\n[[registry.mirror]]\nlocation = \"" + mirror + "\"\n"),
		"netlab mirror path":    one("[[registry]]\nlocation = \"" + dead + "\"\n\n[[registry.mirror]]\nlocation = \"" + mirror + "/nothere\"\n"),
		"netlab blocked":        one("[[registry]]\nlocation = \"" + reg + "\"\nblocked = true\n"),
		"netlab two search":     one("unqualified-search-registries = [\"" + mirror + "\", \"" + reg + "\"]\nshort-name-mode = \"enforcing\"\n"),
		"netlab one search":     one("unqualified-search-registries = [\"" + mirror + "\"]\nshort-name-mode = \"enforcing\"\n"),
		"netlab insecure":       one("[[registry]]\nlocation = \"" + reg + "\"\ninsecure = true\n"),
		"crio drop-ins": {main: "[[registry]]\nlocation = \"lab.test\"\n[[registry.mirror]]\nlocation = \"old.test\"\n", dropIns: map[string]string{
			"10-a.conf": "[[registry]]\nlocation = \"lab.test\"\n[[registry.mirror]]\nlocation = \"mid.test\"\n",
			"20-b.conf": "[[registry]]\nlocation = \"lab.test\"\n[[registry.mirror]]\nlocation = \"new.test\"\n",
			"30-c.txt":  "[[registry]]\nlocation = \"lab.test\"\nblocked = true\n"}},

		"edge no files":                  {},
		"edge empty main":                one(" "),
		"edge drop-in only":              {dropIns: map[string]string{"50.conf": "unqualified-search-registries = [\"a.test\"]\n"}},
		"edge scheme in location":        one("[[registry]]\nlocation = \"https://a.test\"\n"),
		"edge scheme in prefix":          one("[[registry]]\nprefix = \"http://a.test\"\nlocation = \"a.test\"\n"),
		"edge scheme in mirror":          one("[[registry]]\nlocation = \"a.test\"\n[[registry.mirror]]\nlocation = \"http://m.test\"\n"),
		"edge both unset":                one("[[registry]]\ninsecure = true\n"),
		"edge prefix without location":   one("[[registry]]\nprefix = \"a.test\"\n"),
		"edge mirror without location":   one("[[registry]]\nlocation = \"a.test\"\n[[registry.mirror]]\ninsecure = true\n"),
		"edge pull-from-mirror primary":  one("[[registry]]\nlocation = \"a.test\"\npull-from-mirror = \"all\"\n"),
		"edge digest-only and pfm":       one("[[registry]]\nlocation = \"a.test\"\nmirror-by-digest-only = true\n[[registry.mirror]]\nlocation = \"m.test\"\npull-from-mirror = \"all\"\n"),
		"edge bad pfm":                   one("[[registry]]\nlocation = \"a.test\"\n[[registry.mirror]]\nlocation = \"m.test\"\npull-from-mirror = \"sometimes\"\n"),
		"edge conflicting insecure":      one("[[registry]]\nprefix = \"a.test/x\"\nlocation = \"a.test\"\ninsecure = true\n[[registry]]\nprefix = \"a.test/y\"\nlocation = \"a.test\"\n"),
		"edge conflicting blocked":       one("[[registry]]\nprefix = \"a.test/x\"\nlocation = \"a.test\"\nblocked = true\n[[registry]]\nprefix = \"a.test/y\"\nlocation = \"a.test/\"\n"),
		"edge same location agreeing":    one("[[registry]]\nprefix = \"a.test/x\"\nlocation = \"a.test\"\ninsecure = true\n[[registry]]\nprefix = \"a.test/y\"\nlocation = \"a.test\"\ninsecure = true\n"),
		"edge same prefix first wins":    one("[[registry]]\nprefix = \"a.test\"\nlocation = \"one.test\"\n[[registry]]\nprefix = \"a.test/\"\nlocation = \"two.test\"\n"),
		"edge trailing slashes":          one("[[registry]]\nprefix = \"a.test/x//\"\nlocation = \"b.test/y/\"\n[[registry.mirror]]\nlocation = \"m.test/z/\"\n"),
		"edge port boundary":             one("[[registry]]\nprefix = \"a.test\"\nlocation = \"p.test\"\n"),
		"edge prefix with tag":           one("[[registry]]\nprefix = \"a.test/x/app:1\"\nlocation = \"t.test/y/app:2\"\n"),
		"edge prefix with digest":        one("[[registry]]\nprefix = \"lab.test/app@" + digest + "\"\nlocation = \"d.test/app\"\n"),
		"edge prefix not a boundary":     one("[[registry]]\nprefix = \"a.test/x/ap\"\nlocation = \"z.test\"\n"),
		"edge wildcard with location":    one("[[registry]]\nprefix = \"*.a.test\"\nlocation = \"w.test/ns\"\n[[registry.mirror]]\nlocation = \"wm.test\"\n"),
		"edge wildcard port":             one("[[registry]]\nprefix = \"*.a.test:5000\"\nlocation = \"w.test\"\n"),
		"edge wildcard bare":             one("[[registry]]\nprefix = \"*.test\"\n[[registry.mirror]]\nlocation = \"m.test\"\n"),
		"edge wildcard vs exact":         one("[[registry]]\nprefix = \"*.a.test\"\nblocked = true\n[[registry]]\nprefix = \"b.a.test\"\nlocation = \"b.a.test\"\n"),
		"edge rewrite invalid":           one("[[registry]]\nprefix = \"lab.test\"\nlocation = \"UPPER.test/Bad\"\n"),
		"edge location with tag":         one("[[registry]]\nprefix = \"lab.test/app\"\nlocation = \"t.test/app:2\"\n"),
		"edge search with scheme":        one("unqualified-search-registries = [\"https://a.test\"]\n"),
		"edge search with path":          one("unqualified-search-registries = [\"a.test/ns\"]\n"),
		"edge search with port":          one("unqualified-search-registries = [\"a.test:5000\", \"b.test/\"]\n"),
		"edge search empty string":       one("unqualified-search-registries = [\"\"]\n"),
		"edge search IPv6":               one("unqualified-search-registries = [\"[::1]:5000\"]\n"),
		"edge search emptied by drop-in": {main: "unqualified-search-registries = [\"a.test\"]\n", dropIns: map[string]string{"1.conf": "unqualified-search-registries = []\n"}},
		"edge search kept by drop-in":    {main: "unqualified-search-registries = [\"a.test\"]\n", dropIns: map[string]string{"1.conf": "short-name-mode = \"disabled\"\n"}},
		"edge mode invalid":              one("short-name-mode = \"sometimes\"\n"),
		"edge mode in drop-in":           {main: "short-name-mode = \"enforcing\"\n", dropIns: map[string]string{"5.conf": "short-name-mode = \"permissive\"\n", "6.conf": "short-name-mode = \"\"\n"}},
		"edge v1 empty lists":            one("[registries.search]\nregistries = []\n"),
		"edge v1 empty table":            one("[registries.search]\n"),
		"edge v1 and v2":                 one("unqualified-search-registries = [\"a.test\"]\n[registries.block]\nregistries = ['b.test']\n"),
		"edge v1 in drop-in":             {main: manExample, dropIns: map[string]string{"9.conf": "[registries.insecure]\nregistries = ['a.test']\n"}},
		"edge wrong type":                one("[[registry]]\nlocation = \"a.test\"\ninsecure = \"yes\"\n"),
		"edge key case":                  one("[[registry]]\nLocation = \"a.test\"\nINSECURE = true\n"),
		"edge namespace-proxy":           one("[[registry]]\nlocation = \"a.test\"\n[[registry.mirror]]\nlocation = \"p.test\"\nnamespace-proxy = \"a.test\"\n"),
		"edge drop-in replaces":          {main: "[[registry]]\nprefix = \"a.test\"\nlocation = \"one.test\"\ninsecure = true\n", dropIns: map[string]string{"1.conf": "[[registry]]\nprefix = \"a.test\"\nlocation = \"two.test\"\n"}},
		"edge drop-in order":             {dropIns: map[string]string{"b.conf": "[[registry]]\nlocation = \"lab.test\"\nblocked = true\n", "a.conf": "[[registry]]\nlocation = \"lab.test\"\n", "c.conf.bak": "x = ["}},
		"edge drop-in broken":            {main: manExample, dropIns: map[string]string{"2.conf": "x = ["}},
		"edge drop-in conflict ok":       {main: "[[registry]]\nprefix = \"a.test/x\"\nlocation = \"a.test\"\ninsecure = true\n", dropIns: map[string]string{"1.conf": "[[registry]]\nprefix = \"a.test/y\"\nlocation = \"a.test\"\n"}},
		"edge alias tag":                 one("[aliases]\n\"app\" = \"a.test/app:1\"\n"),
		"edge alias digest":              one("[aliases]\n\"app\" = \"a.test/app@" + digest + "\"\n"),
		"edge alias not qualified":       one("[aliases]\n\"app\" = \"team/app\"\n"),
		"edge alias name qualified":      one("[aliases]\n\"a.test/app\" = \"a.test/app\"\n"),
		"edge alias name tagged":         one("[aliases]\n\"app:1\" = \"a.test/app\"\n"),
		"edge alias docker.io":           one("[aliases]\n\"busybox\" = \"docker.io/busybox\"\n\"foo\" = \"localhost/foo\"\n"),
		"edge alias reset":               {main: "[aliases]\n\"app\" = \"a.test/app\"\n\"foo\" = \"b.test/foo\"\n", dropIns: map[string]string{"1.conf": "[aliases]\n\"app\" = \"\"\n"}},
		"edge user aliases":              {main: "[aliases]\n\"app\" = \"a.test/app\"\n\"foo\" = \"b.test/foo\"\n", userAlia: "[aliases]\n\"app\" = \"u.test/app\"\n\"foo\" = \"\"\n\"image\" = \"u.test/image\"\n"},
		"edge user aliases broken":       {main: "[aliases]\n\"app\" = \"a.test/app\"\n", userAlia: "[aliases]\n\"app\" = \"app\"\n"},
		"edge user aliases not TOML":     {main: "[aliases]\n\"app\" = \"a.test/app\"\n", userAlia: "[aliases\n"},
	}
	// containers/image's own test configurations (testdata/sysregistriesv2).
	dir := "testdata/sysregistriesv2"
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if data, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil && strings.HasSuffix(e.Name(), ".conf") {
			c["c/image "+e.Name()] = one(string(data))
		}
	}
	base, _ := os.ReadFile(filepath.Join(dir, "base-for-registries.d.conf"))
	for _, d := range []string{"registries.conf.d", "registries.conf.d-empty-helpers", "registries.conf.d-usr1", "registries.conf.d-usr2"} {
		f := rcFiles{main: string(base), dropIns: map[string]string{}}
		ents, _ := os.ReadDir(filepath.Join(dir, d))
		for _, e := range ents {
			data, _ := os.ReadFile(filepath.Join(dir, d, e.Name()))
			f.dropIns[e.Name()] = string(data)
		}
		c["c/image base + "+d] = f
	}
	return c
}

// TestRegistriesConfCorpus checks that the corpus holds what it says: the
// library's test files were found (a moved directory must not shrink the
// differential test silently).
func TestRegistriesConfCorpus(t *testing.T) {
	n := 0
	for name, f := range rcCorpus() {
		if strings.HasPrefix(name, "c/image ") {
			n++
			if f.main == "" && len(f.dropIns) == 0 && !strings.Contains(name, "empty") {
				t.Errorf("%s: no content", name)
			}
		}
	}
	if n < 30 {
		t.Errorf("the corpus holds %d of containers/image's test configurations, want all 29 files and 4 drop-in directories", n)
	}
}

// eachCorpusRoot runs test, as a subtest per corpus entry, on a node root
// made by newRoot with the entry's files written, and the images its
// configurations name (rcImages).
func eachCorpusRoot(t *testing.T, newRoot func(*testing.T) string, test func(t *testing.T, root string, images []string)) {
	for name, files := range rcCorpus() {
		t.Run(name, func(t *testing.T) {
			root := newRoot(t)
			files.write(t, root)
			confs := []string{files.main}
			for _, d := range files.dropIns {
				confs = append(confs, d)
			}
			test(t, root, rcImages(confs...))
		})
	}
}

func TestRegistriesConfDifferential(t *testing.T) {
	eachCorpusRoot(t, func(t *testing.T) string { return t.TempDir() }, func(t *testing.T, root string, images []string) {
		ours, _ := oursOutcome(t, root, images)
		lib := libOutcome(t, root, images)
		if ours != lib {
			t.Errorf("regconf.go and containers/image disagree:\nours:\n%s\ncontainers/image:\n%s", ours, lib)
		}
		if lib == "load error" {
			sameRefusal(t, root)
		}
		if !testing.Verbose() {
			return
		}
		t.Logf("%s", ours)
	})
}

// TestRegistriesConfDifferentialPlan runs the corpus through the whole
// CRI-O plan (Load, PlanImage) and containers/image's pkg/shortnames
// Resolve (no TTY, as in CRI-O), then sysregistriesv2: the candidates,
// blocked, and the endpoints in order (host as dialled, repository,
// insecure) must agree, and an error on one side must be one on the other.
func TestRegistriesConfDifferentialPlan(t *testing.T) {
	view, _ := nodeview.Load(t.TempDir())
	eachCorpusRoot(t, func(t *testing.T) string { return crioRoot(t, nil) }, func(t *testing.T, root string, images []string) {
		images = append(images, rcShortNames...)
		c, loadErr := Load(root, nodeview.RuntimeBinary{}, Options{})
		sys := libSys(root)
		sysregistriesv2.InvalidateCache()
		_, libErr := sysregistriesv2.TryUpdatingCache(sys)
		if (loadErr != nil) != (libErr != nil) {
			t.Fatalf("load: ours %v, containers/image %v", loadErr, libErr)
		}
		if loadErr != nil {
			return
		}
		// CRI-O hands containers/image its own short-name mode,
		// which replaces registries.conf's (crioShortNameMode).
		mode := types.ShortNameModeEnforcing
		if m, _ := c.crioShortNameMode(); m == "disabled" {
			mode = types.ShortNameModeDisabled
		}
		sys.ShortNameMode = &mode
		for _, img := range images {
			ours := planOutcome(c, view, img)
			lib := libPlanOutcome(t, sys, img)
			if ours != lib {
				t.Errorf("%s:\nours:             %s\ncontainers/image: %s", img, ours, lib)
			}
		}
	})
}

// sameRefusal checks that our config verdict carries the library's own
// message for a configuration both refuse (every line of it: the library
// lists bad aliases in map order), except for a TOML syntax error, which
// the verdict words with the file's line and column instead.
func sameRefusal(t *testing.T, root string) {
	t.Helper()
	sysregistriesv2.InvalidateCache()
	_, libErr := sysregistriesv2.TryUpdatingCache(libSys(root))
	_, err := loadRegistriesConf(root)
	if libErr == nil || err == nil {
		t.Fatalf("ours %v, containers/image %v: want both to refuse", err, libErr)
	}
	var pe toml.ParseError
	if errors.As(libErr, &pe) {
		if !strings.Contains(err.Error(), fmt.Sprintf(":%d: column %d: ", pe.Position.Line, pe.Position.Col)) {
			t.Errorf("ours %q does not name the library's line %d column %d", err, pe.Position.Line, pe.Position.Col)
		}
		return
	}
	msg := libErr.Error()
	if _, rest, ok := strings.Cut(msg, "\": "); ok && strings.HasPrefix(msg, "loading registries configuration ") {
		msg = rest
	}
	for _, line := range strings.Split(strings.TrimPrefix(msg, "validating short-name aliases: "), "\n") {
		if !strings.Contains(err.Error(), line) {
			t.Errorf("ours %q lacks the library's %q", err, line)
		}
	}
}

func planOutcome(c *Config, view *nodeview.View, image string) string {
	p, err := c.PlanImage(context.Background(), view, image, "", false)
	if err != nil {
		ve, ok := verdict.AsError(err)
		if !ok {
			return "error without a verdict: " + err.Error()
		}
		if ve.Cause == verdict.CodeConfigRegistryBlocked {
			return "blocked"
		}
		return "error"
	}
	var parts []string
	parts = append(parts, "candidates "+strings.Join(p.CRIO.Candidates, ","))
	for _, e := range p.Endpoints {
		parts = append(parts, fmt.Sprintf("%s %s/%s insecure=%v", e.Role, e.Host, e.Repository, e.TLS.SkipVerify))
	}
	return strings.Join(parts, "; ")
}

func libPlanOutcome(t *testing.T, sys *types.SystemContext, image string) string {
	res, err := shortnames.Resolve(sys, image)
	if err != nil {
		return "error"
	}
	var cands []string
	var parts []string
	for _, pc := range res.PullCandidates {
		cands = append(cands, pc.Value.String())
	}
	parts = append(parts, "candidates "+strings.Join(cands, ","))
	for _, pc := range res.PullCandidates {
		ref := pc.Value
		reg, err := sysregistriesv2.FindRegistry(sys, ref.Name())
		if err != nil {
			t.Fatal(err)
		}
		if reg == nil {
			parts = append(parts, libEndpoint("registry", ref, false))
			continue
		}
		if reg.Blocked {
			return "blocked"
		}
		srcs, err := reg.PullSourcesFromReference(ref)
		if err != nil {
			return "error"
		}
		for i, s := range srcs {
			role := "mirror"
			if i == len(srcs)-1 {
				role = "registry"
			}
			parts = append(parts, libEndpoint(role, s.Reference, s.Endpoint.Insecure))
		}
	}
	return strings.Join(parts, "; ")
}

// libEndpoint names a source as the plan does: docker.io is dialled as
// registry-1.docker.io (docker/docker_client.go).
func libEndpoint(role string, ref podref.Named, insecure bool) string {
	host := podref.Domain(ref)
	if host == "docker.io" {
		host = "registry-1.docker.io"
	}
	return fmt.Sprintf("%s %s/%s insecure=%v", role, host, podref.Path(ref), insecure)
}

// rcGen builds registries.conf files from fuzz bytes: each byte picks a
// piece (a prefix, a location, a flag, a search list, a mode, an alias)
// from pools that hold valid and invalid values alike, so that most
// inputs reach the rules rather than the TOML parser.
type rcGen struct {
	data []byte
	i    int
}

func (g *rcGen) next(n int) int {
	if g.i >= len(g.data) {
		return 0
	}
	b := int(g.data[g.i])
	g.i++
	return b % n
}

func (g *rcGen) pick(pool []string) string { return pool[g.next(len(pool))] }

var (
	rcGenNames = []string{"a.test", "a.test/x", "a.test/x/", "*.a.test", "*.test", "b.a.test", "a.test:5000", "a.test/x/app:1",
		"a.test/x/app@" + digest, "https://a.test", "http://m.test", "", "A.test/X", "*.a.test/x", "*.a.test:5000", "docker.io/library",
		"docker.io", "[::1]:5000", "m.test/mirror", "localhost", "localhost:5000/ns", "a.test//", "a..test", "-a.test", "a.test/x/ap",
		"lab.test", "*.", "*", "a.test/x@", "a.test/UP", "m.test", "n.test/ns/"}
	rcGenSearch  = []string{"a.test", "a.test:5000", "docker.io", "https://a.test", "a.test/x", "", "[::1]", "b.test/", "a_b.test", "localhost"}
	rcGenModes   = []string{"", "enforcing", "permissive", "disabled", "bogus"}
	rcGenPFM     = []string{"", "all", "digest-only", "tag-only", "some"}
	rcGenAliasN  = []string{"app", "busybox", "team/app", "a.test/app", "app:1", "App", "foo", "image"}
	rcGenAliasV  = []string{"", "a.test/app", "docker.io/busybox", "team/app", "a.test/app:1", "localhost/foo", "[::1]:5000/app", "a.test/App", "m.test/ns/image"}
	rcGenHelpers = []string{"[]", "[\"containers-auth.json\"]", "[\"pass\", \"secretservice\"]"}
)

// file writes one registries.conf.
func (g *rcGen) file() string {
	var b strings.Builder
	flags := g.next(256)
	if flags&1 != 0 {
		b.WriteString("unqualified-search-registries = [")
		for n := g.next(3); n > 0; n-- {
			fmt.Fprintf(&b, "%q, ", g.pick(rcGenSearch))
		}
		b.WriteString("]\n")
	}
	if flags&2 != 0 {
		fmt.Fprintf(&b, "short-name-mode = %q\n", g.pick(rcGenModes))
	}
	if flags&4 != 0 {
		fmt.Fprintf(&b, "credential-helpers = %s\n", g.pick(rcGenHelpers))
	}
	if flags&8 != 0 {
		b.WriteString("[registries.search]\nregistries = [\"a.test\"]\n")
	}
	for n := g.next(4); n > 0; n-- {
		b.WriteString("[[registry]]\n")
		rf := g.next(256)
		if rf&1 != 0 {
			fmt.Fprintf(&b, "prefix = %q\n", g.pick(rcGenNames))
		}
		if rf&2 != 0 {
			fmt.Fprintf(&b, "location = %q\n", g.pick(rcGenNames))
		}
		if rf&4 != 0 {
			b.WriteString("insecure = true\n")
		}
		if rf&8 != 0 {
			b.WriteString("blocked = true\n")
		}
		if rf&16 != 0 {
			b.WriteString("mirror-by-digest-only = true\n")
		}
		if rf&32 != 0 {
			fmt.Fprintf(&b, "pull-from-mirror = %q\n", g.pick(rcGenPFM))
		}
		for m := g.next(3); m > 0; m-- {
			b.WriteString("[[registry.mirror]]\n")
			mf := g.next(8)
			if mf&1 != 0 || mf == 0 {
				fmt.Fprintf(&b, "location = %q\n", g.pick(rcGenNames))
			}
			if mf&2 != 0 {
				b.WriteString("insecure = true\n")
			}
			if mf&4 != 0 {
				fmt.Fprintf(&b, "pull-from-mirror = %q\n", g.pick(rcGenPFM))
			}
		}
	}
	if flags&16 != 0 {
		b.WriteString("[aliases]\n")
		seen := map[string]bool{}
		for n := g.next(3) + 1; n > 0; n-- {
			name := g.pick(rcGenAliasN)
			if seen[name] {
				continue
			}
			seen[name] = true
			fmt.Fprintf(&b, "%q = %q\n", name, g.pick(rcGenAliasV))
		}
	}
	return b.String()
}

// files builds a node's files: the first byte chooses how many drop-ins,
// whether there is a short-name-aliases.conf, and whether the main file
// is the input's tail as raw text (for the TOML decoder's edges).
func (g *rcGen) files() rcFiles {
	shape := g.next(8)
	var f rcFiles
	if shape == 7 {
		f.main = string(g.data[min(g.i, len(g.data)):])
		g.i = len(g.data)
		return f
	}
	if shape != 6 {
		f.main = g.file()
	}
	if shape >= 3 {
		f.dropIns = map[string]string{}
		for n := shape - 2; n > 0; n-- {
			f.dropIns[fmt.Sprintf("%02d.conf", g.next(20))] = g.file()
		}
	}
	if shape == 5 {
		f.userAlia = "[aliases]\n" + fmt.Sprintf("%q = %q\n", g.pick(rcGenAliasN), g.pick(rcGenAliasV))
	}
	return f
}

// FuzzRegistriesConfDifferential generates registries.conf files (main,
// drop-ins, short-name-aliases.conf) and runs them through regconf.go and
// through containers/image: both refuse them, or both give the same
// search list, mode, aliases, matching [[registry]], blocked and pull
// sources for every image.
func FuzzRegistriesConfDifferential(f *testing.F) {
	f.Add([]byte{0, 0xff, 2, 1, 3, 0x3f, 1, 2, 2, 7, 0, 4, 9, 1})
	f.Add([]byte{3, 0x17, 2, 0, 2, 2, 1, 0x13, 3, 3, 3, 2, 1, 5, 1, 0x03, 4, 6, 3, 1})
	f.Add([]byte{4, 0x10, 1, 0, 0x1f, 2, 5, 5, 7, 2, 9, 0x02, 1, 3, 0x30, 17, 2, 4, 4, 0x11, 1, 2, 3})
	f.Add([]byte{5, 0x10, 2, 0, 1, 3, 0x10, 1, 0, 2, 0, 0, 0, 0, 5})
	f.Add([]byte{6, 1, 0x03, 1, 1, 0x33, 3, 20, 1, 7, 7, 1})
	f.Add(append([]byte{7}, manExample...))
	f.Add(append([]byte{7}, "[registries.search]\nregistries = []\n"...))
	f.Add(append([]byte{7}, "[[registry]]\nprefix = \"*.a.test\"\n[[registry.mirror]]\nlocation = \"m.test\"\npull-from-mirror = \"tag-only\"\n"...))
	// One node root per fuzzing process, emptied before each input (a
	// process runs its inputs one after the other).
	root := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &rcGen{data: data}
		files := g.files()
		for _, d := range []string{"etc", "var"} {
			if err := os.RemoveAll(filepath.Join(root, d)); err != nil {
				t.Fatal(err)
			}
		}
		files.write(t, root)
		confs := []string{files.main}
		for _, d := range files.dropIns {
			confs = append(confs, d)
		}
		images := rcImages(confs...)
		ours, _ := oursOutcome(t, root, images)
		lib := libOutcome(t, root, images)
		if ours != lib {
			t.Fatalf("regconf.go and containers/image disagree on\nmain:\n%s\ndrop-ins: %q\naliases file: %q\nours:\n%s\ncontainers/image:\n%s", files.main, files.dropIns, files.userAlia, ours, lib)
		}
	})
}
