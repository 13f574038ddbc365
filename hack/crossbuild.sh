#!/usr/bin/env bash
# Builds every command (./cmd/...: pullpath and pullpath-node) for every
# release platform with CGO off, so that a Linux-only import (or any
# platform-specific file) breaks CI, not the release. The platforms are the
# krew manifest's (hack/platforms.sh), the ones hack/release.sh builds.
# Prints the time per platform. The binaries go to a temporary directory
# and are removed.
#   PLATFORMS="linux/amd64 windows/arm64" hack/crossbuild.sh   # a subset
#   CROSSBUILD_NOLINK=1 hack/crossbuild.sh   # compile every package the commands link, link nothing
#                                            # (CI: the import check without the linker's minutes).
#                                            # `go build` of several main packages links them all and
#                                            # discards the result; `go list -export` compiles each
#                                            # package, the mains too, and stops before the linker.
#   CROSSBUILD_JOBS=2 hack/crossbuild.sh     # build that many platforms at once (default 1)
set -euo pipefail
cd "$(dirname "$0")/.."
platforms=${PLATFORMS:-$(bash hack/platforms.sh)}
jobs=${CROSSBUILD_JOBS:-1}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

build() {
  local p=$1 start
  start=$(date +%s)
  if [ "${CROSSBUILD_NOLINK:-}" = 1 ]; then
    CGO_ENABLED=0 GOOS=${p%/*} GOARCH=${p#*/} go list -export -deps -f '{{if .Error}}{{.ImportPath}}: {{.Error}}{{end}}' ./cmd/... >/dev/null
  else
    mkdir -p "$out/${p%/*}_${p#*/}"
    CGO_ENABLED=0 GOOS=${p%/*} GOARCH=${p#*/} go build -o "$out/${p%/*}_${p#*/}/" ./cmd/...
  fi
  echo "crossbuild: $p ok in $(( $(date +%s) - start ))s"
}

start=$(date +%s)
failed=()
running=()
for p in $platforms; do
  build "$p" >"$out/${p%/*}_${p#*/}.log" 2>&1 &
  running+=("$!:$p")
  if [ "${#running[@]}" -ge "$jobs" ]; then
    pid=${running[0]%%:*} q=${running[0]#*:}
    running=("${running[@]:1}")
    wait "$pid" || failed+=("$q")
    cat "$out/${q%/*}_${q#*/}.log"
  fi
done
for r in "${running[@]}"; do
  pid=${r%%:*} q=${r#*:}
  wait "$pid" || failed+=("$q")
  cat "$out/${q%/*}_${q#*/}.log"
done
echo "crossbuild: $(echo $platforms | wc -w) platforms in $(( $(date +%s) - start ))s (${jobs} at a time)"
if [ "${#failed[@]}" -gt 0 ]; then
  echo "crossbuild: FAILED: ${failed[*]}" >&2
  exit 1
fi
