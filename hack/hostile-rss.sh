#!/usr/bin/env bash
# Runs the real pullpath binary against hostile cases of internal/probe's
# suite and prints each case's verdict, wall time and peak RSS
# (/usr/bin/time -v), so the numbers are the probe's own, not the test
# process's. Everything stays on loopback (127.0.0.1-4).
#   hack/hostile-rss.sh ["case name" ...]   (default: the body-size cases)
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /usr/bin/time ] || { echo "hostile-rss: needs /usr/bin/time (apt-get install time)"; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/pullpath" ./cmd/pullpath
go test -c -o "$tmp/probe.test" ./internal/probe
if [ $# -eq 0 ]; then
  set -- "endless manifest" "1 GB manifest" "gzip bomb manifest" "huge token JSON" "25,000-layer manifest" "foreign realm after the registry's token"
fi
printf '%-45s %-22s %10s %12s\n' case verdict seconds "peak RSS"
for name in "$@"; do
  out="$tmp/args"
  rm -f "$out"
  PULLPATH_HOSTILE_SERVE="$name" PULLPATH_HOSTILE_OUT="$out" "$tmp/probe.test" -test.run '^TestHostileServe$' >"$tmp/serve.log" 2>&1 &
  server=$!
  for _ in $(seq 300); do [ -f "$out" ] && break; sleep 0.1; done
  [ -f "$out" ] || { echo "hostile-rss: case $name did not start"; cat "$tmp/serve.log"; kill "$server"; exit 1; }
  mapfile -t args <"$out"
  set +e
  echo "pp-canary-Zq7v3Kx9-password" | /usr/bin/time -v "$tmp/pullpath" probe "${args[@]}" -o json >"$tmp/report.json" 2>"$tmp/time.txt"
  set -e
  rm -f "$out"
  wait "$server" || true
  # The verdict is the report's first object: its "ok" and "cause" come first.
  verdict=$(sed -n '/"verdict": {/,/}/p' "$tmp/report.json")
  cause=$(echo "$verdict" | grep -m1 -o '"cause": *"[^"]*"' | sed 's/.*: *"//; s/"$//' || true)
  if echo "$verdict" | grep -q '"ok": true'; then cause="ok${cause:+ ($cause)}"; fi
  secs=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$tmp/time.txt")
  kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tmp/time.txt")
  printf '%-45s %-22s %10s %9d MiB\n' "$name" "$cause" "$secs" $((kb / 1024))
done
