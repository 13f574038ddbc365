package netlab_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/cri"
	"github.com/pullpath/pullpath/internal/tiers"
	"github.com/pullpath/pullpath/test/netlab"
)

// The runtime-configuration rows: real containerd daemons in
// the lab's node namespace, each started on a node root laid out the way a
// distribution lays it out, pull through CRI; the probe reads the same
// root. In every row the image's registry, dead.netlab.test, refuses
// connections (nothing listens on its address) or a mirror does, so a
// probe that reads the configuration and one that does not reach different
// verdicts. Each row checks that the probe's plan order equals the order
// the runtime tried (containerd's "trying next host" lines and the lab
// servers' accept log) and that its verdict equals the runtime's.

const (
	rcDead     = "dead.netlab.test"     // the Dead address: connection refused
	rcMirror   = "mirror.netlab.test"   // a registry holding team/app:1
	rcRegistry = "registry.netlab.test" // the same image under its own name
)

// rcRuntime is one containerd the rows run on.
type rcRuntime struct {
	name string // "1.6" or "2.x"
	bin  string // the daemon binary
	// nodeBin is where the node root holds it (the probe reads its
	// version from there, as from a node's /usr/bin/containerd).
	nodeBin string
}

func rcRuntimes(t *testing.T) []rcRuntime {
	var out []rcRuntime
	if p, err := exec.LookPath("containerd"); err == nil {
		out = append(out, rcRuntime{name: "1.6", bin: p, nodeBin: "usr/bin/containerd"})
	}
	if p := os.Getenv("PULLPATH_CONTAINERD2"); p != "" {
		out = append(out, rcRuntime{name: "2.x", bin: p, nodeBin: "usr/local/bin/containerd"})
	} else {
		t.Log("PULLPATH_CONTAINERD2 is not set (export PULLPATH_CONTAINERD2=$(tools/containerd2/build.sh)/containerd): the containerd 2.x rows are not run")
	}
	return out
}

// rcBase is the daemon part of config.toml: netlab.ContainerdConfig
// (root, state and sockets under dir) without its registry table, in
// configuration version 2 or 3, with imports when given.
func rcBase(dir string, version int, imports string) string {
	cfg := netlab.ContainerdConfig(dir)
	i := strings.Index(cfg, "  [plugins.\"io.containerd.grpc.v1.cri\".registry]")
	if i < 0 {
		panic("netlab.ContainerdConfig has no registry table")
	}
	cfg = strings.Replace(cfg[:i], "version = 2", fmt.Sprintf("version = %d", version), 1)
	if imports != "" {
		cfg = "imports = [" + imports + "]\n" + cfg
	}
	return cfg
}

type rcRow struct {
	name string
	// config builds config.toml and any other file of the node root
	// (path relative to the root → content).
	config func(dir string) map[string]string
	// image is the reference pulled: "tag" (dead.netlab.test/team/app:1)
	// or "digest" (by the mirror's digest), or "registry" (the live
	// registry's tag).
	image string
	// want per runtime: ok, and the hosts tried in order.
	want map[string]rcWant
	// attempts: the order is every attempt that failed, in order, one
	// per host entry (containerd's "trying next host" and "fetch failed"
	// lines), not the distinct hosts: a host listed twice counts twice.
	attempts bool
	// warning is a code the probe must report.
	warning string
}

type rcWant struct {
	ok    bool
	order []string
}

const v2Registry = `[plugins."io.containerd.grpc.v1.cri".registry]
  config_path = %q
`

func mirrorHosts(mirror string, caps string) string {
	return fmt.Sprintf("server = \"https://%s\"\n[host.\"https://%s\"]\n  capabilities = [%s]\n", rcDead, mirror, caps)
}

