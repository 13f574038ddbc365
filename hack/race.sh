#!/usr/bin/env bash
# The race detector on the packages whose goroutines meet: the probe's blob
# workers, the monitor's scheduler and Leases, the registry's watched
# bodies, the lab's servers. hack/test.sh runs it (beside the node tier);
# `make race` runs it alone. Extra arguments go to go test (-run ...).
#
# The 25,000-layer hostile case asserts a time and memory budget that the
# race detector's 5-10x overhead breaks (56 s, 885 MiB under -race): it
# runs without -race in the main test run.
#
# The apiserver tier's tests (the monitor's scale simulation among them)
# ran in the main run; under the race detector the simulation would time
# the detector, not the agents, so its binaries' directory is unset here.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
unset PULLPATH_KUBE_BIN
go test -count=1 -race -skip '^TestHostileSuite$/^25,000-layer' "$@" \
  ./internal/probe/... ./internal/monitor/... ./internal/registry/... ./internal/lab/...
echo "race: done in $(( $(date +%s) - start ))s"
