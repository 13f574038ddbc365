package netlab_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.podman.io/image/v5/pkg/shortnames"
	"go.podman.io/image/v5/types"

	"github.com/pullpath/pullpath/internal/schematest"
	"github.com/pullpath/pullpath/internal/tiers"
	"github.com/pullpath/pullpath/test/netlab"
	"github.com/pullpath/pullpath/test/netlab/minireg"
)

// The CRI-O rows: containers/image, the library CRI-O pulls
// with, run as Debian's skopeo in the lab's node namespace on a CRI-O node
// root (usr/bin/crio, etc/crio/crio.conf, etc/containers/registries.conf,
// certs.d and policy.json). `ip netns exec` bind-mounts the root's
// etc/containers over /etc/containers (netlab.Netns.SetEtc), so skopeo
// reads exactly the node's files: registries.conf and its drop-ins, the
// certs.d directories (the lab CA is only there: the root's system trust
// store holds an unrelated CA) and the policy. Short names are resolved by
// containers/image's own pkg/shortnames (v5.42.1, in this process, with no
// TTY as in CRI-O), since skopeo normalises docker:// names without it;
// the candidates are then pulled in order, as CRI-O's pullImage does.
//
// Beside skopeo, every row runs test/netlab/cimage: containers/image
// v5.42.1 (go.mod's) driven as CRI-O's server/image_pull.go pullImage
// drives it (its SystemContext, the pod namespace's policy and auth file,
// CandidatesForPotentiallyShortImageName, copy.Image; the driver's doc says
// what differs). It runs the rows skopeo 1.9.3 cannot: pull-from-mirror
// (containers/image 5.26+) and CRI-O's namespaced auth file.
//
// For every row the probe's plan (host/repository, in order, up to the
// endpoint that served) must equal the sources each library tried (its
// "Trying to access" lines, checked against the lab servers' accept log),
// its verdict each library's outcome, and, on the private registry, the
// user it presented the user the library presented.

// crioRow is one registries.conf layout.
type crioRow struct {
	name string
	conf string
	// image is the reference as the kubelet passes it; "@digest" is
	// replaced by the mirror's digest.
	image string
	// want: the library's outcome and the sources it tried
	// (host/repository); cause is the probe's verdict cause when it fails.
	ok    bool
	order []string
	cause string
	// warn is a warning code the probe must report.
	warn string
	// endpoint: the host the probe's failing verdict must name (the
	// library reports the last source's error).
	endpoint string
	// offline: the library refuses before any network step (no lab
	// server may accept a connection, and the probe's plan tries nothing).
	offline bool
	// noSkopeo: the row needs what Debian's skopeo 1.9.3 lacks
	// (pull-from-mirror, CRI-O's namespaced auth file); only the driver
	// runs it.
	noSkopeo bool
	// crio is more of crio.conf's [crio.image]; files more node files.
	crio  string
	files map[string]string
	// namespace is the pod's namespace, given to the driver and to the
	// probe (--pod-namespace); nsAuth writes the credential provider's
	// file for it (namespace nsAuth) before each pull.
	namespace, nsAuth string
	// user is who the private registry must have logged for the library
	// and for the probe ("anonymous": nobody).
	user string
}

// globalAuth is crio.conf's global_auth_file in the private rows: a user
// the private registry does not know.
const globalAuth = "/etc/crio/global-auth.json"

// authFileJSON is a containers auth file with one user for host.
func authFileJSON(host, user, pass string) string {
	return fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, host, base64.StdEncoding.EncodeToString([]byte(user+":"+pass)))
}

// namespacedAuthFile is the file CRI-O's credential provider writes for
// namespace and the image name (crio-credential-provider pkg/auth
// FilePath), relative to the node root, spelled out here rather than taken
// from the code under test.
func namespacedAuthFile(namespace, name string) string {
	return fmt.Sprintf("etc/crio/auth/%s-%x.json", namespace, sha256.Sum256([]byte(name)))
}

