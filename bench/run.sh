#!/usr/bin/env bash
# bench/run.sh — pullpath against the peers, in one run, one table.
#
#   bench/run.sh            1 GiB in 8 layers, 5 alternating runs per tool
#   bench/run.sh --quick    128 MiB in 8 layers (or BENCH_QUICK=1)
#
# Environment:
#   BENCH_LAYERS=8 BENCH_LAYER_SIZE=134217728   image shape (incompressible data)
#   BENCH_RUNS=5        runs per tool (medians; at least 3)
#   BENCH_JOBS=4        pullpath probe --jobs
#   BENCH_KEEP=1        keep the work directory
#   BENCH_TOOLS="pullpath pullpath-node crane skopeo ctr"    which P1 tools to run
#   BENCH_PARTS="p0 p1 p2 p3 p4 p5 p6"          which parts to run
#   BENCH_STATE=read    page-cache state of every tool's binary in P1 (linked, cold, read)
#
# What it does (every byte stays on loopback):
#   - builds pullpath, bench/labd (the embedded lab on 127.0.66.x:443 with
#     DNS on 127.0.67.x:53) and bench/shaceiling;
#   - starts the lab and pushes registry.lab.test/team/app:1.0;
#   - P1: pullpath probe --blobs full vs crane pull vs skopeo copy vs ctr
#     content fetch, alternating, each in a private mount namespace whose
#     /etc/hosts and /etc/resolv.conf are the lab's healthy node root (the
#     machine's resolver is never touched), each trusting the lab CA its own
#     way; wall time and peak RSS from /usr/bin/time; plus the single-core
#     SHA-256 ceiling;
#   - P2: every failing lab scenario through pullpath probe and through ctr
#     content fetch (a containerd started here, in a temp dir), time to verdict
#     and time to error;
#   - P3/P4: go test -bench of internal/cluster and internal/explain when
#     they exist;
#   - P0: each binary's size, what it links (packages, modules, dynamic symbols);
#   - P5: pullpath's and pullpath-node's peak RSS (RssAnon and RssFile apart)
#     in each page-cache state of their binary:
#       linked  as `go build` just wrote it (the Go linker writes its output
#               through a shared mapping: 4 KiB page-cache folios);
#       cold    its pages dropped (fsync + fadvise DONTNEED on that file only,
#               never drop_caches), so exec's page faults read it back;
#       read    cold, then read once with read(2) (what cat, sha256sum, dd,
#               go version -m or an image unpack do): the kernel caches it in
#               large folios, and a process's RssFile counts every page of a
#               mapped folio it touches, so the same file costs more RSS;
#     P1 runs every tool's binary in BENCH_STATE (default read, the worst,
#     which is the headline);
#   - P6: start time of `version` and of a fast-fault probe against a
#     hello-world Go binary, and GODEBUG=inittrace=1 (inits, their ms);
#   - prints one table with ratios against the targets (the last column:
#     e.g. 1.5× faster than each other tool, the verdict's time budget).
#
# Memory comes from bench/rsswatch: peak RSS is the kernel's ru_maxrss (as
# /usr/bin/time), RssAnon/RssFile are /proc/PID/status at the sampled peak.
#
# Needs root (mount namespaces, ports 443/53), jq, and the
# peers: crane (go install github.com/google/go-containerregistry/cmd/crane@v0.22.1),
# skopeo and containerd (apt-get install skopeo containerd). A missing peer
# is reported, not fatal.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)

QUICK=${BENCH_QUICK:-0}
for a in "$@"; do
  case "$a" in
    --quick) QUICK=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "run.sh: unknown argument $a" >&2; exit 2 ;;
  esac
done
LAYERS=${BENCH_LAYERS:-8}
if [ "$QUICK" = 1 ]; then LAYER_SIZE=${BENCH_LAYER_SIZE:-$((16 << 20))}; else LAYER_SIZE=${BENCH_LAYER_SIZE:-$((128 << 20))}; fi
RUNS=${BENCH_RUNS:-5}
[ "$RUNS" -ge 3 ] || { echo "run.sh: BENCH_RUNS must be at least 3 (medians)" >&2; exit 2; }
JOBS=${BENCH_JOBS:-4}
TOOLS=${BENCH_TOOLS:-"pullpath pullpath-node crane skopeo ctr"}
PARTS=${BENCH_PARTS:-"p0 p1 p2 p3 p4 p5 p6"}
STATE=${BENCH_STATE:-read}
case "$STATE" in linked|cold|read) ;; *) echo "run.sh: BENCH_STATE must be linked, cold or read" >&2; exit 2 ;; esac

