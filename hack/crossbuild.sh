#!/usr/bin/env bash
# Builds every command for every release platform with CGO off, so that a
# Linux-only import (or any platform-specific file) breaks CI, not the
# release. Prints the time per platform. The binaries go to a temporary
# directory and are removed.
#   PLATFORMS="linux/amd64 windows/arm64" hack/crossbuild.sh   # a subset
set -euo pipefail
cd "$(dirname "$0")/.."
platforms=${PLATFORMS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for p in $platforms; do
  start=$(date +%s)
  CGO_ENABLED=0 GOOS=${p%/*} GOARCH=${p#*/} go build -o "$out/" ./cmd/...
  echo "crossbuild: $p ok in $(( $(date +%s) - start ))s"
done