func rcRows() []rcRow {
	pullResolve := `"pull", "resolve"`
	mirrorOK := rcWant{true, []string{rcMirror}}
	deadOnly := rcWant{false, []string{rcDead}}
	return []rcRow{
		{name: "config_path elsewhere (k3s layout)", image: "tag",
			config: func(dir string) map[string]string {
				return map[string]string{
					"etc/containerd/config.toml":                                 rcBase(dir, 2, "") + fmt.Sprintf(v2Registry, "/etc/containerd/k3s/agent/certs.d"),
					"etc/containerd/k3s/agent/certs.d/" + rcDead + "/hosts.toml": mirrorHosts(rcMirror, pullResolve),
				}
			},
			want: map[string]rcWant{"1.6": mirrorOK, "2.x": mirrorOK}},
		{name: "legacy inline mirrors (GKE layout)", image: "tag",
			config: func(dir string) map[string]string {
				return map[string]string{
					"etc/containerd/config.toml": rcBase(dir, 2, "") + fmt.Sprintf("[plugins.\"io.containerd.grpc.v1.cri\".registry.mirrors.%q]\n  endpoint = [\"https://%s\"]\n", rcDead, rcMirror),
				}
			},
			want: map[string]rcWant{"1.6": mirrorOK, "2.x": mirrorOK}},
		{name: "config version 3", image: "tag",
			config: func(dir string) map[string]string {
				return map[string]string{
					"etc/containerd/config.toml":                       rcBase(dir, 3, "") + "[plugins.\"io.containerd.cri.v1.images\".registry]\n  config_path = \"/etc/containerd/certs.d\"\n",
					"etc/containerd/certs.d/" + rcDead + "/hosts.toml": mirrorHosts(rcMirror, pullResolve),
				}
			},
			// containerd 1.6 ignores the version 3 registry table: no
			// config_path, no certs.d, the registry alone.
			want: map[string]rcWant{"1.6": deadOnly, "2.x": mirrorOK}},
		{name: "imported drop-in (EKS layout)", image: "tag",
			config: func(dir string) map[string]string {
				return map[string]string{
					"etc/containerd/config.toml":                       rcBase(dir, 2, `"/etc/containerd/config.d/*.toml"`),
					"etc/containerd/config.d/10-reg.toml":              "version = 2\n" + fmt.Sprintf(v2Registry, "/etc/containerd/certs.d"),
					"etc/containerd/certs.d/" + rcDead + "/hosts.toml": mirrorHosts(rcMirror, pullResolve),
				}
			},
			want: map[string]rcWant{"1.6": mirrorOK, "2.x": mirrorOK}},
		{name: "_default", image: "tag",
			config: func(dir string) map[string]string {
				return map[string]string{
					"etc/containerd/config.toml":                 rcBase(dir, 2, "") + fmt.Sprintf(v2Registry, "/etc/containerd/certs.d"),
					"etc/containerd/certs.d/_default/hosts.toml": fmt.Sprintf("[host.\"https://%s\"]\n  capabilities = [%s]\n", rcMirror, pullResolve),
				}
			},
			want: map[string]rcWant{"1.6": mirrorOK, "2.x": mirrorOK}},
		{name: "mirror down, fallback works", image: "registry",
			config: func(dir string) map[string]string {
				return map[string]string{
					"etc/containerd/config.toml":                           rcBase(dir, 2, "") + fmt.Sprintf(v2Registry, "/etc/containerd/certs.d"),
					"etc/containerd/certs.d/" + rcRegistry + "/hosts.toml": fmt.Sprintf("server = \"https://%s\"\n[host.\"https://%s\"]\n  capabilities = [%s]\n", rcRegistry, rcDead, pullResolve),
				}
			},
			want: map[string]rcWant{"1.6": {true, []string{rcDead, rcRegistry}}, "2.x": {true, []string{rcDead, rcRegistry}}}},
		{name: "primary unreachable, mirror serves (default config_path)", image: "tag",
			config: func(dir string) map[string]string {
				// No config_path: containerd 1.6 reads no certs.d and fails
				// on the primary. containerd 2.x's default is the list
				// /etc/containerd/certs.d:/etc/docker/certs.d, which its
				// transfer service takes as one directory
				// (containerd#12415): it fails the same way.
				return map[string]string{
					"etc/containerd/config.toml":                       rcBase(dir, 2, ""),
					"etc/containerd/certs.d/" + rcDead + "/hosts.toml": mirrorHosts(rcMirror, pullResolve),
				}
			},
			want: map[string]rcWant{"1.6": deadOnly, "2.x": deadOnly}},
		{name: "primary unreachable, mirror serves (default config_path, local pull)", image: "tag",
			config: func(dir string) map[string]string {
				// use_local_image_pull: containerd 2.x's CRI pull splits
				// the default list and reads the mirror.
				return map[string]string{
					"etc/containerd/config.toml":                       rcBase(dir, 3, "") + "[plugins.\"io.containerd.cri.v1.images\"]\n  use_local_image_pull = true\n",
					"etc/containerd/certs.d/" + rcDead + "/hosts.toml": mirrorHosts(rcMirror, pullResolve),
				}
			},
			want: map[string]rcWant{"2.x": mirrorOK}},
		{name: "digest-only mirror, tag reference", image: "tag",
			config: func(dir string) map[string]string {
				return map[string]string{
					"etc/containerd/config.toml":                       rcBase(dir, 2, "") + fmt.Sprintf(v2Registry, "/etc/containerd/certs.d"),
					"etc/containerd/certs.d/" + rcDead + "/hosts.toml": mirrorHosts(rcMirror, `"pull"`),
				}
			},
			want: map[string]rcWant{"1.6": deadOnly, "2.x": deadOnly}},
		{name: "hosts.toml host equal to its server", image: "tag", attempts: true, warning: "config.hosts-server-repeated",
			config: func(dir string) map[string]string {
				// containerd keeps the [host] table and the server, the
				// same endpoint, and tries it twice (hosts.go
				// parseHostsFile, resolver.go Resolve).
				return map[string]string{
					"etc/containerd/config.toml":                       rcBase(dir, 2, "") + fmt.Sprintf(v2Registry, "/etc/containerd/certs.d"),
					"etc/containerd/certs.d/" + rcDead + "/hosts.toml": fmt.Sprintf("server = \"https://%s\"\n[host.\"https://%s\"]\n  capabilities = [%s]\n", rcDead, rcDead, pullResolve),
				}
			},
			want: map[string]rcWant{"1.6": {false, []string{rcDead, rcDead}}, "2.x": {false, []string{rcDead, rcDead}}}},
		{name: "digest-only mirror, digest reference", image: "digest",
			config: func(dir string) map[string]string {
				return map[string]string{
					"etc/containerd/config.toml":                       rcBase(dir, 2, "") + fmt.Sprintf(v2Registry, "/etc/containerd/certs.d"),
					"etc/containerd/certs.d/" + rcDead + "/hosts.toml": mirrorHosts(rcMirror, `"pull"`),
				}
			},
			want: map[string]rcWant{"1.6": mirrorOK, "2.x": mirrorOK}},
	}
}