[ "$(id -u)" = 0 ] || { echo "run.sh: needs root (mount namespaces, ports 443 and 53 on 127.0.66/67.x)" >&2; exit 1; }
for t in jq unshare go; do command -v "$t" >/dev/null || { echo "run.sh: $t is missing" >&2; exit 1; }; done

W=$(mktemp -d /tmp/pullpath-bench.XXXXXX)
BIN=$W/bin
mkdir -p "$BIN" "$W/out" "$W/res"
LABPID=""
CTRDPID=""
cleanup() {
  [ -n "$CTRDPID" ] && kill "$CTRDPID" 2>/dev/null && wait "$CTRDPID" 2>/dev/null || true
  [ -n "$LABPID" ] && kill "$LABPID" 2>/dev/null && wait "$LABPID" 2>/dev/null || true
  if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "run.sh: kept $W" >&2; else rm -rf "$W"; fi
}
trap cleanup EXIT
log() { echo "bench: $*" >&2; }

# ---------------------------------------------------------------- tools
log "building pullpath, pullpath-node, labd, shaceiling, rsswatch, hello"
# Static and -trimpath, as hack/release.sh builds what ships.
CGO_ENABLED=0 go build -trimpath -o "$BIN/pullpath" ./cmd/pullpath
CGO_ENABLED=0 go build -trimpath -o "$BIN/pullpath-node" ./cmd/pullpath-node
go build -o "$BIN/starttime" ./bench/starttime
go build -o "$BIN/labd" ./bench/labd
go build -o "$BIN/shaceiling" ./bench/shaceiling
go build -o "$BIN/rsswatch" ./bench/rsswatch
mkdir -p "$W/hello"
printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello") }\n' >"$W/hello/main.go"
(cd "$W/hello" && GOFLAGS= go build -o "$BIN/hello" main.go)
RSSW=$BIN/rsswatch

CRANE=$(command -v crane || true)
[ -z "$CRANE" ] && [ -x "$(go env GOPATH)/bin/crane" ] && CRANE=$(go env GOPATH)/bin/crane
CRANE_VERSION=""
WANT_GGCR=$(go list -m -f '{{.Version}}' github.com/google/go-containerregistry)
if [ -n "$CRANE" ]; then
  CRANE_VERSION=$(go version -m "$CRANE" | awk '$1=="mod" && $2=="github.com/google/go-containerregistry" {print $3}')
  if [ "$CRANE_VERSION" != "$WANT_GGCR" ]; then
    log "crane is $CRANE_VERSION, the project uses $WANT_GGCR: go install github.com/google/go-containerregistry/cmd/crane@$WANT_GGCR"
    CRANE=""
  fi
fi
SKOPEO=$(command -v skopeo || true)
CTR=$(command -v ctr || true)
CONTAINERD=$(command -v containerd || true)
have() {
  case "$1" in
    pullpath|pullpath-node) return 0 ;;
    crane) [ -n "$CRANE" ] ;;
    skopeo) [ -n "$SKOPEO" ] ;;
    ctr) [ -n "$CTR" ] && [ -n "$CONTAINERD" ] ;;
  esac
}
version_of() {
  case "$1" in
    pullpath|pullpath-node) echo "$(git -C "$REPO" rev-parse --short HEAD)$(git -C "$REPO" diff --quiet || echo +dirty)" ;;
    crane) echo "$CRANE_VERSION" ;;
    skopeo) "$SKOPEO" --version | awk '{print $3}' ;;
    ctr) "$CTR" --version | awk '{print $3}' ;;
  esac
}

# ---------------------------------------------------------------- lab
log "starting the lab: $LAYERS layers of $LAYER_SIZE bytes"
"$BIN/labd" --dir "$W/lab" --out "$W/lab.json" --layers "$LAYERS" --layer-size "$LAYER_SIZE" >"$W/labd.log" 2>&1 &
LABPID=$!
for _ in $(seq 1200); do
  [ -f "$W/lab.json" ] && break
  kill -0 "$LABPID" 2>/dev/null || { cat "$W/labd.log" >&2; exit 1; }
  sleep 0.5
done
[ -f "$W/lab.json" ] || { echo "run.sh: the lab did not start" >&2; exit 1; }
LAB=$W/lab.json
IMAGE=$(jq -r .image "$LAB")
CA=$(jq -r .caFile "$LAB")
CERTDIR=$(jq -r .certDir "$LAB")
HEALTHY=$(jq -r '.scenarios[] | select(.name=="healthy") | .root' "$LAB")
log "lab ready in $(jq -r '.pushSeconds | floor' "$LAB") s: $IMAGE"

# innode ROOT CMD...: run CMD in a private mount namespace whose /etc/hosts
# and /etc/resolv.conf are ROOT's (the node's view), never the machine's.
innode() {
  local root=$1; shift
  unshare -m sh -c 'mount --bind "$0/etc/hosts" /etc/hosts && mount --bind "$0/etc/resolv.conf" /etc/resolv.conf && exec "$@"' "$root" "$@"
}