func crioRows() []crioRow {
	return []crioRow{
		{name: "prefix rewrite",
			conf:  "[[registry]]\nprefix = \"" + rcDead + "/team\"\nlocation = \"" + rcRegistry + "/rewritten\"\n",
			image: rcDead + "/team/app:1", ok: true, order: []string{rcRegistry + "/rewritten/app"}},
		{name: "two mirrors in order, the first down",
			conf:  "[[registry]]\nlocation = \"" + rcRegistry + "\"\n\n[[registry.mirror]]\nlocation = \"" + rcDead + "\"\n\n[[registry.mirror]]\nlocation = \"" + rcMirror + "\"\n",
			image: rcRegistry + "/team/app:1", ok: true, order: []string{rcDead + "/team/app", rcMirror + "/team/app"}, warn: "mirror.unreachable"},
		{name: "digest-only mirror, tag pull",
			conf:  "[[registry]]\nlocation = \"" + rcDead + "\"\nmirror-by-digest-only = true\n\n[[registry.mirror]]\nlocation = \"" + rcMirror + "\"\n",
			image: rcDead + "/team/app:1", ok: false, order: []string{rcDead + "/team/app"}, cause: "route.refused", warn: "config.mirror-digest-only"},
		{name: "digest-only mirror, digest pull",
			conf:  "[[registry]]\nlocation = \"" + rcDead + "\"\nmirror-by-digest-only = true\n\n[[registry.mirror]]\nlocation = \"" + rcMirror + "\"\n",
			image: rcDead + "/team/app@digest", ok: true, order: []string{rcMirror + "/team/app"}},
		{name: "mirror without the image, primary down",
			conf:  "[[registry]]\nlocation = \"" + rcDead + "\"\n\n[[registry.mirror]]\nlocation = \"" + rcMirror + "/nothere\"\n",
			image: rcDead + "/team/app:1", ok: false, order: []string{rcMirror + "/nothere/team/app", rcDead + "/team/app"}, cause: "route.refused", endpoint: rcDead, warn: "mirror.unreachable"},
		{name: "blocked registry",
			conf: "[[registry]]\nlocation = \"" + rcRegistry + "\"\nblocked = true\n",
			// containers/image logs the source, then refuses it as blocked
			// before dialling.
			image: rcRegistry + "/team/app:1", ok: false, order: []string{rcRegistry + "/team/app"}, cause: "config.registry-blocked", offline: true},
		{name: "short name, enforcing, two search registries",
			conf:  "unqualified-search-registries = [\"" + rcMirror + "\", \"" + rcRegistry + "\"]\nshort-name-mode = \"enforcing\"\n",
			image: "team/app:1", ok: false, order: nil, cause: "config.short-name", offline: true},
		{name: "short name, enforcing, one search registry",
			conf:  "unqualified-search-registries = [\"" + rcMirror + "\"]\nshort-name-mode = \"enforcing\"\n",
			image: "team/app:1", ok: true, order: []string{rcMirror + "/team/app"}},
		{name: "pull-from-mirror digest-only, tag pull", noSkopeo: true,
			conf:  "[[registry]]\nlocation = \"" + rcDead + "\"\n\n[[registry.mirror]]\nlocation = \"" + rcMirror + "\"\npull-from-mirror = \"digest-only\"\n",
			image: rcDead + "/team/app:1", ok: false, order: []string{rcDead + "/team/app"}, cause: "route.refused", endpoint: rcDead, warn: "config.mirror-digest-only"},
		{name: "pull-from-mirror digest-only, digest pull", noSkopeo: true,
			conf:  "[[registry]]\nlocation = \"" + rcDead + "\"\n\n[[registry.mirror]]\nlocation = \"" + rcMirror + "\"\npull-from-mirror = \"digest-only\"\n",
			image: rcDead + "/team/app@digest", ok: true, order: []string{rcMirror + "/team/app"}},
		{name: "pull-from-mirror tag-only, tag pull", noSkopeo: true,
			conf:  "[[registry]]\nlocation = \"" + rcDead + "\"\n\n[[registry.mirror]]\nlocation = \"" + rcMirror + "\"\npull-from-mirror = \"tag-only\"\n",
			image: rcDead + "/team/app:1", ok: true, order: []string{rcMirror + "/team/app"}},
		{name: "pull-from-mirror tag-only, digest pull", noSkopeo: true,
			conf:  "[[registry]]\nlocation = \"" + rcDead + "\"\n\n[[registry.mirror]]\nlocation = \"" + rcMirror + "\"\npull-from-mirror = \"tag-only\"\n",
			image: rcDead + "/team/app@digest", ok: false, order: []string{rcDead + "/team/app"}, cause: "route.refused", endpoint: rcDead, warn: "config.mirror-tag-only"},
		{name: "namespaced auth file, pod namespace shop", noSkopeo: true,
			crio: "global_auth_file = \"" + globalAuth + "\"\n", files: map[string]string{globalAuth[1:]: authFileJSON(rcPrivate, rcGlobalUser, rcGlobalPass)},
			namespace: "shop", nsAuth: "shop",
			image: rcPrivate + "/" + rcPrivateRepo + ":1", ok: true, order: []string{rcPrivate + "/" + rcPrivateRepo}, user: rcNSUser},
		{name: "namespaced auth file of another namespace", noSkopeo: true,
			crio: "global_auth_file = \"" + globalAuth + "\"\n", files: map[string]string{globalAuth[1:]: authFileJSON(rcPrivate, rcGlobalUser, rcGlobalPass)},
			namespace: "web", nsAuth: "shop",
			image: rcPrivate + "/" + rcPrivateRepo + ":1", ok: false, order: []string{rcPrivate + "/" + rcPrivateRepo}, cause: "auth.bad-credentials", endpoint: rcPrivate, user: rcGlobalUser},
		{name: "namespaced auth file, pod namespace unknown", noSkopeo: true,
			crio: "global_auth_file = \"" + globalAuth + "\"\n", files: map[string]string{globalAuth[1:]: authFileJSON(rcPrivate, rcGlobalUser, rcGlobalPass)},
			nsAuth: "shop",
			image:  rcPrivate + "/" + rcPrivateRepo + ":1", ok: false, order: []string{rcPrivate + "/" + rcPrivateRepo}, cause: "auth.bad-credentials", endpoint: rcPrivate, user: rcGlobalUser, warn: "config.crio-namespace-unknown"},
		{name: "insecure registry that offers TLS",
			conf:  "[[registry]]\nlocation = \"" + rcRegistry + "\"\ninsecure = true\n",
			image: rcRegistry + "/team/app:1", ok: true, order: []string{rcRegistry + "/team/app"}, warn: "config.registries-insecure-tls"},
	}
}

