package depcheck

import (
	"debug/elf"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/pullpath/pullpath"

// rule forbids packages in a binary's link. A package is forbidden when its
// import path is one of the prefixes (or equal to it); it is allowed anyway
// when every package importing it is under one of allowedVia, so that a
// dependency the binary needs may bring it in, but pullpath's code never does.
type rule struct {
	prefixes   []string
	allowedVia []string
	why        string
}

// linkedNowhere are packages no pullpath command uses.
var linkedNowhere = []rule{
	{prefixes: []string{"plugin"}, why: "Go's plugin package switches the linker to dynamic mode: every symbol exported, every method kept"},
	{prefixes: []string{"sigs.k8s.io/kustomize/", "k8s.io/cli-runtime/"}, why: "kubectl's flags come from client-go's clientcmd (cluster.KubeFlags), not cli-runtime, which links kustomize and plugin"},
	{prefixes: []string{"k8s.io/kubectl/", "k8s.io/component-base/"}, why: "pullpath has no use for kubectl's or a component's machinery"},
	{prefixes: []string{module + "/internal/testpki"}, why: "test PKI (throw-away CAs and keys) is for tests only; the embedded lab ships its own"},
	{prefixes: []string{"go.podman.io/"}, why: "registries.conf's rules are written in internal/runtimecfg (regconf.go); containers/image is their tests' oracle only: its reference grammar, storage and configfile packages add 14 package inits and about 2.7 ms to every start"},
}

// The lab's distribution v3 needs registry/handlers (which imports its redis
// cache) and registry/storage/driver/base (which imports its tracing, with
// OpenTelemetry's exporters): they may come in through distribution only.
var throughDistributionOnly = []rule{
	{prefixes: []string{"github.com/redis/go-redis/"}, allowedVia: []string{"github.com/distribution/distribution/v3/", "github.com/redis/go-redis/"},
		why: "only distribution's redis blob-descriptor cache may link go-redis"},
	{prefixes: []string{"go.opentelemetry.io/otel/exporters/", "go.opentelemetry.io/contrib/exporters/", "go.opentelemetry.io/otel/sdk"},
		allowedVia: []string{"github.com/distribution/distribution/v3/", "go.opentelemetry.io/", "github.com/redis/go-redis/extra/"},
		why:        "only distribution's tracing may link OpenTelemetry's SDK and exporters"},
}

// fullOnly are packages the full binary must not link either: it reaches
// the cluster through internal/cluster/kube, a REST client with a scheme of
// the four API groups it uses. The typed clientset and its scheme register
// every API group (about 50 more API packages and their apply
// configurations, and an init before every command); tests may keep them.
var fullOnly = []rule{
	{prefixes: []string{"k8s.io/client-go/kubernetes", "k8s.io/client-go/applyconfigurations/", "k8s.io/client-go/gentype"},
		why: "no typed clientset and no kubernetes/scheme: internal/cluster/kube is the client (the typed clientset is for tests only)"},
}

// nodeOnly are packages the slim node binary must not link: it probes and
// explains, and has no lab, no registry server and no Kubernetes client.
var nodeOnly = []rule{
	{prefixes: []string{"github.com/redis/go-redis/", "go.opentelemetry.io/otel/exporters/", "go.opentelemetry.io/contrib/exporters/", "go.opentelemetry.io/otel/sdk"},
		why: "the node binary runs no registry, so nothing may bring redis or tracing exporters"},
	{prefixes: []string{"github.com/distribution/distribution/", module + "/internal/lab", module + "/internal/demo"}, why: "the embedded lab is in cmd/pullpath only"},
	{prefixes: []string{"k8s.io/client-go/kubernetes", "k8s.io/client-go/applyconfigurations/", "k8s.io/api/", module + "/internal/cluster"},
		why: "no typed clientset or API types in the node binary (the monitor's node condition needs a small REST client only)"},
	{prefixes: []string{"github.com/google/go-containerregistry/pkg/registry"}, why: "no registry server in the node binary"},
	{prefixes: []string{"k8s.io/kubelet/", "k8s.io/apimachinery/pkg/runtime"},
		why: "the kubelet's credential provider types are mirrored in internal/nodeview (kubeletcred.go, checked against k8s.io/kubelet in its tests): k8s.io/kubelet registers with apimachinery's scheme, 62 more packages, +4.2 MB and +2.5 MiB RSS in every node command"},
	{prefixes: []string{"github.com/Azure/azure-sdk-for-go/", "github.com/AzureAD/"}, why: "reading Azure's configuration is the full binary's (register it in cmd/pullpath, not in internal/cli's root)"},
	{prefixes: []string{"k8s.io/cri-api/", module + "/internal/cri", "google.golang.org/grpc/balancer", "google.golang.org/grpc/internal/transport"},
		why: "probe --runtime-pull's CRI client is the full binary's (internal/probe/criruntime, blank-imported by cmd/pullpath): gRPC's client and the CRI API's protobuf registration are a tenth of the node binary's start (containerd's hosts.toml parser brings only gRPC's status codes)"},
}

var binaries = []struct {
	pkg   string
	rules []rule
}{
	{module + "/cmd/pullpath", concat(linkedNowhere, throughDistributionOnly, fullOnly)},
	{module + "/cmd/pullpath-node", concat(linkedNowhere, throughDistributionOnly, nodeOnly)},
}

func concat(rs ...[]rule) []rule {
	var out []rule
	for _, r := range rs {
		out = append(out, r...)
	}
	return out
}

func goCmd(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("depcheck skipped: no go command in PATH (hack/test.sh runs it with the toolchain)")
	}
	return goBin
}