// acceptLog records, in time order, which lab server accepted a
// connection.
type acceptLog struct {
	mu     sync.Mutex
	events []rcEvent
}

type rcEvent struct {
	at   time.Time
	host string
}

func (a *acceptLog) add(host string) {
	a.mu.Lock()
	a.events = append(a.events, rcEvent{time.Now(), host})
	a.mu.Unlock()
}

func (a *acceptLog) since(t0 time.Time) []rcEvent {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []rcEvent
	for _, e := range a.events {
		if !e.at.Before(t0) {
			out = append(out, e)
		}
	}
	return out
}

type loggedListener struct {
	net.Listener
	host string
	log  *acceptLog
}

func (l loggedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.log.add(l.host)
	}
	return c, err
}

// tryingNext reads containerd's lines for a host that failed (time, host)
// from its log since offset: "trying next host" (1.6, and 2.x's local
// pull) and "fetch failed" (2.x's transfer service).
var tryingNextRe = regexp.MustCompile(`time="([^"]+)".*msg="(?:trying next host|fetch failed)".* host=("?)([^ "]+)`)

func tryingNext(t *testing.T, path string, offset int64) []rcEvent {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	var out []rcEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		m := tryingNextRe.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil {
			continue
		}
		out = append(out, rcEvent{at, m[3]})
	}
	return out
}