// trying matches containers/image's "Trying to access" debug line
// (docker/docker_image_src.go newImageSource), one per pull source.
var tryingRe = regexp.MustCompile(`Trying to access \\"([^"\\]+)\\"`)

// refRepo drops the tag or digest of a reference: host/repository.
func refRepo(ref string) string {
	if i := strings.Index(ref, "@"); i >= 0 {
		return ref[:i]
	}
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		return ref[:i]
	}
	return ref
}

// crioProbe is the part of the probe report the rows read.
type crioProbe struct {
	Verdict struct {
		OK       bool   `json:"ok"`
		Cause    string `json:"cause"`
		Endpoint string `json:"endpoint"`
		Summary  string `json:"summary"`
	} `json:"verdict"`
	Warnings []struct {
		Code string `json:"code"`
	} `json:"warnings"`
	RuntimeConfig *struct {
		Runtime struct {
			Name string `json:"name"`
		} `json:"runtime"`
		Plan *struct {
			Endpoints []struct {
				Order      int    `json:"order"`
				Host       string `json:"host"`
				Repository string `json:"repository"`
			} `json:"endpoints"`
			ServedBy int `json:"served_by_order"`
		} `json:"plan"`
	} `json:"runtime_config"`
}

func (p crioProbe) order() []string {
	var out []string
	if p.RuntimeConfig == nil || p.RuntimeConfig.Plan == nil {
		return nil
	}
	for _, e := range p.RuntimeConfig.Plan.Endpoints {
		out = append(out, e.Host+"/"+e.Repository)
		if e.Order == p.RuntimeConfig.Plan.ServedBy {
			break
		}
	}
	return out
}

