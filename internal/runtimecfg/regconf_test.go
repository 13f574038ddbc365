package runtimecfg

import (
	"context"
	"strings"
	"testing"

	"github.com/distribution/reference"

	"github.com/pullpath/pullpath/internal/nodeview"
)

// loadRC writes files under a fresh node root and loads them.
func loadRC(t *testing.T, files rcFiles) (*registriesConf, error) {
	t.Helper()
	root := t.TempDir()
	files.write(t, root)
	return loadRegistriesConf(root)
}

// sourcesOf is the pull sources for image as "location insecure ref",
// "no registry", "blocked" or "error: ...".
func sourcesOf(t *testing.T, rc *registriesConf, image string) string {
	t.Helper()
	ref, err := parseNormalizedNamed(image)
	if err != nil {
		return "error: " + err.Error()
	}
	ref = reference.TagNameOnly(ref)
	reg := rc.conf.findRegistry(ref.Name())
	if reg == nil {
		return "no registry"
	}
	if reg.Blocked {
		return "blocked"
	}
	srcs, err := reg.pullSources(ref)
	if err != nil {
		return "error: " + err.Error()
	}
	var out []string
	for _, s := range srcs {
		e := s.ref.String()
		if s.endpoint.Insecure {
			e += " (insecure)"
		}
		out = append(out, e)
	}
	return strings.Join(out, " | ")
}

