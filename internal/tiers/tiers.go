// Package tiers is the one place that says what each test tier needs and
// whether it was asked for. The tier tests call Require; hack/test.sh runs
// cmd/tiers, which asks the same functions, to decide which tiers to turn
// on and to filter `go test -json` down to the tier lines and the failures.
//
// A tier is requested by its environment variable. Requested, a missing
// prerequisite fails the test (CI sets the variables, so a machine that
// lost containerd or Prometheus fails instead of passing with the tier
// skipped). Not requested, the test skips, saying why. Either way it prints
// one line beginning "tier NAME:" that hack/test.sh shows.
package tiers

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Prereq is one thing a tier needs from the machine.
type Prereq struct {
	Name  string
	Check func() error // nil when the machine has it
}

// Tier is one test tier.
type Tier struct {
	Name string // in the tier lines: netlab, nodelab, apiserver, prometheus
	// Env requests the tier when set to 1 (for apiserver: to the
	// binaries' directory).
	Env string
	// OptIn tiers run only when requested (they make network namespaces,
	// which run under the shared lock); the others run whenever their
	// prerequisites are there.
	OptIn   bool
	Prereqs []Prereq
	// Install is how to get the prerequisites, for the messages.
	Install string
}

// Paths and variables the tiers share with the code they test.
const (
	PrometheusBin = "/usr/bin/prometheus" // Debian's prometheus package
	PromtoolBin   = "/usr/bin/promtool"
	CNIBinDir     = "/usr/lib/cni" // Debian's containernetworking-plugins
	EnvKubeBin    = "PULLPATH_KUBE_BIN"
)

// KubeBinaries are the tools/kube binaries the node tier runs; the
// apiserver tier needs the first two.
var KubeBinaries = []string{"etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager", "kubelet"}

func linux() Prereq {
	return Prereq{"Linux", func() error {
		if runtime.GOOS != "linux" {
			return errors.New("needs Linux")
		}
		return nil
	}}
}

func root() Prereq {
	return Prereq{"root", func() error {
		if os.Geteuid() != 0 {
			return errors.New("needs root")
		}
		return nil
	}}
}

// OnPath is a command the tier runs, looked up on PATH.
func OnPath(bin string) Prereq {
	return Prereq{bin, func() error {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Errorf("needs %s on PATH", bin)
		}
		return nil
	}}
}

// File is a file the tier runs at a fixed path.
func File(path string) Prereq {
	return Prereq{path, func() error {
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("needs %s", path)
		}
		return nil
	}}
}

func kubeBin(names ...string) Prereq {
	return Prereq{EnvKubeBin, func() error {
		dir := os.Getenv(EnvKubeBin)
		if dir == "" {
			return fmt.Errorf("%s is not set: export %s=$(bash tools/kube/build.sh)", EnvKubeBin, EnvKubeBin)
		}
		for _, b := range names {
			if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
				return fmt.Errorf("%s=%s has no %s: run tools/kube/build.sh", EnvKubeBin, dir, b)
			}
		}
		return nil
	}}
}