// libRun is one library's pull of a row: its outcome, the sources it
// tried, the lab hosts that accepted its connections and the user the
// private registry logged.
type libRun struct {
	ran      bool
	ok       bool
	order    []string
	accepted []string
	user     string
	err      error
}

func (r libRun) String() string {
	if !r.ran {
		return "n/a"
	}
	return fmt.Sprintf("%v: %s", r.ok, strings.Join(r.order, ","))
}

func TestCRIORows(t *testing.T) {
	tiers.Require(t, tiers.Netlab)
	if _, err := exec.LookPath("skopeo"); err != nil {
		// CI installs skopeo with the tier (.ci/run): there, its absence
		// is a failure; elsewhere the rows say why they do not run.
		msg := "the CRI-O rows need Debian's skopeo (containers/image): apt-get install skopeo"
		if tiers.Netlab.Requested() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	bin := buildPullpath(t)
	driver := buildCImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	lab := newRCLab(t)
	n, a, ca, log := lab.n, lab.n.Addrs, lab.ca, lab.log
	push := func(ref, addr string) string { return lab.push(ctx, t, ref, addr) }
	other, err := minireg.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	mirrorDigest := push(rcMirror+"/team/app:1", a.Mirror.String())
	push(rcRegistry+"/team/app:1", a.Registry.String())
	push(rcRegistry+"/rewritten/app:1", a.Registry.String())
	lab.pushPrivate(ctx, t, rcPrivate+"/"+rcPrivateRepo+":1")
	lab.private.Take()

	var table strings.Builder
	fmt.Fprintf(&table, "\n%-46s %-40s %-40s %-40s %s\n", "row", "skopeo 1.9.3 (ok: sources tried)", "c/image v5.42.1 as CRI-O (ok: sources)", "probe (ok: plan order)", "probe verdict")
	for i, row := range crioRows() {
		t.Run(row.name, func(t *testing.T) {
			root := filepath.Join(n.Dir, fmt.Sprintf("crio-%d", i))
			home := filepath.Join(root, "home")
			files := map[string]string{
				"usr/bin/crio":                      "",
				"etc/crio/crio.conf":                "[crio.image]\nsignature_policy = \"/etc/containers/policy.json\"\n" + row.crio,
				"etc/containers/registries.conf":    row.conf,
				"etc/containers/policy.json":        `{"default":[{"type":"insecureAcceptAnything"}]}`,
				"etc/resolv.conf":                   "nameserver " + a.DNS.String() + "\n",
				"etc/hosts":                         "127.0.0.1 localhost\n",
				"etc/ssl/certs/ca-certificates.crt": string(other.PEM),
				"home/.keep":                        "",
			}
			for _, h := range []string{rcDead, rcMirror, rcRegistry, rcPrivate} {
				files["etc/containers/certs.d/"+h+"/ca.crt"] = string(ca.PEM)
			}
			for k, v := range row.files {
				files[k] = v
			}
			writeFiles(t, root, files)
			if err := os.MkdirAll(filepath.Join(root, "etc/containers/registries.conf.d"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := n.Node.SetEtc(filepath.Join(root, "etc")); err != nil {
				t.Fatal(err)
			}
			image := strings.Replace(row.image, "@digest", "@"+mirrorDigest, 1)
			// The credential provider writes the namespaced file before
			// each pull (CRI-O consumes it).
			nsFile := ""
			if row.nsAuth != "" {
				nsFile = filepath.Join(root, namespacedAuthFile(row.nsAuth, refRepo(image)))
			}
			provide := func() {
				if nsFile != "" {
					writeFiles(t, root, map[string]string{namespacedAuthFile(row.nsAuth, refRepo(image)): authFileJSON(rcPrivate, rcNSUser, rcNSUserPass)})
				}
			}
			// run is one library pull with its accept log and user.
			run := func(pull func() (string, error)) libRun {
				provide()
				t0 := time.Now()
				out, err := pull()
				r := libRun{ran: true, ok: err == nil, err: err, user: lab.private.Take()}
				for _, m := range tryingRe.FindAllStringSubmatch(out, -1) {
					r.order = append(r.order, refRepo(m[1]))
				}
				for _, e := range log.since(t0) {
					if !slices.Contains(r.accepted, e.host) {
						r.accepted = append(r.accepted, e.host)
					}
				}
				return r
			}

			// skopeo: short names through pkg/shortnames, then each
			// candidate through skopeo until one pulls.
			var sk libRun
			if !row.noSkopeo {
				sk = run(func() (string, error) {
					cands := []string{image}
					if !strings.Contains(strings.SplitN(image, "/", 2)[0], ".") {
						sys := &types.SystemContext{
							SystemRegistriesConfPath:    filepath.Join(root, "etc/containers/registries.conf"),
							SystemRegistriesConfDirPath: filepath.Join(root, "etc/containers/registries.conf.d"),
							UserShortNameAliasConfPath:  filepath.Join(home, "short-name-aliases.conf"),
						}
						res, err := shortnames.Resolve(sys, image)
						if err != nil {
							return "", err
						}
						cands = nil
						for _, c := range res.PullCandidates {
							cands = append(cands, c.Value.String())
						}
					}
					var all strings.Builder
					var err error
					for _, c := range cands {
						cmd := n.Node.Command(ctx, "skopeo", "--debug", "copy", "--retry-times", "0", "docker://"+c, "dir:"+filepath.Join(home, "out"))
						cmd.Env = append(cmd.Env, "HOME="+home, "XDG_RUNTIME_DIR="+home)
						out, e := cmd.CombinedOutput()
						all.Write(out)
						err = e
						if e != nil {
							err = fmt.Errorf("%v: %s", e, netlab.TailString(string(out), 400))
						}
						if e == nil {
							break
						}
					}
					return all.String(), err
				})
			}

			// containers/image as CRI-O drives it (test/netlab/cimage).
			ci := run(func() (string, error) {
				// /etc/containers is the root's (SetEtc); /etc/crio is
				// not (ip netns exec binds only over names /etc has), so
				// CRI-O's own paths are given under the root.
				args := []string{"-image", image, "-dest", filepath.Join(home, "cimage-out"), "-blob-info-cache-dir", filepath.Join(home, "blob-info-cache"),
					"-signature-policy", "/etc/containers/policy.json", "-namespaced-auth-dir", filepath.Join(root, "etc/crio/auth"),
					"-signature-policy-dir", filepath.Join(root, "etc/crio/policies"), "-timeout", "2m"}
				if strings.Contains(row.crio, "global_auth_file") {
					args = append(args, "-global-auth-file", filepath.Join(root, globalAuth))
				}
				if row.namespace != "" {
					args = append(args, "-namespace", row.namespace)
				}
				cmd := n.Node.Command(ctx, driver, args...)
				cmd.Env = append(cmd.Env, "HOME="+home, "XDG_RUNTIME_DIR="+home)
				out, err := cmd.CombinedOutput()
				if err != nil {
					err = fmt.Errorf("%v: %s", err, netlab.TailString(string(out), 600))
				}
				return string(out), err
			})
			if nsFile != "" && row.namespace == row.nsAuth {
				// CRI-O's prepareTempAuthFile moved the file to in-use/
				// and removed it after the pull.
				if _, err := os.Stat(nsFile); err == nil {
					t.Errorf("the driver left %s in place; CRI-O consumes it", nsFile)
				}
			}

			// The probe, in the same namespace, on the same root.
			provide()
			args := []string{"probe", image, "--root", root, "-o", "json", "--timeout", "3s", "--deadline", "60s", "--blobs", "head"}
			if row.namespace != "" {
				args = append(args, "--pod-namespace", row.namespace)
			}
			cmd := n.Node.Command(ctx, bin, args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			_ = cmd.Run()
			probeUser := lab.private.Take()
			var rep crioProbe
			if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
				t.Fatalf("probe: %v; stderr %s", err, stderr.String())
			}
			// The report, CRI-O's plan included, is what the schema says.
			schematest.Validate(t, "ProbeReport", stdout.String())
			for _, secret := range []string{rcNSUserPass, rcGlobalPass} {
				if strings.Contains(stdout.String(), secret) {
					t.Errorf("the probe's report holds a password")
				}
			}
			pOrder := rep.order()
			var codes []string
			for _, w := range rep.Warnings {
				codes = append(codes, w.Code)
			}
			t.Logf("skopeo: %v accepted=%v user=%s err=%v", sk, sk.accepted, sk.user, sk.err)
			t.Logf("containers/image driver: %v accepted=%v user=%s err=%v", ci, ci.accepted, ci.user, ci.err)
			t.Logf("probe: ok=%v order=%v verdict=%s %s user=%s warnings=%v", rep.Verdict.OK, pOrder, rep.Verdict.Cause, rep.Verdict.Endpoint, probeUser, codes)
			fmt.Fprintf(&table, "%-46s %-40s %-40s %-40s %s\n", row.name, sk, ci,
				fmt.Sprintf("%v: %s", rep.Verdict.OK, strings.Join(pOrder, ",")), rep.Verdict.Cause)

			if rep.RuntimeConfig == nil || rep.RuntimeConfig.Runtime.Name != "cri-o" {
				t.Fatalf("probe did not read the root as CRI-O: %s", stdout.String())
			}
			for _, lib := range []struct {
				name string
				r    libRun
			}{{"skopeo", sk}, {"containers/image driver", ci}} {
				if !lib.r.ran {
					continue
				}
				r := lib.r
				// The ground truth is as the row expects ...
				if r.ok != row.ok || !slices.Equal(r.order, row.order) {
					t.Errorf("%s: ok=%v sources %v, the row expects ok=%v %v (%v)", lib.name, r.ok, r.order, row.ok, row.order, r.err)
				}
				// ... the lab servers saw only hosts the library says it
				// tried ...
				for _, h := range r.accepted {
					if !slices.ContainsFunc(r.order, func(s string) bool { return strings.HasPrefix(s, h+"/") }) {
						t.Errorf("%s: lab server %s accepted a connection, but the sources were %v", lib.name, h, r.order)
					}
				}
				// ... and the probe agrees with the library.
				if rep.Verdict.OK != r.ok {
					t.Errorf("probe verdict ok=%v (%s: %s), %s ok=%v", rep.Verdict.OK, rep.Verdict.Cause, rep.Verdict.Summary, lib.name, r.ok)
				}
				if row.offline {
					if len(r.accepted) > 0 || len(pOrder) > 0 {
						t.Errorf("refused before any network step, but the lab accepted %v (%s) and the probe's plan is %v", r.accepted, lib.name, pOrder)
					}
				} else if !slices.Equal(pOrder, r.order) {
					t.Errorf("probe plan order %v, %s tried %v", pOrder, lib.name, r.order)
				}
				if row.endpoint != "" && (!strings.Contains(rep.Verdict.Endpoint, row.endpoint) || r.err == nil || !strings.Contains(r.err.Error(), row.endpoint)) {
					t.Errorf("probe blames %q, %s's error is %v; both must name %s", rep.Verdict.Endpoint, lib.name, r.err, row.endpoint)
				}
				if row.user != "" && (r.user != row.user || probeUser != row.user) {
					t.Errorf("%s presented %s, the probe %s; the row expects %s", lib.name, r.user, probeUser, row.user)
				}
			}
			if !row.ok && rep.Verdict.Cause != row.cause {
				t.Errorf("probe cause %s, want %s (%s)", rep.Verdict.Cause, row.cause, rep.Verdict.Summary)
			}
			if row.warn != "" && !slices.Contains(codes, row.warn) {
				t.Errorf("probe warnings %v lack %s", codes, row.warn)
			}
		})
	}
	t.Log(table.String())
}