// deps returns the import graph of what pkg links: package -> its imports.
func deps(t *testing.T, pkg string) map[string][]string {
	t.Helper()
	out, err := exec.Command(goCmd(t), "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 {
			graph[f[0]] = f[1:]
		}
	}
	return graph
}

func matches(p string, prefixes []string) bool {
	for _, pre := range prefixes {
		if p == strings.TrimSuffix(pre, "/") || strings.HasPrefix(p, pre) {
			return true
		}
	}
	return false
}

// chain returns an import chain from root to target, for the error message.
func chain(graph map[string][]string, root, target string) string {
	prev := map[string]string{root: ""}
	queue := []string{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == target {
			var path []string
			for ; p != ""; p = prev[p] {
				path = append([]string{p}, path...)
			}
			return strings.Join(path, " -> ")
		}
		for _, imp := range graph[p] {
			if _, seen := prev[imp]; !seen {
				prev[imp] = p
				queue = append(queue, imp)
			}
		}
	}
	return target
}

// violations returns one line per broken rule: how many forbidden packages
// pkg links, and the import chain to the first of them.
func violations(graph map[string][]string, pkg string, rules []rule) []string {
	importers := map[string][]string{}
	for p, imps := range graph {
		for _, imp := range imps {
			importers[imp] = append(importers[imp], p)
		}
	}
	var names []string
	for p := range graph {
		names = append(names, p)
	}
	sort.Strings(names)
	var out []string
	for _, r := range rules {
		var bad []string
		for _, p := range names {
			if !matches(p, r.prefixes) {
				continue
			}
			allowed := len(r.allowedVia) > 0
			for _, by := range importers[p] {
				allowed = allowed && matches(by, r.allowedVia)
			}
			if !allowed {
				bad = append(bad, p)
			}
		}
		if len(bad) > 0 {
			out = append(out, fmt.Sprintf("%s and %d more package(s) (%s): %s", bad[0], len(bad)-1, r.why, chain(graph, pkg, bad[0])))
		}
	}
	return out
}

// TestBinariesLinkOnlyWhatTheyUse checks each binary's `go list -deps`.
func TestBinariesLinkOnlyWhatTheyUse(t *testing.T) {
	for _, b := range binaries {
		t.Run(filepath.Base(b.pkg), func(t *testing.T) {
			graph := deps(t, b.pkg)
			if _, ok := graph["fmt"]; !ok || len(graph) < 50 {
				t.Fatalf("go list -deps %s listed %d packages, want the whole link", b.pkg, len(graph))
			}
			for _, v := range violations(graph, b.pkg, b.rules) {
				t.Errorf("%s links %s", filepath.Base(b.pkg), v)
			}
			t.Logf("%s links %d packages", filepath.Base(b.pkg), len(graph))
		})
	}
}

