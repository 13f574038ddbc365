#!/usr/bin/env bash
# startfloor.sh: what the libraries pullpath-node links cost at start, before
# any of its own code runs. It builds import-only binaries (a main that
# prints one line and blank-imports a set of packages, at the versions in
# go.mod, static like the release) and runs them with bench/starttime
# against hello world and pullpath-node itself, interleaved.
#
#   bench/startfloor.sh            # 100 runs of each
#   RUNS=300 bench/startfloor.sh
#
# Each row adds one library to "base" (net/http, crypto/tls, cobra,
# miekg/dns: what every probe needs), so its ratio minus base's is what that
# library's package inits and page faults cost. "required" is base plus
# containerd's hosts.toml parser and client_golang, the two libraries the
# project's dependency standard names for the node binary's work: it is
# the floor of any pullpath-node that links them. "+sysregistriesv2" is
# containers/image's registries.conf package, which the node binary no
# longer links (internal/runtimecfg/regconf.go writes its rules): what it
# would cost.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-100}
work=$(mktemp -d "$PWD/.startfloor.XXXXXX") # inside the module: same go.mod
trap 'rm -rf "$work"' EXIT

base="net/http crypto/tls github.com/spf13/cobra github.com/miekg/dns"
hosts="github.com/containerd/containerd/v2/core/remotes/docker/config"
prom="github.com/prometheus/client_golang/prometheus github.com/prometheus/client_golang/prometheus/promhttp github.com/prometheus/client_golang/prometheus/collectors"
declare -A sets=(
  [hello]=""
  [base]="$base"
  [+hoststoml]="$base $hosts"
  [+clientgolang]="$base $prom"
  [+reference]="$base github.com/distribution/reference"
  [+sysregistriesv2]="$base go.podman.io/image/v5/pkg/sysregistriesv2"
  [required]="$base $hosts $prom"
)
order=(hello base +hoststoml +clientgolang +reference +sysregistriesv2 required)

args=()
for name in "${order[@]}"; do
  d="$work/${name#+}"
  mkdir -p "$d"
  {
    echo "package main"
    echo 'import ("fmt"'
    for p in ${sets[$name]}; do echo "_ \"$p\""; done
    echo ')'
    echo 'func main() { fmt.Println("v") }'
  } >"$d/main.go"
  CGO_ENABLED=0 go build -trimpath -o "$d/bin" "./${d#"$PWD"/}"
  args+=("$name=$d/bin")
done
CGO_ENABLED=0 go build -trimpath -o "$work/pullpath-node" ./cmd/pullpath-node
mkdir -p "$work/root/etc"
echo "nameserver 127.0.0.1" >"$work/root/etc/resolv.conf"
CGO_ENABLED=0 go build -o "$work/starttime" ./bench/starttime
"$work/starttime" -n "$RUNS" -inittrace "${args[@]}" \
  "node-version=$work/pullpath-node version" \
  "node-fault=$work/pullpath-node probe registry.lab.test/team/app:1 --root $work/root --dns-port 9"
