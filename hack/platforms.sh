#!/usr/bin/env bash
# Prints the release platforms (os/arch, one a line) as the krew manifest
# deploy/krew/pullpath.yaml selects them, so that hack/release.sh and
# hack/crossbuild.sh (CI) build exactly the platforms krew installs.
set -euo pipefail
cd "$(dirname "$0")/.."
awk '$1 == "os:" { os = $2 } $1 == "arch:" { print os "/" $2 }' deploy/krew/pullpath.yaml
