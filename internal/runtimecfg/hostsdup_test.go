package runtimecfg

import (
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/verdict"
)

// TestRepeatedEndpoint: a [host] table equal to server stays twice in the
// plan, as containerd's ConfigureHosts keeps it, with a
// config.hosts-server-repeated warning naming both orders; a [host] table
// for another endpoint does not warn.
func TestRepeatedEndpoint(t *testing.T) {
	root := writeRoot(t, map[string]string{
		"etc/containerd/certs.d/dup.lab/hosts.toml":    "server = \"https://dup.lab\"\n[host.\"https://dup.lab\"]\n  capabilities = [\"pull\", \"resolve\"]\n",
		"etc/containerd/certs.d/dup2.lab/hosts.toml":   "server = \"https://dup2.lab\"\n[host.\"https://m.lab\"]\n[host.\"m.lab\"]\n",
		"etc/containerd/certs.d/mirror.lab/hosts.toml": "server = \"https://mirror.lab\"\n[host.\"https://m.lab\"]\n",
	})
	for _, tc := range []struct {
		registry, order, warn string
	}{
		{"dup.lab", "registry:https://dup.lab/v2 registry:https://dup.lab/v2", "a [host] table and server name the same endpoint https://dup.lab/v2: containerd keeps both and tries it twice in a row (plan orders 1 and 2)"},
		{"dup2.lab", "mirror:https://m.lab/v2 mirror:https://m.lab/v2 registry:https://dup2.lab/v2", "two [host] tables name the same endpoint https://m.lab/v2: containerd keeps both and tries it twice in a row (plan orders 1 and 2)"},
		{"mirror.lab", "mirror:https://m.lab/v2 registry:https://mirror.lab/v2", ""},
	} {
		_, p, err := plan(t, root, ctd20, tc.registry, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := order(p); got != tc.order {
			t.Errorf("%s: plan %s, want %s", tc.registry, got, tc.order)
		}
		var msgs []string
		for _, w := range p.Warnings {
			if w.Code == verdict.CodeConfigHostsServerRepeated {
				msgs = append(msgs, w.Message)
			}
		}
		switch {
		case tc.warn == "" && len(msgs) > 0:
			t.Errorf("%s: unexpected %q", tc.registry, msgs)
		case tc.warn != "" && (len(msgs) != 1 || !strings.Contains(msgs[0], tc.warn) || !strings.HasPrefix(msgs[0], "/etc/containerd/certs.d/"+tc.registry+"/hosts.toml: ")):
			t.Errorf("%s: warnings %q, want one with %q", tc.registry, msgs, tc.warn)
		}
	}
}