// TestRulesCatchAViolation runs the rules on a graph that breaks each kind,
// so a rule that matches nothing cannot pass unnoticed.
func TestRulesCatchAViolation(t *testing.T) {
	graph := map[string][]string{
		"main":                          {"example.com/kube", "example.com/lab", module + "/internal/cluster", module + "/internal/runtimecfg"},
		module + "/internal/runtimecfg": {"go.podman.io/image/v5/pkg/sysregistriesv2"},
		"go.podman.io/image/v5/pkg/sysregistriesv2":        nil,
		"example.com/kube":                                 {"sigs.k8s.io/kustomize/api/krusty"},
		"sigs.k8s.io/kustomize/api/krusty":                 {"plugin"},
		"plugin":                                           nil,
		"example.com/lab":                                  {"github.com/distribution/distribution/v3/tracing", "github.com/redis/go-redis/v9"},
		"github.com/distribution/distribution/v3/tracing":  {"go.opentelemetry.io/contrib/exporters/autoexport"},
		"go.opentelemetry.io/contrib/exporters/autoexport": nil,
		"github.com/redis/go-redis/v9":                     nil,
		module + "/internal/cluster":                       nil,
	}
	full := strings.Join(violations(graph, "main", concat(linkedNowhere, throughDistributionOnly)), "\n")
	for _, want := range []string{
		"plugin and 0 more package(s) (Go's plugin package", "main -> example.com/kube -> sigs.k8s.io/kustomize/api/krusty -> plugin",
		"sigs.k8s.io/kustomize/api/krusty and 0 more package(s) (kubectl's flags", "github.com/redis/go-redis/v9 and 0 more package(s) (only distribution's",
		"go.podman.io/image/v5/pkg/sysregistriesv2 and 0 more package(s) (registries.conf's rules", "main -> " + module + "/internal/runtimecfg -> go.podman.io/image/v5/pkg/sysregistriesv2",
	} {
		if !strings.Contains(full, want) {
			t.Errorf("full rules: violations lack %q:\n%s", want, full)
		}
	}
	if strings.Contains(full, "autoexport") {
		t.Errorf("full rules: the exporter linked through distribution is allowed, got:\n%s", full)
	}
	typed := map[string][]string{
		"main":                               {module + "/internal/cluster"},
		module + "/internal/cluster":         {module + "/internal/cluster/kube", "k8s.io/client-go/kubernetes"},
		module + "/internal/cluster/kube":    {"k8s.io/client-go/rest"},
		"k8s.io/client-go/kubernetes":        {"k8s.io/client-go/kubernetes/scheme"},
		"k8s.io/client-go/kubernetes/scheme": nil,
		"k8s.io/client-go/rest":              nil,
	}
	if got := strings.Join(violations(typed, "main", fullOnly), "\n"); !strings.Contains(got, "k8s.io/client-go/kubernetes and 1 more package(s) (no typed clientset") ||
		!strings.Contains(got, "main -> "+module+"/internal/cluster -> k8s.io/client-go/kubernetes") {
		t.Errorf("full-binary rules: violations = %q, want the typed clientset and its scheme named, with the chain", got)
	}
	delete(typed, "k8s.io/client-go/kubernetes")
	delete(typed, "k8s.io/client-go/kubernetes/scheme")
	typed[module+"/internal/cluster"] = []string{module + "/internal/cluster/kube"}
	if got := violations(typed, "main", fullOnly); len(got) != 0 {
		t.Errorf("full-binary rules on the REST client alone: %q, want none", got)
	}
	node := strings.Join(violations(graph, "main", nodeOnly), "\n")
	for _, want := range []string{
		"github.com/redis/go-redis/v9 and 1 more package(s) (the node binary",
		"distribution/v3/tracing and 0 more package(s) (the embedded lab",
		module + "/internal/cluster and 0 more package(s) (no typed clientset",
	} {
		if !strings.Contains(node, want) {
			t.Errorf("node rules: violations lack %q:\n%s", want, node)
		}
	}
}

// TestBinariesNotDynamicMode builds each binary and reads its ELF dynamic
// symbol table: a normal Go binary (with cgo's libc imports) has a few dozen
// dynamic symbols; one linked in dynamic mode (Go's plugin package) exports
// every Go symbol, hundreds of thousands.
func TestBinariesNotDynamicMode(t *testing.T) {
	if testing.Short() {
		t.Skip("depcheck build skipped in -short mode (it links both binaries); hack/test.sh runs it")
	}
	dir := t.TempDir()
	for _, b := range binaries {
		t.Run(filepath.Base(b.pkg), func(t *testing.T) {
			bin := filepath.Join(dir, filepath.Base(b.pkg))
			if out, err := exec.Command(goCmd(t), "build", "-o", bin, b.pkg).CombinedOutput(); err != nil {
				t.Fatalf("go build %s: %v\n%s", b.pkg, err, out)
			}
			f, err := elf.Open(bin)
			if err != nil {
				t.Fatalf("reading %s: %v", bin, err)
			}
			defer f.Close()
			syms, err := f.DynamicSymbols()
			if err != nil && err != elf.ErrNoSymbols {
				t.Fatalf("dynamic symbols of %s: %v", bin, err)
			}
			const max = 1000
			if len(syms) > max {
				t.Errorf("%s has %d dynamic symbols, want at most %d: it is linked in dynamic mode (is Go's plugin package linked?)", filepath.Base(b.pkg), len(syms), max)
			}
			t.Logf("%s: %d dynamic symbols", filepath.Base(b.pkg), len(syms))
		})
	}
}
