package netlab_test

import (
	"bytes"
	"context"
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
// For every row the probe's plan (host/repository, in order, up to the
// endpoint that served) must equal the sources containers/image tried
// (its "Trying to access" debug lines, checked against the lab servers'
// accept log), and its verdict the library's outcome.

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

	var table strings.Builder
	fmt.Fprintf(&table, "\n%-46s %-62s %-62s %s\n", "row", "containers/image (ok: sources tried)", "probe (ok: plan order)", "probe verdict")
	for i, row := range crioRows() {
		t.Run(row.name, func(t *testing.T) {
			root := filepath.Join(n.Dir, fmt.Sprintf("crio-%d", i))
			home := filepath.Join(root, "home")
			files := map[string]string{
				"usr/bin/crio":                      "",
				"etc/crio/crio.conf":                "[crio.image]\nsignature_policy = \"/etc/containers/policy.json\"\n",
				"etc/containers/registries.conf":    row.conf,
				"etc/containers/policy.json":        `{"default":[{"type":"insecureAcceptAnything"}]}`,
				"etc/resolv.conf":                   "nameserver " + a.DNS.String() + "\n",
				"etc/hosts":                         "127.0.0.1 localhost\n",
				"etc/ssl/certs/ca-certificates.crt": string(other.PEM),
				"home/.keep":                        "",
			}
			for _, h := range []string{rcDead, rcMirror, rcRegistry} {
				files["etc/containers/certs.d/"+h+"/ca.crt"] = string(ca.PEM)
			}
			writeFiles(t, root, files)
			if err := os.MkdirAll(filepath.Join(root, "etc/containers/registries.conf.d"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := n.Node.SetEtc(filepath.Join(root, "etc")); err != nil {
				t.Fatal(err)
			}
			image := strings.Replace(row.image, "@digest", "@"+mirrorDigest, 1)

			// The library: short names through pkg/shortnames, then
			// each candidate through skopeo until one pulls.
			t0 := time.Now()
			var libOrder []string
			var libErr error
			cands := []string{image}
			if !strings.Contains(strings.SplitN(image, "/", 2)[0], ".") {
				sys := &types.SystemContext{
					SystemRegistriesConfPath:    filepath.Join(root, "etc/containers/registries.conf"),
					SystemRegistriesConfDirPath: filepath.Join(root, "etc/containers/registries.conf.d"),
					UserShortNameAliasConfPath:  filepath.Join(home, "short-name-aliases.conf"),
				}
				res, err := shortnames.Resolve(sys, image)
				cands = nil
				if err != nil {
					libErr = err
				} else {
					for _, c := range res.PullCandidates {
						cands = append(cands, c.Value.String())
					}
				}
			}
			for _, c := range cands {
				cmd := n.Node.Command(ctx, "skopeo", "--debug", "copy", "--retry-times", "0", "docker://"+c, "dir:"+filepath.Join(home, "out"))
				cmd.Env = append(cmd.Env, "HOME="+home, "XDG_RUNTIME_DIR="+home)
				out, err := cmd.CombinedOutput()
				for _, m := range tryingRe.FindAllStringSubmatch(string(out), -1) {
					libOrder = append(libOrder, refRepo(m[1]))
				}
				libErr = err
				if err != nil {
					libErr = fmt.Errorf("%v: %s", err, netlab.TailString(string(out), 400))
				}
				if err == nil {
					break
				}
			}
			libOK := libErr == nil
			var accepted []string
			for _, e := range log.since(t0) {
				if !slices.Contains(accepted, e.host) {
					accepted = append(accepted, e.host)
				}
			}

			// The probe, in the same namespace, on the same root.
			cmd := n.Node.Command(ctx, bin, "probe", image, "--root", root, "-o", "json", "--timeout", "3s", "--deadline", "60s", "--blobs", "head")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			_ = cmd.Run()
			var rep crioProbe
			if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
				t.Fatalf("probe: %v; stderr %s", err, stderr.String())
			}
			// The report, CRI-O's plan included, is what the schema says.
			schematest.Validate(t, "ProbeReport", stdout.String())
			pOrder := rep.order()
			var codes []string
			for _, w := range rep.Warnings {
				codes = append(codes, w.Code)
			}
			t.Logf("containers/image: ok=%v sources=%v accepted=%v err=%v", libOK, libOrder, accepted, libErr)
			t.Logf("probe: ok=%v order=%v verdict=%s %s warnings=%v", rep.Verdict.OK, pOrder, rep.Verdict.Cause, rep.Verdict.Endpoint, codes)
			fmt.Fprintf(&table, "%-46s %-62s %-62s %s\n", row.name, fmt.Sprintf("%v: %s", libOK, strings.Join(libOrder, ",")),
				fmt.Sprintf("%v: %s", rep.Verdict.OK, strings.Join(pOrder, ",")), rep.Verdict.Cause)

			// The ground truth is as the row expects ...
			if libOK != row.ok || !slices.Equal(libOrder, row.order) {
				t.Errorf("containers/image: ok=%v sources %v, the row expects ok=%v %v (%v)", libOK, libOrder, row.ok, row.order, libErr)
			}
			// ... the lab servers saw only hosts the library says it tried ...
			for _, h := range accepted {
				if !slices.ContainsFunc(libOrder, func(s string) bool { return strings.HasPrefix(s, h+"/") }) {
					t.Errorf("lab server %s accepted a connection, but containers/image's sources were %v", h, libOrder)
				}
			}
			// ... and the probe agrees with the library.
			if rep.RuntimeConfig == nil || rep.RuntimeConfig.Runtime.Name != "cri-o" {
				t.Fatalf("probe did not read the root as CRI-O: %s", stdout.String())
			}
			if rep.Verdict.OK != libOK {
				t.Errorf("probe verdict ok=%v (%s: %s), containers/image ok=%v", rep.Verdict.OK, rep.Verdict.Cause, rep.Verdict.Summary, libOK)
			}
			if row.offline {
				if len(accepted) > 0 || len(pOrder) > 0 {
					t.Errorf("refused before any network step, but the lab accepted %v and the probe's plan is %v", accepted, pOrder)
				}
			} else if !slices.Equal(pOrder, libOrder) {
				t.Errorf("probe plan order %v, containers/image tried %v", pOrder, libOrder)
			}
			if !libOK && rep.Verdict.Cause != row.cause {
				t.Errorf("probe cause %s, want %s (%s)", rep.Verdict.Cause, row.cause, rep.Verdict.Summary)
			}
			if row.endpoint != "" && (!strings.Contains(rep.Verdict.Endpoint, row.endpoint) || !strings.Contains(libErr.Error(), row.endpoint)) {
				t.Errorf("probe blames %q, containers/image's error is %v; both must name %s", rep.Verdict.Endpoint, libErr, row.endpoint)
			}
			if row.warn != "" && !slices.Contains(codes, row.warn) {
				t.Errorf("probe warnings %v lack %s", codes, row.warn)
			}
		})
	}
	t.Log(table.String())
}
