#!/usr/bin/env bash
# Runs every fuzz target in the repository, one at a time, for a short time
# each, within a bounded total. The seed corpora live next to each package
# in testdata/fuzz/<FuzzName>/ and always run as plain tests too; a failing
# input the fuzzer finds is written there, so CI shows it and it can be
# committed as a regression seed.
#
#   hack/fuzz.sh                 every target, FUZZTIME (20000x) each
#   hack/fuzz.sh FuzzParse       only the targets named
#
# Environment:
#   FUZZTIME=20000x   fuzzing budget per target (go test -fuzztime). A count,
#                     not a duration: with a duration Go's fuzz coordinator
#                     can fail a target with a bare "context deadline
#                     exceeded" and no crasher when its workers are starved
#                     of CPU at the deadline (golang/go#75804, fixed in Go
#                     1.27); a count has no deadline to race. 20000 runs take
#                     1-16 s per target on an idle 2-core machine.
#   FUZZ_TARGET_TIMEOUT=300s
#                     go test -timeout per target, so an input that hangs
#                     fails the run instead of stalling it
#   FUZZ_JOBS=2       targets run side by side
#   FUZZ_BUDGET=600   seconds for the whole run: targets not started by then
#                     are listed as skipped, and the run fails, so a budget
#                     too small for the targets never reads as a pass
set -euo pipefail
cd "$(dirname "$0")/.."

FUZZTIME=${FUZZTIME:-20000x}
FUZZ_TARGET_TIMEOUT=${FUZZ_TARGET_TIMEOUT:-300s}
FUZZ_BUDGET=${FUZZ_BUDGET:-600}
start=$(date +%s)

# Every func FuzzX(f *testing.F) in a tracked test file, as "package-dir FuzzX".
targets=$(git ls-files '*_test.go' | xargs grep -H '^func Fuzz[A-Za-z0-9_]*(' |
  sed -E 's|^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*|\1 \2|' | sort -u)
if [ $# -gt 0 ]; then
  want=" $* "
  targets=$(echo "$targets" | while read -r dir name; do
    case "$want" in *" $name "*) echo "$dir $name" ;; esac
  done)
fi
if [ -z "$targets" ]; then
  echo "fuzz.sh: no fuzz target found" >&2
  exit 1
fi

ran=0 skipped=() failed=()
# FUZZ_JOBS targets at a time (default 2): most of a target's time is the
# build and link of its instrumented test binary, and the linker keeps one
# core busy, so two targets side by side take about half as long. Each
# target's output is printed when it ends.
jobs=${FUZZ_JOBS:-2}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
running=()
finish() {
  local pid=${1%%:*} t=${1#*:}
  if wait "$pid"; then
    ran=$((ran + 1))
  else
    failed+=("$t")
  fi
  cat "$logs/${t//\//_}.log"
}
while read -r dir name; do
  if [ $(( $(date +%s) - start )) -ge "$FUZZ_BUDGET" ]; then
    skipped+=("$dir.$name")
    continue
  fi
  t="$dir.$name"
  (echo "fuzz.sh: $name in ./$dir for $FUZZTIME"
   go test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -timeout "$FUZZ_TARGET_TIMEOUT" "./$dir") >"$logs/${t//\//_}.log" 2>&1 &
  running+=("$!:$t")
  if [ "${#running[@]}" -ge "$jobs" ]; then
    finish "${running[0]}"
    running=("${running[@]:1}")
  fi
done <<< "$targets"
for r in "${running[@]}"; do finish "$r"; done

echo "fuzz.sh: $ran passed, ${#failed[@]} failed, ${#skipped[@]} skipped (budget ${FUZZ_BUDGET}s) in $(( $(date +%s) - start ))s"
for t in "${failed[@]}"; do echo "fuzz.sh: FAILED $t (the failing input is under its package's testdata/fuzz/)"; done
for t in "${skipped[@]}"; do echo "fuzz.sh: SKIPPED $t: the budget FUZZ_BUDGET=${FUZZ_BUDGET}s ran out"; done
[ ${#failed[@]} -eq 0 ] && [ ${#skipped[@]} -eq 0 ]