# A containerd of our own: temp root, state and socket.
start_containerd() {
  local d=$1
  mkdir -p "$d"
  cat >"$d/config.toml" <<EOF
version = 2
root = "$d/root"
state = "$d/state"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "$d/containerd.sock"
[ttrpc]
  address = "$d/containerd-ttrpc.sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "$d/opt"
EOF
  "$CONTAINERD" --config "$d/config.toml" --log-level error >"$d/log" 2>&1 &
  CTRDPID=$!
  for _ in $(seq 100); do
    [ -S "$d/containerd.sock" ] && "$CTR" --address "$d/containerd.sock" version >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "run.sh: containerd did not start:" >&2; cat "$d/log" >&2; return 1
}
stop_containerd() {
  [ -n "$CTRDPID" ] || return 0
  kill "$CTRDPID" 2>/dev/null || true
  wait "$CTRDPID" 2>/dev/null || true
  CTRDPID=""
}

# timed_us FILE CMD...: run CMD, write its wall time in microseconds to FILE,
# keep its exit status. Used inside innode so that unshare and the bind
# mounts are not counted.
TIMED='s=$(date +%s%N); f=$1; shift; "$@"; rc=$?; e=$(date +%s%N); echo $(((e - s) / 1000)) >"$f"; exit $rc'

# pidcpu PID: user+system CPU time of PID so far, in clock ticks (1/100 s).
pidcpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
labcpu() { pidcpu "$LABPID"; }

# binof TOOL: the tool's binary file.
binof() {
  case "$1" in
    pullpath|pullpath-node) echo "$BIN/$1" ;;
    crane) echo "$CRANE" ;;
    skopeo) echo "$SKOPEO" ;;
    ctr) echo "$CTR" ;;
  esac
}
# pagestate STATE FILE...: put FILE's page-cache pages in STATE (see the top).
# linked is only true of a file the linker just wrote: relink for it.
pagestate() {
  local st=$1; shift
  case "$st" in
    linked) ;;
    cold) "$RSSW" -evict "$@" >/dev/null ;;
    read) "$RSSW" -evict "$@" >/dev/null; cat "$@" >/dev/null ;;
  esac
}
# rsstime JSON TIMEFILE: "wall peakKiB user sys anonKiB fileKiB" from rsswatch's JSON.
rsstime() { jq -r '"\(.wallS * 1000 | round / 1000) \(.peakKiB) \(.userS) \(.sysS) \(.atSampledPeak.anonKiB) \(.atSampledPeak.fileKiB)"' "$1" >"$2"; }

median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) {print ""} else if (NR%2) {print a[(NR+1)/2]} else {print (a[NR/2]+a[NR/2+1])/2}}'; }

