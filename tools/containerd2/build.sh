#!/bin/sh
# build.sh builds the containerd 2.x that the network-namespace tier runs
# next to Debian's containerd 1.6 (internal/runtimecfg's ground truth), from
# the Go module proxy at a pinned version, into a cache directory, and prints
# that directory. It builds nothing when the binary is already there. Tests
# find it through PULLPATH_CONTAINERD2:
#
#	export PULLPATH_CONTAINERD2="$(tools/containerd2/build.sh)/containerd"
#
# The cache root is $PULLPATH_KUBE_CACHE, else $XDG_CACHE_HOME/pullpath, else
# $HOME/.cache/pullpath (the kube binaries' cache). A cold build takes about
# a minute on 2 cores.
set -eu

version=v2.2.9
cache=${PULLPATH_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pullpath}
out="$cache/containerd-$version"
if [ -x "$out/containerd" ]; then
	echo "$out"
	exit 0
fi
mkdir -p "$out"
# One build at a time per cache: .ci/run starts this script early in the
# background and hack/test.sh calls it again; the second caller waits for
# the first and then finds the binary built.
if command -v flock >/dev/null; then
	exec 9>"$out.lock"
	flock 9
	if [ -x "$out/containerd" ]; then
		echo "$out"
		exit 0
	fi
fi
tmp=$(mktemp -d "$out.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "building containerd $version into $out" >&2
# No cgo: the btrfs, devmapper and zfs snapshotters need it and the lab
# uses overlayfs/native only.
GOBIN="$tmp" CGO_ENABLED=0 GOFLAGS=-trimpath go install -tags "no_btrfs no_devmapper no_zfs" \
	"github.com/containerd/containerd/v2/cmd/containerd@$version"
mv "$tmp/containerd" "$out/"
echo "$out"
