#!/usr/bin/env bash
# The test command of the README. It runs every tier whose prerequisites
# this machine has, and says which it skips:
#   unit + embedded lab       always (binding :53/:443 on loopback needs root; otherwise random ports)
#   network-namespace lab     root, Linux, ip and containerd (PULLPATH_NETLAB=1)
#   real kube-apiserver tier  binaries built by tools/kube/build.sh (PULLPATH_KUBE_BIN)
#   node tier (real kubelets) root, containerd, runc, containernetworking-plugins, the tools/kube binaries (PULLPATH_NODELAB=1)
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" = 0 ] && command -v ip >/dev/null && command -v containerd >/dev/null; then
  export PULLPATH_NETLAB=1
else
  echo "test.sh: network-namespace tier skipped (needs root, ip and containerd: apt-get install containerd iproute2)"
fi
if [ -x tools/kube/build.sh ] || [ -f tools/kube/build.sh ]; then
  if PULLPATH_KUBE_BIN=$(bash tools/kube/build.sh); then
    export PULLPATH_KUBE_BIN
  else
    echo "test.sh: building kube-apiserver/etcd failed; the cluster tier will skip"
  fi
fi
# containerd 2.x next to Debian's 1.6 for the runtime-configuration rows
# (internal/netlab, internal/runtimecfg): a pinned release built from the
# Go module proxy and cached like the kube binaries (tools/containerd2).
if PULLPATH_CONTAINERD2_DIR=$(sh tools/containerd2/build.sh); then
  export PULLPATH_CONTAINERD2="$PULLPATH_CONTAINERD2_DIR/containerd"
else
  echo "test.sh: building containerd 2.x failed; its runtime-configuration rows will skip"
fi

# Node tier (internal/nodelab): real kubelets, containerd and runc in network namespaces.
if [ "$(id -u)" = 0 ] && command -v containerd >/dev/null && command -v runc >/dev/null && [ -x /usr/lib/cni/bridge ] && [ -x "${PULLPATH_KUBE_BIN:-/nonexistent}/kubelet" ]; then
  export PULLPATH_NODELAB=1
  echo "test.sh: node tier on (kubelets from $PULLPATH_KUBE_BIN)"
else
  echo "test.sh: node tier skipped (needs root, containerd, runc, containernetworking-plugins and tools/kube/build.sh's kubelet: apt-get install containerd runc containernetworking-plugins)"
fi

# Tools some tests drive for real; without them those tests skip, so say so.
command -v chromium >/dev/null && echo "test.sh: HTML report browser test on (chromium)" ||
  echo "test.sh: HTML report browser test skipped (needs chromium: apt-get install chromium)"
command -v prometheus >/dev/null && command -v promtool >/dev/null && echo "test.sh: Prometheus and promtool checks on" ||
  echo "test.sh: Prometheus scrape, promtool check metrics and promtool test rules skipped (apt-get install prometheus)"
[ -n "${PULLPATH_MONITOR_SOAK:-}" ] && echo "test.sh: monitor soak on ($PULLPATH_MONITOR_SOAK; raise -timeout to match)" ||
  echo "test.sh: monitor soak (TestAgentSoak, an hour of the agent's RSS) skipped: set PULLPATH_MONITOR_SOAK=60m to run it"

go test -count=1 -timeout 20m ./...

# Fuzzing is its own CI step: hack/fuzz.sh (every Fuzz* target, FUZZTIME each).