// TestRegistriesConfManPage holds the examples of
// containers-registries.conf(5) (go.podman.io/image/v5 v5.42.1,
// docs/containers-registries.conf.5.md) as table rows: the text the row
// checks is quoted in its name or comment.
func TestRegistriesConfManPage(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files rcFiles
		image string
		want  string
	}{
		// EXAMPLE: "a pull of example.com/foo/image:latest will try:
		// 1. example-mirror-0.local/mirror-for-foo/image:latest
		// 2. example-mirror-1.local/mirrors/foo/image:latest
		// 3. internal-registry-for-example.com/bar/image:latest in order"
		{"EXAMPLE: mirrors in order, then the rewritten primary", rcFiles{main: manExample}, "example.com/foo/image:latest",
			"example-mirror-0.local/mirror-for-foo/image:latest | example-mirror-1.local/mirrors/foo/image:latest (insecure) | internal-registry-for-example.com/bar/image:latest"},
		// "pulling the image registry.com/image:latest will hence only
		// reach out to mirror.registry.com, and the mirrors associated
		// with example.com/foo will not be considered."
		{"EXAMPLE: a mirror belongs to its own [[registry]] only", rcFiles{main: manExample}, "registry.com/image:latest",
			"mirror.registry.com/image:latest | registry.com/image:latest"},
		// "requests for the image example.com/foo/myimage:latest will
		// actually work with the internal-registry-for-example.com/bar/myimage:latest image."
		{"location remaps the prefix-rooted namespace",
			rcFiles{main: "[[registry]]\nprefix = \"example.com/foo\"\nlocation = \"internal-registry-for-example.com/bar\"\n"},
			"example.com/foo/myimage:latest", "internal-registry-for-example.com/bar/myimage:latest"},
		// "The user-specified image name must start with the specified
		// prefix (and continue with the appropriate separator)"
		{"prefix continues with a separator only",
			rcFiles{main: "[[registry]]\nprefix = \"example.com/foo\"\nlocation = \"internal-registry-for-example.com/bar\"\n"},
			"example.com/foobar/myimage:latest", "no registry"},
		// "(only) the TOML table with the longest match is used"
		{"longest match", rcFiles{main: "[[registry]]\nprefix = \"example.com\"\nlocation = \"a.test\"\n[[registry]]\nprefix = \"example.com/foo\"\nlocation = \"b.test/f\"\n"},
			"example.com/foo/x:1", "b.test/f/x:1"},
		// "requests for the image blah.example.com/foo/myimage:latest will
		// be used as-is. But other settings like insecure/blocked/mirrors
		// will be applied to matching images"
		{"wildcard without location: as-is, with its settings", rcFiles{main: "[[registry]]\nprefix = \"*.example.com\"\ninsecure = true\n"},
			"blah.example.com/foo/myimage:latest", "blah.example.com/foo/myimage:latest (insecure)"},
		// "*.example.com will hence match bar.example.com,
		// foo.bar.example.com and so on."
		{"wildcard: any number of subdomains", rcFiles{main: "[[registry]]\nprefix = \"*.example.com\"\nblocked = true\n"},
			"foo.bar.example.com/x:1", "blocked"},
		{"wildcard: not the domain itself", rcFiles{main: "[[registry]]\nprefix = \"*.example.com\"\nblocked = true\n"},
			"example.com/x:1", "no registry"},
		// "example.*.com ... are not" valid: a wildcard only at the
		// beginning; elsewhere the prefix is literal and matches nothing.
		{"wildcard only at the beginning", rcFiles{main: "[[registry]]\nprefix = \"example.*.com\"\nlocation = \"a.test\"\n"},
			"example.foo.com/x:1", "no registry"},
		// "mirror-by-digest-only: If true, mirrors will only be used
		// during pulling if the image reference includes a digest."
		{"mirror-by-digest-only, by tag", rcFiles{main: "[[registry]]\nlocation = \"lab.test\"\nmirror-by-digest-only = true\n[[registry.mirror]]\nlocation = \"m.test\"\n"},
			"lab.test/app:1", "lab.test/app:1"},
		{"mirror-by-digest-only, by digest", rcFiles{main: "[[registry]]\nlocation = \"lab.test\"\nmirror-by-digest-only = true\n[[registry.mirror]]\nlocation = \"m.test\"\n"},
			"lab.test/app@" + digest, "m.test/app@" + digest + " | lab.test/app@" + digest},
		// "If "digest-only", mirrors will only be used for digest pulls
		// ... If "tag-only", mirrors will only be used for tag pulls"
		{"pull-from-mirror, by tag", rcFiles{main: "[[registry]]\nlocation = \"lab.test\"\n[[registry.mirror]]\nlocation = \"d.test\"\npull-from-mirror = \"digest-only\"\n[[registry.mirror]]\nlocation = \"t.test\"\npull-from-mirror = \"tag-only\"\n[[registry.mirror]]\nlocation = \"all.test\"\n"},
			"lab.test/app:1", "t.test/app:1 | all.test/app:1 | lab.test/app:1"},
		{"pull-from-mirror, by digest", rcFiles{main: "[[registry]]\nlocation = \"lab.test\"\n[[registry.mirror]]\nlocation = \"d.test\"\npull-from-mirror = \"digest-only\"\n[[registry.mirror]]\nlocation = \"t.test\"\npull-from-mirror = \"tag-only\"\n[[registry.mirror]]\nlocation = \"all.test\"\n"},
			"lab.test/app@" + digest, "d.test/app@" + digest + " | all.test/app@" + digest + " | lab.test/app@" + digest},
		// "to remap or mirror the docker.io images in the (implied)
		// /library namespace ... must explicitly include that /library
		// namespace. For example prefix = "docker.io/library/alpine" and
		// not prefix = "docker.io/alpine"."
		{"docker.io: the /library prefix matches docker.io/alpine", rcFiles{main: "[[registry]]\nprefix = \"docker.io/library/alpine\"\nlocation = \"m.test/alpine\"\n"},
			"docker.io/alpine:3", "m.test/alpine:3"},
		{"docker.io: docker.io/alpine does not match the library image", rcFiles{main: "[[registry]]\nprefix = \"docker.io/alpine\"\nlocation = \"m.test/alpine\"\n"},
			"docker.io/alpine:3", "no registry"},
		{"docker.io: docker.io/alpine matches docker.io/alpine/*", rcFiles{main: "[[registry]]\nprefix = \"docker.io/alpine\"\nlocation = \"m.test/alpine\"\n"},
			"docker.io/alpine/git:1", "m.test/alpine/git:1"},
		// containers-registries.conf.d(5): drop-ins in lexical order, a
		// later [[registry]] with the same prefix replaces the earlier.
		{"drop-ins: the last file's [[registry]] wins", rcFiles{main: "[[registry]]\nlocation = \"lab.test\"\n[[registry.mirror]]\nlocation = \"main.test\"\n",
			dropIns: map[string]string{"20-b.conf": "[[registry]]\nlocation = \"lab.test\"\n[[registry.mirror]]\nlocation = \"b.test\"\n", "10-a.conf": "[[registry]]\nlocation = \"lab.test\"\nblocked = true\n", "30-c.txt": "x = ["}},
			"lab.test/app:1", "b.test/app:1 | lab.test/app:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc, err := loadRC(t, tc.files)
			if err != nil {
				t.Fatal(err)
			}
			if got := sourcesOf(t, rc, tc.image); got != tc.want {
				t.Errorf("%s: %s, want %s", tc.image, got, tc.want)
			}
		})
	}
}