// The tiers.
var (
	// Netlab is the network-namespace lab (test/netlab, internal/cri).
	Netlab = Tier{Name: "netlab", Env: "PULLPATH_NETLAB", OptIn: true,
		Prereqs: []Prereq{linux(), root(), OnPath("ip"), OnPath("containerd")},
		Install: "apt-get install containerd iproute2"}
	// Nodelab is the node tier: real kubelets, containerd and runc in
	// network namespaces (test/nodelab).
	Nodelab = Tier{Name: "nodelab", Env: "PULLPATH_NODELAB", OptIn: true,
		Prereqs: []Prereq{linux(), root(), OnPath("ip"), OnPath("nsenter"), OnPath("unshare"), OnPath("containerd"), OnPath("runc"),
			File(filepath.Join(CNIBinDir, "bridge")), File(filepath.Join(CNIBinDir, "host-local")), File(filepath.Join(CNIBinDir, "loopback")),
			kubeBin(KubeBinaries...)},
		Install: "apt-get install containerd runc containernetworking-plugins iproute2 util-linux; export PULLPATH_KUBE_BIN=$(bash tools/kube/build.sh)"}
	// Prometheus is a real Prometheus and promtool (internal/monitor; the
	// node tier's monitor rows need it as well).
	Prometheus = Tier{Name: "prometheus", Env: "PULLPATH_PROMETHEUS",
		Prereqs: []Prereq{File(PrometheusBin), File(PromtoolBin)},
		Install: "apt-get install prometheus"}
	// APIServer is the real kube-apiserver tier (internal/cluster,
	// internal/monitor); PULLPATH_KUBE_BIN requests it.
	APIServer = Tier{Name: "apiserver", Env: EnvKubeBin, OptIn: true,
		Prereqs: []Prereq{kubeBin("etcd", "kube-apiserver")},
		Install: "export PULLPATH_KUBE_BIN=$(bash tools/kube/build.sh)"}
)

// All is every tier, in hack/test.sh's order.
var All = []Tier{Netlab, APIServer, Nodelab, Prometheus}

var (
	requiredMu sync.Mutex
	required   = map[string]bool{} // test name + tier: Require ran
)

// how says how to request the tier.
func (t Tier) how() string {
	if t.Env == EnvKubeBin {
		return "export " + EnvKubeBin + "=$(bash tools/kube/build.sh) runs it"
	}
	return t.Env + "=1 runs it"
}

// Requested reports whether the tier's variable asks for it.
func (t Tier) Requested() bool {
	v := os.Getenv(t.Env)
	if t.Env == EnvKubeBin {
		return v != ""
	}
	return v == "1"
}

// Missing returns what the machine lacks of the tier's prerequisites and of
// extra, nil when nothing.
func (t Tier) Missing(extra ...Prereq) error {
	var errs []string
	for _, p := range append(append([]Prereq{}, t.Prereqs...), extra...) {
		if err := p.Check(); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errors.New(strings.Join(errs, "; "))
}

// Require is called first by every test of the tier. It skips the test
// when the tier is not requested (an opt-in tier) or, not requested, its
// prerequisites are missing; it fails it when the tier is requested and a
// prerequisite (the tier's or extra) is missing. It prints the test's tier
// line either way, and again when the test ends, with its outcome.
func Require(tb testing.TB, t Tier, extra ...Prereq) {
	tb.Helper()
	key := tb.Name() + "\x00" + t.Name
	requiredMu.Lock()
	again := required[key]
	required[key] = true
	requiredMu.Unlock()
	if again {
		// A helper requiring the tier again (startWorld after the test):
		// only the extra prerequisites are new.
		t.Prereqs = nil
	}
	missing := t.Missing(extra...)
	switch {
	case t.OptIn && !t.Requested():
		tb.Skipf("tier %s: %s skipped: %s is not set (%s)", t.Name, tb.Name(), t.Env, t.how())
	case missing != nil && !t.Requested():
		tb.Skipf("tier %s: %s skipped: %v (%s)", t.Name, tb.Name(), missing, t.Install)
	case missing != nil:
		tb.Fatalf("tier %s: %s FAILED: the tier is requested (%s=%s) but %v (%s)", t.Name, tb.Name(), t.Env, os.Getenv(t.Env), missing, t.Install)
	}
	if again {
		return
	}
	tb.Logf("tier %s: %s runs", t.Name, tb.Name())
	tb.Cleanup(func() {
		requiredMu.Lock()
		delete(required, key)
		requiredMu.Unlock()
		switch {
		case tb.Skipped():
			tb.Logf("tier %s: %s skipped during the run", t.Name, tb.Name())
		case tb.Failed():
			tb.Logf("tier %s: %s ran and failed", t.Name, tb.Name())
		default:
			tb.Logf("tier %s: %s ran and passed", t.Name, tb.Name())
		}
	})
}
