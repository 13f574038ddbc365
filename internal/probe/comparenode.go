package probe

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pullpath/pullpath/internal/netpath"
	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/verdict"
)

// ResolverComparison is one host resolved twice (probe --compare-node): by
// the node's resolver, read under --root as the runtime reads it, and by
// the resolver of the pod the probe runs in (its own /etc/resolv.conf:
// the cluster DNS under dnsPolicy ClusterFirst). Both are asked from the
// probe's network namespace, so a node resolver only the node can reach
// (a link-local stub) answers as unreachable here.
type ResolverComparison struct {
	Host string         `json:"host"`
	Node ResolverAnswer `json:"node"`
	Pod  ResolverAnswer `json:"pod"`
	// Differs is true when the two answer differently (other addresses,
	// or one fails where the other answers).
	Differs bool `json:"differs"`
}

// ResolverAnswer is what one resolver answered for a host.
type ResolverAnswer struct {
	// Resolv is the resolv.conf read; Servers the nameservers asked.
	Resolv  string   `json:"resolv_conf"`
	Servers []string `json:"servers"`
	Source  string   `json:"source,omitempty"` // dns, hosts or literal
	Addrs   []string `json:"addrs"`
	// Cause is the dns cause when the host did not resolve
	// (dns.nxdomain, dns.timeout, ...).
	Cause string `json:"cause,omitempty"`
}

// CompareNodeResolvers resolves the hosts the probe touched (the image's
// registry first) with the node's view under nodeRoot and with the pod's
// own view under podRoot ("/" in a pod), each query bounded by timeout and
// sent to port (0: 53), and records the answers side by side in
// r.CompareNode.
func CompareNodeResolvers(ctx context.Context, r *Report, image, nodeRoot, podRoot string, port int, timeout time.Duration) {
	hosts := []string{}
	if img, err := ParseImage(image); err == nil {
		hosts = append(hosts, hostOnly(img.Domain))
	}
	for _, ep := range r.Endpoints {
		if h := hostOnly(ep.Host); !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	node, _ := nodeview.Load(nodeRoot)
	pod, _ := nodeview.Load(podRoot)
	out := make([]ResolverComparison, len(hosts))
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := ResolverComparison{Host: h, Node: resolveWith(ctx, node, h, port, timeout), Pod: resolveWith(ctx, pod, h, port, timeout)}
			c.Differs = c.Node.Cause != c.Pod.Cause || !slices.Equal(c.Node.Addrs, c.Pod.Addrs)
			out[i] = c
		}()
	}
	wg.Wait()
	r.CompareNode = out
}

func resolveWith(ctx context.Context, v *nodeview.View, host string, port int, timeout time.Duration) ResolverAnswer {
	var a ResolverAnswer
	if v == nil {
		a.Cause = verdict.CodeConfigResolvConf
		return a
	}
	a.Resolv = v.Resolv.Path
	res := (&netpath.Resolver{View: v, Timeout: timeout, Port: port}).Resolve(ctx, host)
	a.Source = res.Source
	for _, an := range res.Answers {
		if !slices.Contains(a.Servers, an.Server) {
			a.Servers = append(a.Servers, an.Server)
		}
	}
	a.Addrs = []string{}
	for _, ad := range res.Addrs {
		a.Addrs = append(a.Addrs, ad.String())
	}
	slices.Sort(a.Addrs)
	if res.Err != nil {
		a.Cause = res.Err.Cause
	}
	return a
}

// hostOnly drops a port from host[:port].
func hostOnly(h string) string {
	if ap, err := netip.ParseAddrPort(h); err == nil {
		return ap.Addr().String()
	}
	if i := strings.LastIndexByte(h, ':'); i > 0 && !strings.Contains(h[:i], ":") {
		return h[:i]
	}
	return h
}