// TestRegistriesConfManPageAliases: "Short-name aliases can be configured
// in the [aliases] table"; "image", "image:tag" and "image@digest" all
// resolve to the same alias, the tag or digest appended; "If the "value"
// of an alias is empty (i.e., ""), the alias will be erased"; "the
// short-name-aliases.conf file has precedence".
//
// CRI-O then applies its own short-name mode (crioShortNameMode), which
// replaces registries.conf's: the cases that expect every search registry
// run with crio.conf's short_name_mode = "disabled", and the last cases
// check CRI-O's own rule.
func TestRegistriesConfManPageAliases(t *testing.T) {
	const crioDisabled = "[crio.image]\nshort_name_mode = \"disabled\"\n"
	main := "unqualified-search-registries = [\"registry1.com\", \"registry2.com\"]\nshort-name-mode = \"permissive\"\n[aliases]\n\"image\" = \"registry.com/namespace/image\"\n\"other\" = \"registry.com/other\"\n\"busybox\" = \"docker.io/busybox\"\n"
	for _, tc := range []struct {
		name    string
		files   rcFiles
		image   string
		want    string
		crio    string // crio.conf
		version string // CRI-O's version, as the node reports it
	}{
		{"alias", rcFiles{main: main}, "image", "registry.com/namespace/image:latest", "", ""},
		{"alias with a tag", rcFiles{main: main}, "image:tag", "registry.com/namespace/image:tag", "", ""},
		{"alias with a digest", rcFiles{main: main}, "image@" + digest, "registry.com/namespace/image@" + digest, "", ""},
		{"alias normalised", rcFiles{main: main}, "busybox", "docker.io/library/busybox:latest", "", ""},
		{"no alias: every search registry", rcFiles{main: main}, "app", "registry1.com/app:latest,registry2.com/app:latest", crioDisabled, ""},
		{"erased by a drop-in", rcFiles{main: main, dropIns: map[string]string{"1.conf": "[aliases]\n\"image\" = \"\"\n"}}, "image", "registry1.com/image:latest,registry2.com/image:latest", crioDisabled, ""},
		{"short-name-aliases.conf first", rcFiles{main: main, userAlia: "[aliases]\n\"image\" = \"cache.test/image\"\n"}, "image", "cache.test/image:latest", "", ""},
		{"short-name-aliases.conf erases", rcFiles{main: main, userAlia: "[aliases]\n\"other\" = \"\"\n"}, "other", "registry1.com/other:latest,registry2.com/other:latest", crioDisabled, ""},
		{"short-name-aliases.conf broken", rcFiles{main: main, userAlia: "[aliases]\n\"image\" = \"image\"\n"}, "other", "config.registries-conf", "", ""},
		{"enforcing with one search registry: no ambiguity", rcFiles{main: "unqualified-search-registries = [\"registry1.com\"]\nshort-name-mode = \"enforcing\"\n"}, "app", "registry1.com/app:latest", "", ""},
		{"enforcing with two: an error without a terminal", rcFiles{main: "unqualified-search-registries = [\"registry1.com\", \"registry2.com\"]\nshort-name-mode = \"enforcing\"\n"}, "app", "config.short-name", "", ""},
		{"crio.conf disabled: every search registry", rcFiles{main: "unqualified-search-registries = [\"registry1.com\", \"registry2.com\"]\nshort-name-mode = \"enforcing\"\n"}, "app", "registry1.com/app:latest,registry2.com/app:latest", crioDisabled, ""},
		{"registries.conf disabled is not CRI-O's mode", rcFiles{main: "unqualified-search-registries = [\"registry1.com\", \"registry2.com\"]\nshort-name-mode = \"disabled\"\n"}, "app", "config.short-name", "", ""},
		{"crio.conf enforcing", rcFiles{main: "unqualified-search-registries = [\"registry1.com\", \"registry2.com\"]\n"}, "app", "config.short-name", "[crio.image]\nshort_name_mode = \"enforcing\"\n", ""},
		{"CRI-O before 1.34: always disabled", rcFiles{main: "unqualified-search-registries = [\"registry1.com\", \"registry2.com\"]\nshort-name-mode = \"enforcing\"\n"}, "app", "registry1.com/app:latest,registry2.com/app:latest", "[crio.image]\nshort_name_mode = \"enforcing\"\n", "cri-o://1.33.2"},
		{"crio.conf permissive: CRI-O refuses to start", rcFiles{main: main}, "app", "config.crio", "[crio.image]\nshort_name_mode = \"permissive\"\n", ""},
		{"not a reference", rcFiles{main: main}, "App", "config.registries-conf", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var crio map[string]string
			if tc.crio != "" {
				crio = map[string]string{"etc/crio/crio.conf": tc.crio}
			}
			root := crioRoot(t, crio)
			tc.files.write(t, root)
			var p *Plan
			c, err := Load(root, nodeview.RuntimeBinary{}, Options{RuntimeVersion: tc.version})
			if err == nil {
				view, _ := nodeview.Load(root)
				p, err = c.PlanImage(context.Background(), view, tc.image, "", false)
			}
			got := ""
			if err != nil {
				got = err.Error()
				if i := strings.Index(got, ":"); i > 0 {
					got = got[:i]
				}
			} else {
				got = strings.Join(p.CRIO.Candidates, ",")
			}
			if got != tc.want {
				t.Errorf("%s: %s, want %s (err %v)", tc.image, got, tc.want, err)
			}
		})
	}
}

