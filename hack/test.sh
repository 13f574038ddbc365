#!/usr/bin/env bash
# The test command of the README. It runs every tier whose prerequisites
# this machine has, and says which it skips:
#   unit + embedded lab       always (binding :53/:443 on loopback needs root; otherwise random ports)
#   network-namespace lab     root, Linux, ip and containerd (PULLPATH_NETLAB=1)
#   real kube-apiserver tier  binaries built by tools/kube/build.sh (PULLPATH_KUBE_BIN)
#   node tier (real kubelets) root, ip, nsenter, unshare, containerd, runc, containernetworking-plugins,
#                             the tools/kube binaries (PULLPATH_NODELAB=1); its monitor rows /usr/bin/prometheus
#   prometheus                /usr/bin/prometheus and /usr/bin/promtool (PULLPATH_PROMETHEUS=1)
# internal/tiers lists them; a tier requested by its variable fails when one is missing.
# Then the race tier (hack/race.sh) and fuzzing (hack/fuzz.sh), beside the node tier.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${PULLPATH_KUBE_BIN:-}" ] && [ -f tools/kube/build.sh ]; then
  if PULLPATH_KUBE_BIN=$(bash tools/kube/build.sh); then
    export PULLPATH_KUBE_BIN
  else
    echo "test.sh: building kube-apiserver/etcd failed; the apiserver and node tiers will skip"
  fi
fi
# containerd 2.x next to Debian's 1.6 for the runtime-configuration rows
# (test/netlab, internal/runtimecfg): a pinned release built from the
# Go module proxy and cached like the kube binaries (tools/containerd2).
if PULLPATH_CONTAINERD2_DIR=$(sh tools/containerd2/build.sh); then
  export PULLPATH_CONTAINERD2="$PULLPATH_CONTAINERD2_DIR/containerd"
else
  echo "test.sh: building containerd 2.x failed; its runtime-configuration rows will skip"
fi

# Which tiers run: internal/tiers holds each tier's prerequisites, and the
# tests check the same ones (tiers.Require). A tier whose variable is set
# (CI sets them) and whose prerequisite is missing FAILS its tests; an unset
# one is turned on here when this machine has what it needs.
tiers=$(mktemp -d)
trap 'rm -rf "$tiers"' EXIT
go build -o "$tiers/tiers" ./internal/tiers/cmd/tiers
eval "$("$tiers/tiers" env)"

# Tools some tests drive for real; without them those tests skip, so say so.
command -v chromium >/dev/null && echo "test.sh: HTML report browser test on (chromium)" ||
  echo "test.sh: HTML report browser test skipped (needs chromium: apt-get install chromium)"
[ -n "${PULLPATH_MONITOR_SOAK:-}" ] && echo "test.sh: monitor soak on ($PULLPATH_MONITOR_SOAK; raise -timeout to match)" ||
  echo "test.sh: monitor soak (TestAgentSoak, an hour of the agent's RSS) skipped: set PULLPATH_MONITOR_SOAK=60m to run it"

# -json and the filter: every tier test's "tier NAME:" line (ran, or why
# it skipped), the package results and the whole output of what failed.
#
# The node tier (real kubelets) is the longest package, and it spends its
# minutes waiting for kubelets, pods and Prometheus rather than on the CPU,
# so it runs beside the other packages instead of after them; its lines are
# printed when it ends. Its tests never share a namespace or a port with the
# other tiers' (each world has its own names and 198.18.0.0/15 subnets).
nodepkgs=$(go list ./... | grep '/nodelab$' || true)
otherpkgs=$(go list ./... | grep -v '/nodelab$')
nodepid=
if [ -n "$nodepkgs" ]; then
  (go test -count=1 -timeout 40m -json $nodepkgs | "$tiers/tiers" filter >"$tiers/node.out" 2>&1
   echo $? >"$tiers/node.rc") &
  nodepid=$!
fi
rc=0
go test -count=1 -timeout 20m -json $otherpkgs | "$tiers/tiers" filter || rc=$?

# While the node tier still waits on its kubelets, the cores are free for
# the race detector (hack/race.sh) and fuzzing (hack/fuzz.sh: every Fuzz*
# target, FUZZTIME each, within FUZZ_BUDGET).
echo "test.sh: the race tier (hack/race.sh)"
bash hack/race.sh || rc=1
echo "test.sh: fuzzing (hack/fuzz.sh)"
bash hack/fuzz.sh || rc=1

if [ -n "$nodepid" ]; then
  wait "$nodepid" || true
  echo "test.sh: the node tier, which ran beside the packages above:"
  cat "$tiers/node.out"
  [ "$(cat "$tiers/node.rc" 2>/dev/null)" = 0 ] || rc=1
fi
exit "$rc"