// runtimeOrder merges the two records into the distinct hosts in the
// order the runtime first touched them.
func runtimeOrder(events ...[]rcEvent) []string {
	var all []rcEvent
	for _, e := range events {
		all = append(all, e...)
	}
	slices.SortStableFunc(all, func(a, b rcEvent) int { return a.at.Compare(b.at) })
	var out []string
	for _, e := range all {
		h, _, err := net.SplitHostPort(e.host)
		if err != nil {
			h = e.host
		}
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// rcProbe is the part of the probe report the rows read.
type rcProbe struct {
	Verdict struct {
		OK       bool   `json:"ok"`
		Cause    string `json:"cause"`
		Endpoint string `json:"endpoint"`
	} `json:"verdict"`
	Warnings []struct {
		Code string `json:"code"`
	} `json:"warnings"`
	RuntimeConfig *struct {
		Runtime struct {
			Version string `json:"version"`
		} `json:"runtime"`
		Plan *struct {
			Endpoints []struct {
				Order        int      `json:"order"`
				Host         string   `json:"host"`
				Capabilities []string `json:"capabilities"`
			} `json:"endpoints"`
			ServedBy int `json:"served_by_order"`
		} `json:"plan"`
	} `json:"runtime_config"`
}

// probeOrder is the hosts the probe's plan has the runtime try, up to the
// one that served.
func (p rcProbe) order(byDigest bool) []string {
	var out []string
	if p.RuntimeConfig == nil || p.RuntimeConfig.Plan == nil {
		return nil
	}
	for _, e := range p.RuntimeConfig.Plan.Endpoints {
		has := func(c string) bool { return len(e.Capabilities) == 0 || slices.Contains(e.Capabilities, c) }
		if !has("pull") || (!byDigest && !has("resolve")) {
			continue
		}
		out = append(out, e.Host)
		if e.Order == p.RuntimeConfig.Plan.ServedBy {
			break
		}
	}
	return out
}

func TestRuntimeConfigRows(t *testing.T) {
	tiers.Require(t, tiers.Netlab)
	runtimes := rcRuntimes(t)
	bin := buildPullpath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	lab := newRCLab(t)
	a, log := lab.n.Addrs, lab.log
	push := func(ref, addr string) string { return lab.push(ctx, t, ref, addr) }
	mirrorDigest := push(rcMirror+"/team/app:1", a.Mirror.String())
	push(rcRegistry+"/team/app:1", a.Registry.String())

	var table strings.Builder
	fmt.Fprintf(&table, "\n%-62s %-4s %-28s %-28s %s\n", "row", "rt", "runtime (ok: order)", "probe (ok: order)", "probe verdict")
	for _, rt := range runtimes {
		for i, row := range rcRows() {
			want, ok := row.want[rt.name]
			if !ok {
				continue
			}
			t.Run(rt.name+"/"+row.name, func(t *testing.T) {
				root, dir := lab.nodeRoot(t, rt, fmt.Sprintf("rc-%s-%d", rt.name, i), row.config)
				image := rcDead + "/team/app:1"
				switch row.image {
				case "digest":
					image = rcDead + "/team/app@" + mirrorDigest
				case "registry":
					image = rcRegistry + "/team/app:1"
				}
				byDigest := row.image == "digest"

				// The runtime.
				cd, c := lab.startRuntime(t, ctx, rt, root, dir)
				fi, _ := os.Stat(cd.Log)
				t0 := time.Now()
				_, pullErr := c.Pull(ctx, image, nil)
				rtOK := pullErr == nil
				rtOrder := runtimeOrder(tryingNext(t, cd.Log, fi.Size()), log.since(t0))
				if row.attempts {
					rtOrder = nil
					for _, e := range tryingNext(t, cd.Log, fi.Size()) {
						h, _, err := net.SplitHostPort(e.host)
						if err != nil {
							h = e.host
						}
						rtOrder = append(rtOrder, h)
					}
				}
				cd.Stop()

				// The probe, in the same namespace, on the same root.
				rep := lab.probe(t, ctx, bin, root, image)
				pOrder := rep.order(byDigest)
				var codes []string
				for _, w := range rep.Warnings {
					codes = append(codes, w.Code)
				}
				t.Logf("runtime %s (%s): ok=%v order=%v err=%v", rt.name, cd.Version, rtOK, rtOrder, pullErr)
				t.Logf("probe: ok=%v order=%v verdict=%s %s warnings=%v", rep.Verdict.OK, pOrder, rep.Verdict.Cause, rep.Verdict.Endpoint, codes)
				fmt.Fprintf(&table, "%-62s %-4s %-28s %-28s %s\n", row.name, rt.name, fmt.Sprintf("%v: %s", rtOK, strings.Join(rtOrder, ",")),
					fmt.Sprintf("%v: %s", rep.Verdict.OK, strings.Join(pOrder, ",")), rep.Verdict.Cause)

				// The ground truth is as the row expects ...
				if rtOK != want.ok || !slices.Equal(rtOrder, want.order) {
					var pe *cri.PullError
					errors.As(pullErr, &pe)
					t.Errorf("containerd %s: ok=%v order %v, the row expects ok=%v order %v (log: %s)", rt.name, rtOK, rtOrder, want.ok, want.order, readTail(cd.Log))
				}
				// ... and the probe agrees with it.
				if rep.Verdict.OK != rtOK {
					t.Errorf("probe verdict ok=%v (%s), containerd ok=%v", rep.Verdict.OK, rep.Verdict.Cause, rtOK)
				}
				if !slices.Equal(pOrder, rtOrder) {
					t.Errorf("probe plan order %v, containerd tried %v", pOrder, rtOrder)
				}
				if row.warning != "" && !slices.Contains(codes, row.warning) {
					t.Errorf("probe warnings %v, want %s", codes, row.warning)
				}
				if !rtOK && !strings.Contains(rep.Verdict.Endpoint, rcDead) {
					t.Errorf("probe blames %q, containerd failed on %s", rep.Verdict.Endpoint, rcDead)
				}
			})
		}
	}
	t.Log(table.String())
}

// nodeRoot lays out the node root name under the lab's directory for rt:
// config's files (given the daemon's directory), the lab's resolver, an
// /etc/hosts and the lab's CA as the trust store, and the runtime's binary
// where the node holds it; the node namespace's /etc becomes the root's.
func (l *rcLab) nodeRoot(t *testing.T, rt rcRuntime, name string, config func(dir string) map[string]string) (root, dir string) {
	t.Helper()
	root = filepath.Join(l.n.Dir, name)
	dir = filepath.Join(root, "daemon")
	files := config(dir)
	files["etc/resolv.conf"] = "nameserver " + l.n.Addrs.DNS.String() + "\n"
	files["etc/hosts"] = "127.0.0.1 localhost\n"
	files["etc/ssl/certs/ca-certificates.crt"] = string(l.ca.PEM)
	writeFiles(t, root, files)
	if err := linkOrCopy(rt.bin, filepath.Join(root, rt.nodeBin)); err != nil {
		t.Fatal(err)
	}
	if err := l.n.Node.SetEtc(filepath.Join(root, "etc")); err != nil {
		t.Fatal(err)
	}
	return root, dir
}

// startRuntime starts rt's containerd in the node namespace on root's
// config.toml and dials its CRI; both stop with the test.
func (l *rcLab) startRuntime(t *testing.T, ctx context.Context, rt rcRuntime, root, dir string) (*netlab.Containerd, *cri.Client) {
	t.Helper()
	cd, err := netlab.StartContainerdWith(ctx, l.n.Node, dir, rt.bin, filepath.Join(root, "etc/containerd/config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cd.Stop)
	c, err := cri.Dial(ctx, cd.Socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return cd, c
}

// probe runs the pullpath binary bin's probe of image in the node
// namespace on root (blob HEADs only) and decodes its report.
func (l *rcLab) probe(t *testing.T, ctx context.Context, bin, root, image string) rcProbe {
	t.Helper()
	cmd := l.n.Node.Command(ctx, bin, "probe", image, "--root", root, "-o", "json", "--timeout", "3s", "--deadline", "60s", "--blobs", "head")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run()
	var rep rcProbe
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("probe: %v; stderr %s", err, stderr.String())
	}
	return rep
}

// linkOrCopy puts the binary src at dst (a hard link when the file system
// allows, a copy otherwise).
func linkOrCopy(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