// TestRegistriesConfPositions: the file:line of the [[registry]] and
// mirror tables that won, after the first-of-a-prefix rule within a file
// and the drop-in replacing the main file's.
func TestRegistriesConfPositions(t *testing.T) {
	rc, err := loadRC(t, rcFiles{
		main:    "unqualified-search-registries = [\"a.test\"]\n\n[[registry]]\nprefix = \"a.test\"\nlocation = \"one.test\"\n\n[[registry]]\nprefix = \"a.test/\"\nlocation = \"two.test\"\n\n[[registry]]\nlocation = \"b.test\"\n[[registry.mirror]]\nlocation = \"m.test\"\n",
		dropIns: map[string]string{"50.conf": "credential-helpers = [\"pass\"]\n[[registry]]\nlocation = \"c.test\"\n\n[[registry.mirror]]\nlocation = \"cm.test\"\n"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rc.conf.registries {
		got[r.Prefix] = r.from
		for _, m := range r.Mirrors {
			got[r.Prefix+" mirror "+m.Location] = m.from
		}
	}
	want := map[string]string{
		"a.test":                "/etc/containers/registries.conf:3",
		"b.test":                "/etc/containers/registries.conf:11",
		"b.test mirror m.test":  "/etc/containers/registries.conf:13",
		"c.test":                "/etc/containers/registries.conf.d/50.conf:2",
		"c.test mirror cm.test": "/etc/containers/registries.conf.d/50.conf:5",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s at %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("registries %v, want %v", got, want)
	}
	if s := sourcesOf(t, rc, "a.test/x:1"); s != "one.test/x:1" {
		t.Errorf("a.test/x:1 from %s, want the first [[registry]] of the prefix", s)
	}
	set := map[string]Setting{}
	for _, s := range rc.settings {
		set[s.Key] = s
	}
	if s := set["credential-helpers"]; s.Value != "pass" || s.Source != "/etc/containers/registries.conf.d/50.conf:1" {
		t.Errorf("credential-helpers %+v", s)
	}
	if s := set["unqualified-search-registries"]; s.Value != "a.test" || s.Source != "/etc/containers/registries.conf:1" {
		t.Errorf("search %+v", s)
	}
}

// TestRCMatch is refMatchingPrefix's rule, boundary by boundary.
func TestRCMatch(t *testing.T) {
	for _, tc := range []struct {
		ref, prefix string
		want        int
	}{
		{"example.com", "example.com", 11},
		{"example.com/foo", "example.com", 11},
		{"example.com:5000/foo", "example.com", 11}, // upstream: "unintended", kept
		{"example.com@sha256:x", "example.com", 11},
		{"example.comx/foo", "example.com", -1},
		{"example.co", "example.com", -1},
		{"a.example.com/foo", "*.example.com", 13},
		{"a.b.example.com:5000/foo", "*.example.com", 15},
		{"example.com/foo", "*.example.com", -1},
		{"a.test/b.example.com", "*.example.com", -1},
		{"a.example.comx/foo", "*.example.com", -1},
	} {
		if got := rcMatch(tc.ref, tc.prefix); got != tc.want {
			t.Errorf("rcMatch(%q, %q) = %d, want %d", tc.ref, tc.prefix, got, tc.want)
		}
	}
}
