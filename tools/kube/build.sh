#!/bin/sh
# build.sh builds the test-only kube-apiserver and etcd binaries, and the
# node tier's kubelet, kube-scheduler and kube-controller-manager, from this
# module (tools/kube) into a cache directory keyed on the hash of go.mod and
# go.sum, and prints that directory. It builds only the binaries missing
# there. Tests find them through PULLPATH_KUBE_BIN:
#
#	export PULLPATH_KUBE_BIN="$(tools/kube/build.sh)"
#	go test ./internal/cluster/... ./internal/cli/...
#
# The cache root is $PULLPATH_KUBE_CACHE, else $XDG_CACHE_HOME/pullpath, else
# $HOME/.cache/pullpath. A cold build takes several minutes.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cache=${PULLPATH_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pullpath}
hash=$(cat "$here/go.mod" "$here/go.sum" | sha256sum | cut -c1-16)
out="$cache/kube-$hash"

bins="etcd kube-apiserver kubelet kube-scheduler kube-controller-manager"
missing=
for b in $bins; do
	[ -x "$out/$b" ] || missing="$missing $b"
done
if [ -z "$missing" ]; then
	echo "$out"
	exit 0
fi

mkdir -p "$out"
# One build at a time per cache: .ci/run starts this script early in the
# background and hack/test.sh calls it again; the second caller waits for
# the first, then builds only what is still missing.
if command -v flock >/dev/null; then
	exec 9>"$out.lock"
	flock 9
	missing=
	for b in $bins; do
		[ -x "$out/$b" ] || missing="$missing $b"
	done
	if [ -z "$missing" ]; then
		echo "$out"
		exit 0
	fi
fi
tmp=$(mktemp -d "$out.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$here"
# -trimpath keeps the binaries independent of this checkout's location.
for b in $missing; do
	echo "building $b into $out" >&2
	CGO_ENABLED=0 go build -trimpath -o "$tmp/$b" "./cmd/$b"
	mv "$tmp/$b" "$out/"
done
echo "$out"
