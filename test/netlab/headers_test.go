package netlab_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/tiers"
)

// The configured-header rows: which of the headers a node configures
// (config.toml's registry.headers, a hosts.toml [header] table) reach the
// registry's requests and which reach the token requests its challenge
// draws, on real containerd 1.6 and 2.x (transfer service and local pull)
// against a registry behind token authentication; the probe must send the
// same headers to the same requests. The registry logs the rcMark header's
// values per request (minireg.Bearer): the global table sets "global", the
// hosts.toml "host".

type headerRow struct {
	name   string
	rt     string // "1.6" or "2.x"
	config func(dir string) map[string]string
	// want: the rcMark values the registry's requests and the token
	// requests carried (comma-joined per request; "" for none).
	registry, token string
}

func headerRows() []headerRow {
	// rootOnly sets the header at the top level, for the server, with no
	// host table; stub adds the empty [host] table containerd 1.x needs
	// to read the file at all (containerd#10027).
	rootOnly := fmt.Sprintf("server = \"https://%s\"\n[header]\n  %s = [\"host\"]\n", rcBearer, rcMark)
	stub := rootOnly + "[host]\n"
	v2 := func(hosts string) func(dir string) map[string]string {
		return func(dir string) map[string]string {
			return map[string]string{
				"etc/containerd/config.toml": rcBase(dir, 2, "") + fmt.Sprintf(v2Registry, "/etc/containerd/certs.d") +
					fmt.Sprintf("[plugins.\"io.containerd.grpc.v1.cri\".registry.headers]\n  %s = [\"global\"]\n", rcMark),
				"etc/containerd/certs.d/" + rcBearer + "/hosts.toml": hosts,
			}
		}
	}
	v3 := func(hosts string, local bool) func(dir string) map[string]string {
		return func(dir string) map[string]string {
			images := "[plugins.\"io.containerd.cri.v1.images\"]\n"
			if local {
				images += "  use_local_image_pull = true\n"
			}
			return map[string]string{
				"etc/containerd/config.toml": rcBase(dir, 3, "") + images +
					"[plugins.\"io.containerd.cri.v1.images\".registry]\n  config_path = \"/etc/containerd/certs.d\"\n" +
					fmt.Sprintf("[plugins.\"io.containerd.cri.v1.images\".registry.headers]\n  %s = [\"global\"]\n", rcMark),
				"etc/containerd/certs.d/" + rcBearer + "/hosts.toml": hosts,
			}
		}
	}
	return []headerRow{
		// 1.x refuses a hosts.toml without a host table ("invalid `host`
		// tree") and pulls without its header.
		{name: "containerd 1.6, no host table", rt: "1.6", config: v2(rootOnly), registry: "global", token: ""},
		// 1.6: the resolver's headers, then the host's, on every
		// registry request; none on the token request.
		{name: "containerd 1.6, [host] stub", rt: "1.6", config: v2(stub), registry: "global,host", token: ""},
		// 2.1+ (containerd#11092): the host's headers on the token
		// request too; registry.headers as well on the local pull only.
		{name: "containerd 2.x, transfer service", rt: "2.x", config: v3(rootOnly, false), registry: "global,host", token: "host"},
		{name: "containerd 2.x, local pull", rt: "2.x", config: v3(rootOnly, true), registry: "global,host", token: "global,host"},
	}
}

func TestConfiguredHeaderRows(t *testing.T) {
	tiers.Require(t, tiers.Netlab)
	runtimes := map[string]rcRuntime{}
	for _, rt := range rcRuntimes(t) {
		runtimes[rt.name] = rt
	}
	bin := buildPullpath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	lab := newRCLab(t)
	image := rcBearer + "/team/app:1"
	lab.push(ctx, t, image, lab.n.Addrs.Blob.String())
	lab.bearer.Take()
	seen := func() (registry, token string) {
		got := lab.bearer.Take()
		return strings.Join(got["registry"], "|"), strings.Join(got["token"], "|")
	}
	var table strings.Builder
	fmt.Fprintf(&table, "\n%-36s %-26s %-26s\n", "row", "runtime (registry; token)", "probe (registry; token)")
	for i, row := range headerRows() {
		rt, ok := runtimes[row.rt]
		if !ok {
			t.Logf("%s: containerd %s is not here, row not run", row.name, row.rt)
			continue
		}
		t.Run(row.name, func(t *testing.T) {
			root, dir := lab.nodeRoot(t, rt, fmt.Sprintf("hdr-%d", i), row.config)
			cd, c := lab.startRuntime(t, ctx, rt, root, dir)
			if _, err := c.Pull(ctx, image, nil); err != nil {
				t.Fatalf("containerd %s: %v (log: %s)", rt.name, err, readTail(cd.Log))
			}
			cd.Stop()
			rtReg, rtTok := seen()

			rep := lab.probe(t, ctx, bin, root, image)
			pReg, pTok := seen()
			t.Logf("containerd %s (%s): registry %q, token %q; probe: registry %q, token %q, verdict ok=%v %s", rt.name, cd.Version, rtReg, rtTok, pReg, pTok, rep.Verdict.OK, rep.Verdict.Cause)
			fmt.Fprintf(&table, "%-36s %-26s %-26s\n", row.name, rtReg+"; "+rtTok, pReg+"; "+pTok)

			// The ground truth is as the row expects ...
			if rtReg != row.registry || rtTok != row.token {
				t.Errorf("containerd %s sent %q to the registry and %q to the token realm; the row expects %q and %q", rt.name, rtReg, rtTok, row.registry, row.token)
			}
			// ... and the probe sends what containerd sent.
			if !rep.Verdict.OK {
				t.Errorf("probe verdict %s at %s, containerd pulled", rep.Verdict.Cause, rep.Verdict.Endpoint)
			}
			if pReg != rtReg || pTok != rtTok {
				t.Errorf("probe sent %q to the registry and %q to the token realm; containerd %s sent %q and %q", pReg, pTok, rt.name, rtReg, rtTok)
			}
		})
	}
	t.Log(table.String())
}
