#!/usr/bin/env bash
# Builds every command for every release platform with CGO off, so that a
# Linux-only import (or any platform-specific file) breaks CI, not the
# release. Prints the time per platform. The binaries go to a temporary
# directory and are removed.
#   PLATFORMS="linux/amd64 windows/arm64" hack/crossbuild.sh   # a subset
#   CROSSBUILD_NOLINK=1 hack/crossbuild.sh   # compile what the commands link, link nothing (CI: the
#                                            # import check without the linker's minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
platforms=${PLATFORMS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for p in $platforms; do
  start=$(date +%s)
  if [ "${CROSSBUILD_NOLINK:-}" = 1 ]; then
    CGO_ENABLED=0 GOOS=${p%/*} GOARCH=${p#*/} go build ./cmd/...
  else
    CGO_ENABLED=0 GOOS=${p%/*} GOARCH=${p#*/} go build -o "$out/" ./cmd/...
  fi
  echo "crossbuild: $p ok in $(( $(date +%s) - start ))s"
done
