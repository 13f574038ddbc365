#!/usr/bin/env bash
# Builds a release into dist/ (or $DIST):
#   - static binaries (CGO_ENABLED=0) for linux, darwin and windows on amd64
#     and arm64, each archived as pullpath_<version>_<os>_<arch>.tar.gz with
#     kubectl-pullpath (the kubectl plugin name), pullpath, README and LICENSE;
#   - SHA256SUMS of the archives;
#   - dist/pullpath.yaml: deploy/krew/pullpath.yaml filled with the version
#     and each archive's sha256;
#   - dist/oci: the probe image as an OCI image layout (linux/amd64 and
#     linux/arm64 index), built by hack/ociimage from the slim binary,
#     named ghcr.io/pullpath/pullpath:<version> unless IMAGE says otherwise.
#     Push it with: crane push dist/oci "$IMAGE" (crane index/append as needed).
# Usage: hack/release.sh [VERSION]   (default: git describe, else v0.0.0-dev)
#   PLATFORMS="linux/amd64" IMAGE_ARCHES=amd64 hack/release.sh   # a quick subset
set -euo pipefail
cd "$(dirname "$0")/.."

version=${1:-$(git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)}
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
dist=${DIST:-dist}
image=${IMAGE:-ghcr.io/pullpath/pullpath:$version}
platforms=${PLATFORMS:-$(bash hack/platforms.sh)}   # the krew manifest's platforms
image_arches=${IMAGE_ARCHES:-"amd64 arm64"}
pkg=github.com/pullpath/pullpath/internal/cli
ldflags="-s -w -X $pkg.Version=$version -X $pkg.Commit=$commit -X $pkg.BuildDate=$date"

rm -rf "$dist"
mkdir -p "$dist"
manifest="$dist/pullpath.yaml"
sed "s/VERSION/$version/g" deploy/krew/pullpath.yaml > "$manifest"

for p in $platforms; do
  os=${p%/*} arch=${p#*/}
  ext=""; [ "$os" = windows ] && ext=.exe
  stage="$dist/stage/${os}_${arch}"
  mkdir -p "$stage"
  echo "release: building $os/$arch"
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -ldflags "$ldflags" -o "$stage/pullpath$ext" ./cmd/pullpath
  ln "$stage/pullpath$ext" "$stage/kubectl-pullpath$ext"
  cp README.md "$stage/"
  [ -f LICENSE ] && cp LICENSE "$stage/"
  archive="pullpath_${version}_${os}_${arch}.tar.gz"
  # krew extracts only regular files and directories (a hard-link entry
  # fails its install): store both names as regular files.
  tar --hard-dereference -C "$stage" -czf "$dist/$archive" .
  if tar -tvzf "$dist/$archive" | grep -qv '^[-d]'; then
    echo "release: $archive holds an entry krew cannot extract (not a file or directory)" >&2
    exit 1
  fi
  sum=$(sha256sum "$dist/$archive" | cut -d' ' -f1)
  sed -i "s/SHA256_${os}_${arch}\$/$sum/" "$manifest"
done
(cd "$dist" && sha256sum ./*.tar.gz | sed 's# \./# #' > SHA256SUMS)
if grep -q 'SHA256_' "$manifest"; then
  echo "release: $manifest still has placeholders for platforms not built ($platforms)" >&2
fi

# The probe image: the slim node binary when it exists, else the nolab
# build of pullpath (no embedded lab), static, for each Linux architecture.
node_pkg=./cmd/pullpath-node
tags=""
if [ ! -d "$node_pkg" ]; then node_pkg=./cmd/pullpath; tags="-tags nolab"; fi
oci_args=()
for arch in $image_arches; do
  bin="$dist/image/linux_$arch/pullpath"
  mkdir -p "$(dirname "$bin")"
  # shellcheck disable=SC2086
  CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath $tags -ldflags "$ldflags" -o "$bin" "$node_pkg"
  oci_args+=(--binary "linux/$arch=$bin")
done
go run ./hack/ociimage --out "$dist/oci" --name "$image" "${oci_args[@]}"
rm -rf "$dist/stage" "$dist/image"
echo "release: $version in $dist (archives, SHA256SUMS, pullpath.yaml, oci/ as $image)"