# ---------------------------------------------------------------- P1
BYTES=$(jq -r .bytes "$LAB")
SHA=""
if [[ " $PARTS " == *" p1 "* ]]; then
  # One untimed warm-up pull (page cache of the lab's blobs, TLS session setup paths).
  "$BIN/pullpath" probe "$IMAGE" --root "$HEALTHY" --blobs full -o json >/dev/null 2>&1 || true
  for run in $(seq "$RUNS"); do
    # The SHA-256 ceiling once per round, under the same load as the pulls.
    "$BIN/shaceiling" --bytes $((256 << 20)) --runs 1 >"$W/res/sha-$run"
    # Alternate the order each run so no tool always goes first.
    order=$TOOLS
    if [ $((run % 2)) = 0 ]; then order=$(echo "$TOOLS" | tr ' ' '\n' | tac | tr '\n' ' '); fi
    for tool in $order; do
      have "$tool" || continue
      out=$W/out/$tool
      rm -rf "$out"; mkdir -p "$out"; sync
      tf=$W/res/p1-$tool-$run.time
      rj=$W/res/p1-$tool-$run.json
      pagestate "$STATE" "$(binof "$tool")"
      [ "$tool" = ctr ] && pagestate "$STATE" "$CONTAINERD"
      lab0=$(labcpu)
      case "$tool" in
        pullpath|pullpath-node)
          "$RSSW" -o "$rj" -- \
            "$BIN/$tool" probe "$IMAGE" --root "$HEALTHY" --blobs full --jobs "$JOBS" -o json >"$out/report.json" 2>"$out/err" || true
          ok=$(jq -r '.verdict.ok' "$out/report.json" 2>/dev/null || echo false)
          ;;
        crane)
          innode "$HEALTHY" env SSL_CERT_FILE="$CA" "$RSSW" -o "$rj" -- \
            "$CRANE" pull --format oci "$IMAGE" "$out/oci" >"$out/log" 2>&1 && ok=true || ok=false
          ;;
        skopeo)
          innode "$HEALTHY" "$RSSW" -o "$rj" -- \
            "$SKOPEO" copy --src-cert-dir "$CERTDIR" "docker://$IMAGE" "dir:$out/dir" >"$out/log" 2>&1 && ok=true || ok=false
          ;;
        ctr)
          start_containerd "$W/ctrd-p1"
          ctrd0=$(pidcpu "$CTRDPID")
          innode "$HEALTHY" "$RSSW" -o "$rj" -- \
            "$CTR" --address "$W/ctrd-p1/containerd.sock" -n bench content fetch --tlscacert "$CA" "$IMAGE" >"$out/log" 2>&1 && ok=true || ok=false
          # containerd writes the content: its peak RSS counts too.
          awk '/VmHWM/ {print $2}' "/proc/$CTRDPID/status" >"$W/res/p1-ctr-$run.daemon"
          echo $(($(pidcpu "$CTRDPID") - ctrd0)) >"$W/res/p1-ctr-$run.daemoncpu"
          stop_containerd
          rm -rf "$W/ctrd-p1"
          ;;
      esac
      echo $(($(labcpu) - lab0)) >"$W/res/p1-$tool-$run.labcpu"
      [ -s "$rj" ] && rsstime "$rj" "$tf"
      if [ "$ok" != true ]; then
        log "P1 $tool run $run FAILED (see below)"; tail -5 "$out"/* >&2 || true
        rm -f "$tf"
      else
        log "P1 $tool run $run: $(cut -d' ' -f1 "$tf") s, $(($(cut -d' ' -f2 "$tf") / 1024)) MiB"
      fi
      rm -rf "$out"
    done
  done
fi

# ---------------------------------------------------------------- P2
FAULTS=$(jq -r '.scenarios[] | select(.expect.ok | not) | .name' "$LAB")
fast_fault() {
  case "$1" in
    dns-nxdomain|blob-nxdomain|route-refused|blob-refused|auth-host-down|dns-resolver-down|tls-*|auth-*|authz-*|manifest-unknown) return 0 ;;
  esac
  return 1
}
if [[ " $PARTS " == *" p2 "* ]]; then
  log "P2: time to verdict for ${FAULTS//$'\n'/ }"
  if have ctr; then start_containerd "$W/ctrd-p2"; fi
  for run in $(seq "$RUNS"); do
    for sc in $FAULTS; do
      root=$(jq -r --arg n "$sc" '.scenarios[] | select(.name==$n) | .root' "$LAB")
      img=$(jq -r --arg n "$sc" '.scenarios[] | select(.name==$n) | .image' "$LAB")
      plat=$(jq -r --arg n "$sc" '.scenarios[] | select(.name==$n) | .platform' "$LAB")
      creds=$(jq -r --arg n "$sc" '.scenarios[] | select(.name==$n) | .credsFile // ""' "$LAB")
      want=$(jq -r --arg n "$sc" '.scenarios[] | select(.name==$n) | .expect.cause' "$LAB")
      userargs=()
      if [ -n "$creds" ]; then userargs=(--username "$(cut -d: -f1 "$creds")" --password-stdin); fi
      rep=$W/res/p2-$sc-$run.json
      # pullpath reads the node's files under --root itself: no namespace needed.
      bash -c "$TIMED" _ "$W/res/p2-$sc-$run.wallus" \
        "$BIN/pullpath" probe "$img" --root "$root" --platform "$plat" --blobs full --timeout 5s -o json "${userargs[@]}" \
        >"$rep" 2>/dev/null < <(if [ -n "$creds" ]; then cut -d: -f2- "$creds"; fi) || true
      got=$(jq -r '.verdict.cause // "ok"' "$rep" 2>/dev/null || echo "?")
      echo "$got" >"$W/res/p2-$sc.cause"
      [ "$got" = "$want" ] || log "P2 $sc: pullpath said $got, the lab expects $want"
      if have ctr; then
        cargs=()
        if [ -n "$creds" ]; then cargs=(--user "$(cat "$creds")"); fi
        innode "$root" bash -c "$TIMED" _ "$W/res/p2-$sc-$run.ctrus" \
          "$CTR" --address "$W/ctrd-p2/containerd.sock" -n "p2-$run" content fetch --tlscacert "$CA" --platform "$plat" "${cargs[@]}" "$img" \
          >"$W/res/p2-$sc-$run.ctr" 2>&1 && cok=true || cok=false
        [ "$cok" = true ] && log "P2 $sc: ctr content fetch succeeded"
        tail -1 "$W/res/p2-$sc-$run.ctr" | cut -c1-300 >"$W/res/p2-$sc.ctrerr"
      fi
    done
  done
  stop_containerd
fi

# ---------------------------------------------------------------- P3/P4
gobench() { # PKG PATTERN -> file with the go test -bench output, or nothing
  local pkg=$1 pat=$2 f=$W/res/$3.bench
  if [ -d "$pkg" ] && grep -qs "func $pat(" "$pkg"/*_test.go; then
    log "$3: go test -bench $pat $pkg"
    go test -run '^$' -bench "^$pat\$" -benchmem -count "$RUNS" "$pkg" >"$f" 2>&1 || { log "$3: go test failed"; tail -20 "$f" >&2; }
  fi
}
[[ " $PARTS " == *" p3 "* ]] && gobench ./internal/cluster BenchmarkAnalyze p3
[[ " $PARTS " == *" p4 "* ]] && gobench ./internal/explain BenchmarkClassify p4

# ---------------------------------------------------------------- P5
# P5: peak RSS of a full verified pull by page-cache state of the binary.
P5RUNS=3
if [[ " $PARTS " == *" p5 "* ]]; then
  for tool in pullpath pullpath-node; do
    for st in linked cold read; do
      if [ "$st" = linked ]; then
        # A fresh link: the Go linker writes the file through a shared mapping.
        rm -f "$W/p5-$tool"; go build -o "$W/p5-$tool" "./cmd/$tool"
      fi
      for run in $(seq "$P5RUNS"); do
        pagestate "$st" "$W/p5-$tool"
        rj=$W/res/p5-$tool-$st-$run.json
        "$RSSW" -o "$rj" -- "$W/p5-$tool" probe "$IMAGE" --root "$HEALTHY" --blobs full --jobs "$JOBS" -o json >"$W/res/p5.report" 2>/dev/null || true
        [ "$(jq -r '.verdict.ok' "$W/res/p5.report" 2>/dev/null)" = true ] || { log "P5 $tool $st run $run FAILED"; rm -f "$rj"; continue; }
        log "P5 $tool $st run $run: $(jq -r '"peak \(.peakKiB / 1024 | floor) MiB, anon \(.atSampledPeak.anonKiB / 1024 | floor), file \(.atSampledPeak.fileKiB / 1024 | floor)"' "$rj")"
      done
    done
  done
fi

# ---------------------------------------------------------------- P6
# P6: start time (version; a fast-fault probe) against hello world, warm
# page cache, with bench/starttime: it execs each command itself (no shell
# or date(1) between the clock reads, which would add the same milliseconds
# to every command and shrink the ratios), P6RUNS times, interleaved so
# that load falls on all alike, and counts inits with GODEBUG=inittrace=1.
P6RUNS=${BENCH_P6RUNS:-100}
NXROOT=$(jq -r '.scenarios[] | select(.name=="dns-nxdomain") | .root' "$LAB")
NXIMG=$(jq -r '.scenarios[] | select(.name=="dns-nxdomain") | .image' "$LAB")
if [[ " $PARTS " == *" p6 "* ]]; then
  log "P6: start times, $P6RUNS interleaved runs each"
  # label wall-ms cpu-ms inits init-ms, one line per command
  "$BIN/starttime" -n "$P6RUNS" -inittrace "hello=$BIN/hello" \
    "pullpath-node-version=$BIN/pullpath-node version" \
    "pullpath-node-fault=$BIN/pullpath-node probe $NXIMG --root $NXROOT --timeout 2s -o json" \
    "pullpath-version=$BIN/pullpath version" \
    "pullpath-fault=$BIN/pullpath probe $NXIMG --root $NXROOT --timeout 2s -o json" |
    awk 'NR > 1 {gsub(/ms/, "", $2); gsub(/ms/, "", $4); print $1, $2, $4, $6, $7}' >"$W/res/p6.txt"
fi

# ---------------------------------------------------------------- table
CPU=$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)
NPROC=$(nproc)
MIB=$(awk -v b="$BYTES" 'BEGIN {printf "%.0f", b / 1048576}')
echo
echo "pullpath benchmarks — $(date -u +%Y-%m-%d) — nproc $NPROC — $CPU"
echo "image $IMAGE: $MIB MiB in $LAYERS layers (incompressible) + config; $RUNS alternating runs, medians; lab and tools share the machine"
echo
fmtrow() { printf '%-3s %-22s %-34s %9s %12s %22s %13s   %s\n' "$@"; }
fmtrow ID "measure" "tool" "median" "throughput" "peak RSS (anon+file)" "CPU s+lab s" "ratio / target"
fmtrow -- "----------------------" "----------------------------------" "---------" "------------" "----------------------" "-------------" "--------------"

mib() { awk -v k="$1" 'BEGIN {printf "%.0f", k / 1024}'; }
# P0: the binaries.
if [[ " $PARTS " == *" p0 "* ]]; then
  for tool in pullpath pullpath-node crane skopeo ctr; do
    have "$tool" || continue
    b=$(binof "$tool")
    size=$(awk -v b="$(stat -c %s "$b")" 'BEGIN {printf "%.1f MB", b / 1e6}')
    mods=$(go version -m "$b" 2>/dev/null | awk '$1 == "dep"' | wc -l)
    dyn=$(readelf --dyn-syms -W "$b" 2>/dev/null | awk '$1 ~ /^[0-9]+:$/' | wc -l)
    links="$mods modules, $dyn dynamic symbols"
    [ "$mods" = 0 ] && links="no module list (distro build), $dyn dynamic symbols"
    case "$tool" in
      pullpath|pullpath-node)
        pk=$(go list -deps "./cmd/$tool" | wc -l)
        what=$(go list -deps "./cmd/$tool" | awk '
          /^github.com\/distribution\/distribution/ {d = 1} /^k8s.io\/client-go\/kubernetes$/ {k = 1}
          /^google.golang.org\/grpc$/ {g = 1} /^go.opentelemetry.io\/otel\/exporters/ {o = 1} /^github.com\/redis\/go-redis/ {r = 1} $0 == "plugin" {p = 1}
          /^github.com\/containerd\/containerd\/v2\/core\/remotes\/docker\/config$/ {h = 1} /^github.com\/prometheus\/client_golang\/prometheus$/ {m = 1}
          END {s = ""; if (d) s = s " lab(distribution v3)"; if (r) s = s " go-redis"; if (o) s = s " otel-exporters"; if (k) s = s " client-go"; if (g) s = s " grpc(CRI)"; if (p) s = s " plugin";
               if (h) s = s " containerd-hosts.toml"; if (m) s = s " client_golang"; print s}')
        links="$pk packages, $links;$what" ;;
    esac
    fmtrow P0 "binary" "$tool $(version_of "$tool")" "$size" "-" "-" "-" "$links"
  done
fi

declare -A WALL RSS
if [[ " $PARTS " == *" p1 "* ]]; then
  for tool in $TOOLS; do
    if ! have "$tool"; then fmtrow P1 "full verified pull" "$tool" "-" "-" "-" "-" "not installed"; continue; fi
    files=$(ls "$W"/res/p1-"$tool"-*.time 2>/dev/null || true)
    if [ -z "$files" ]; then fmtrow P1 "full verified pull" "$tool" "failed" "-" "-" "-" "every run failed"; continue; fi
    WALL[$tool]=$(for f in $files; do cut -d' ' -f1 "$f"; done | median)
    RSS[$tool]=$(for f in $files; do cut -d' ' -f2 "$f"; done | sort -g | tail -1)
    # anon+file of the run with the highest peak.
    af=$(for f in $files; do cat "$f"; done | sort -k2 -g | tail -1 | awk '{printf "(%.0f+%.0f)", $5 / 1024, $6 / 1024}')
    cpu=$(for f in $files; do awk '{print $3 + $4}' "$f"; done | median)
    if [ "$tool" = ctr ]; then
      d=$(cat "$W"/res/p1-ctr-*.daemon | sort -g | tail -1)
      rss="$((RSS[$tool] / 1024))+$((d / 1024)) MiB $af"
      dc=$(cat "$W"/res/p1-ctr-*.daemoncpu | median)
      cpu=$(awk -v c="$cpu" -v d="$dc" 'BEGIN {printf "%.1f", c + d / 100}')
    else
      rss="$((RSS[$tool] / 1024)) MiB $af"
      cpu=$(awk -v c="$cpu" 'BEGIN {printf "%.1f", c}')
    fi
    labc=$(cat "$W"/res/p1-"$tool"-*.labcpu | median)
    cpu="$cpu+$(awk -v c="$labc" 'BEGIN {printf "%.1f", c / 100}')"
    tput=$(awk -v b="$BYTES" -v s="${WALL[$tool]}" 'BEGIN {printf "%.0f MB/s", b / 1e6 / s}')
    note=""
    if [ "$tool" = pullpath ]; then
      note=$(awk -v r="${RSS[pullpath]}" 'BEGIN {printf "RSS %s ≤ 48 MiB", (r <= 49152 ? "✔" : "✘")}')
    elif [ "$tool" = pullpath-node ]; then
      note=$(awk -v r="${RSS[pullpath-node]}" 'BEGIN {printf "RSS %s ≤ 25 MiB", (r <= 25600 ? "✔" : "✘")}')
    elif [ -n "${WALL[pullpath]:-}" ]; then
      note=$(awk -v p="${WALL[pullpath]}" -v t="${WALL[$tool]}" -v tool="$tool" 'BEGIN {r = t / p; printf "%s/pullpath %.2f× %s", tool, r, (tool == "ctr" ? "(no target)" : (r >= 1.5 ? "✔ ≥ 1.5×" : "✘ < 1.5×"))}')
    fi
    ver=$(version_of "$tool")
    fmtrow P1 "full verified pull" "$tool $ver" "${WALL[$tool]} s" "$tput" "$rss" "$cpu" "$note"
  done
  SHA=$(cat "$W"/res/sha-* 2>/dev/null | median)
  if [ -n "$SHA" ]; then
    note="-"
    if [ -n "${WALL[pullpath]:-}" ]; then
      note=$(awk -v b="$BYTES" -v s="${WALL[pullpath]}" -v c="$SHA" 'BEGIN {r = b / 1e6 / s / c; printf "pullpath/ceiling %.2f %s", r, (r >= 0.5 ? "✔ ≥ 0.5" : "✘ < 0.5")}')
    fi
    fmtrow P1 "SHA-256, 1 core" "Go crypto/sha256 (ceiling)" "-" "$SHA MB/s" "-" "-" "$note"
  fi
fi

if [[ " $PARTS " == *" p2 "* ]]; then
  for sc in $FAULTS; do
    pp=$(cat "$W"/res/p2-"$sc"-*.wallus 2>/dev/null | median)
    inproc=$(for f in "$W"/res/p2-"$sc"-*.json; do jq -r '.duration_ms' "$f" 2>/dev/null; done | median)
    cause=$(cat "$W/res/p2-$sc.cause" 2>/dev/null || echo "?")
    ppms=$(awk -v u="$pp" 'BEGIN {printf "%.0f", u / 1000}')
    tgt=""
    if fast_fault "$sc"; then
      tgt=$(awk -v m="$inproc" 'BEGIN {printf "%s < 100 ms", (m < 100 ? "✔" : "✘")}')
    fi
    ctrcol="ctr: n/a"
    if have ctr; then
      c=$(cat "$W"/res/p2-"$sc"-*.ctrus 2>/dev/null | median)
      ctrcol=$(awk -v p="$pp" -v c="$c" 'BEGIN {r = p / c; printf "ctr %.0f ms, ratio %.2f %s", c / 1000, r, (r <= 0.2 ? "✔ ≤ 0.2" : "✘ > 0.2")}')
    fi
    fmtrow P2 "$sc" "pullpath → $cause" "${inproc} ms" "wall ${ppms} ms" "-" "-" "$tgt${tgt:+; }$ctrcol"
  done
fi

if [[ " $PARTS " == *" p5 "* ]]; then
  for tool in pullpath pullpath-node; do
    for st in linked cold read; do
      files=$(ls "$W"/res/p5-"$tool"-"$st"-*.json 2>/dev/null || true)
      if [ -z "$files" ]; then fmtrow P5 "RSS, binary $st" "$tool" "failed" "-" "-" "-" "every run failed"; continue; fi
      peak=$(for f in $files; do jq -r .peakKiB "$f"; done | median)
      an=$(for f in $files; do jq -r .atSampledPeak.anonKiB "$f"; done | median)
      fl=$(for f in $files; do jq -r .atSampledPeak.fileKiB "$f"; done | median)
      lim=49152; [ "$tool" = pullpath-node ] && lim=25600
      fmtrow P5 "RSS, binary $st" "$tool" "-" "-" "$(mib "$peak") MiB ($(mib "$an")+$(mib "$fl"))" "-" \
        "$(awk -v r="$peak" -v l="$lim" 'BEGIN {printf "%s ≤ %d MiB", (r <= l ? "✔" : "✘"), l / 1024}')"
    done
  done
fi

if [[ " $PARTS " == *" p6 "* ]]; then
  read -r _ h hc hn hms < <(awk '$1 == "hello"' "$W/res/p6.txt")
  fmtrow P6 "start (hello world)" "go $(go env GOVERSION | sed 's/^go//')" "$h ms" "-" "-" \
    "-" "CPU $hc ms; $hn inits, $hms ms of init ($P6RUNS runs, bench/starttime)"
  for tool in pullpath-node pullpath; do
    for what in version fault; do
      read -r _ u c n ms < <(awk -v l="$tool-$what" '$1 == l' "$W/res/p6.txt")
      label="start: version"; [ "$what" = fault ] && label="start: fast fault"
      tgt=""
      [ "$tool" = pullpath-node ] && tgt=$(awk -v u="$u" -v h="$h" 'BEGIN {r = u / h; printf " %s", (r <= 2 ? "✔ ≤ 2×" : "✘ > 2×")}')
      fmtrow P6 "$label" "$tool" "$u ms" "-" "-" "-" \
        "wall $(awk -v u="$u" -v h="$h" 'BEGIN {printf "%.2f× hello", u / h}')$tgt, CPU $(awk -v u="$c" -v h="$hc" 'BEGIN {printf "%.2f×", u / h}'); $n inits, $ms ms of init"
    done
  done
fi

benchrow() { # ID measure file
  local id=$1 what=$2 f=$W/res/$3.bench
  local pkg=$4
  if [ ! -s "$f" ]; then fmtrow "$id" "$what" "go test -bench" "-" "-" "-" "-" "not available yet ($pkg)"; return; fi
  local ns bop per
  ns=$(awk '/^Benchmark/ {for (i = 1; i <= NF; i++) if ($i == "ns/op") print $(i-1)}' "$f" | median)
  bop=$(awk '/^Benchmark/ {for (i = 1; i <= NF; i++) if ($i == "B/op") print $(i-1)}' "$f" | median)
  if [ -z "$ns" ]; then fmtrow "$id" "$what" "go test -bench" "failed" "-" "-" "-" "see go test output"; return; fi
  if [ "$id" = P3 ]; then
    fmtrow "$id" "$what" "BenchmarkAnalyze" "$(awk -v n="$ns" 'BEGIN {printf "%.3f s", n / 1e9}')" "-" \
      "$(awk -v b="$bop" 'BEGIN {printf "%.0f MiB", b / 1048576}')" "-" \
      "$(awk -v n="$ns" -v b="$bop" 'BEGIN {printf "%s < 2 s, %s < 512 MiB allocated", (n < 2e9 ? "✔" : "✘"), (b < 512 * 1048576 ? "✔" : "✘")}')"
  else
    # Messages per second: the benchmark's own msgs/s metric when it reports
    # one, else one message per op.
    per=$(awk '/^Benchmark/ {for (i = 1; i <= NF; i++) if ($i ~ /^msgs?\/s$/) print $(i-1)}' "$f" | median)
    [ -z "$per" ] && per=$(awk -v n="$ns" 'BEGIN {printf "%.0f", 1e9 / n}')
    fmtrow "$id" "$what" "BenchmarkClassify" "$(awk -v n="$ns" 'BEGIN {printf "%.0f ns/op", n}')" \
      "$(awk -v p="$per" 'BEGIN {printf "%.0fk msg/s", p / 1000}')" "$(awk -v b="$bop" 'BEGIN {printf "%.0f B/op", b}')" "-" \
      "$(awk -v p="$per" 'BEGIN {printf "%s ≥ 100k msg/s per core", (p >= 100000 ? "✔" : "✘")}')"
  fi
}
[[ " $PARTS " == *" p3 "* ]] && benchrow P3 "cluster analysis" p3 internal/cluster
[[ " $PARTS " == *" p4 "* ]] && benchrow P4 "explain" p4 internal/explain
echo
echo "P0: size of the file; packages it links (go list -deps) and modules (go version -m); ELF dynamic symbols (a Go binary linked"
echo "    in dynamic mode, as Go's plugin package forces, exports every symbol: hundreds of thousands)."
echo "P1: every tool's binary in page-cache state '$STATE' (P5 and the top of bench/run.sh say what the states are);"
echo "    peak RSS is ru_maxrss, (anon+file) RssAnon and RssFile in MiB at the sampled peak."
echo "P1: peers are crane pull --format oci, skopeo copy docker:// dir:, ctr content fetch (RSS and CPU: ctr + its containerd);"
echo "    the peers write the blobs to disk, pullpath hashes and discards them. CPU s+lab s: user+system seconds of the tool,"
echo "    and of the lab server while it served that tool (medians). Throughput is MB/s (10^6 B) of image bytes over wall time."
echo "P2: pullpath's time to verdict inside the process (report ms; the target) and its process wall time (start included);"
echo "    ctr is containerd's own resolver and fetcher on the same fault, process wall time. The ratio compares wall times."
echo "    Silent-drop faults (connect timeouts) need the network-namespace tier: none of these faults is one."
echo "P5: the same pull by the binary's page-cache state: linked (as go build wrote it), cold (pages dropped, exec reads it back),"
echo "    read (cold, then read once with read(2): large folios); medians of $P5RUNS runs."
echo "P6: median wall time (and median user+sys CPU, less sensitive to a loaded machine) of $P6RUNS runs, warm page cache; the fast fault is the dns-nxdomain scenario; init: GODEBUG=inittrace=1"
echo "    of \`version\` (number of package inits and the sum of their clock ms, median of 5 runs)."
