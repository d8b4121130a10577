#!/usr/bin/env bash
# HTTP load on a real syncd, on 127.0.0.1 only: wrk against GET /health and against an empty
# pull (GET /v1/datasets/D/changesets?after=<latest cursor> with the bearer token), then 1,000
# idle keep-alive connections held 30 s, with syncd's resident memory (VmRSS, VmHWM from
# /proc/PID/status) before, under load (highest sample) and after.
#
# Builds the release syncd and bench first (bench seeds the dataset: schema plus one change set).
# Every run is bounded (wrk -d, timeouts); syncd is stopped and its data removed at the end.
#
# Usage: scripts/bench-http.sh [--no-build] [--scratch-path DIR] [--duration SECONDS]
#                              [--connections N] [--hold SECONDS]
# Environment: BENCH_SCRATCH_PATH (default for --scratch-path), BENCH_BUILD_FLAGS (extra
# `swift build` arguments, e.g. "-Xswiftc -g" to match a tree built for profiling; different
# flags than the tree was built with make swift build rebuild everything).
# Needs wrk (apt-get install -y wrk) and python3.
set -uo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build=1
scratch=()
[ -n "${BENCH_SCRATCH_PATH:-}" ] && scratch=(--scratch-path "$BENCH_SCRATCH_PATH")
read -r -a build_flags <<<"${BENCH_BUILD_FLAGS:-}"
duration=10
connections=1000
hold=30
die() { echo "bench-http: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
    case "$1" in
        --no-build) build=0 ;;
        --scratch-path) shift; scratch=(--scratch-path "${1:?--scratch-path needs a directory}") ;;
        --duration) shift; duration="${1:?}" ;;
        --connections) shift; connections="${1:?}" ;;
        --hold) shift; hold="${1:?}" ;;
        -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$1' (try --help)" ;;
    esac
    shift
done
case "$duration$connections$hold" in *[!0-9]*) die "--duration, --connections and --hold take whole numbers" ;; esac
[ "$duration" -le 120 ] || die "--duration is at most 120 seconds"
[ "$hold" -le 300 ] || die "--hold is at most 300 seconds"
command -v wrk >/dev/null || die "wrk not found (apt-get install -y wrk)"
command -v python3 >/dev/null || die "python3 not found"

cd "$root" || die "cannot cd to $root"
if [ "$build" = 1 ]; then
    echo "bench-http: building syncd and bench (release)"
    swift build -c release "${scratch[@]}" "${build_flags[@]}" --product syncd >/dev/null || die "building syncd failed"
    swift build -c release "${scratch[@]}" "${build_flags[@]}" --product bench >/dev/null || die "building bench failed"
fi
bin="$(swift build -c release "${scratch[@]}" --show-bin-path)" || die "swift build --show-bin-path failed"
[ -x "$bin/syncd" ] && [ -x "$bin/bench" ] || die "no syncd or bench in $bin (build them or drop --no-build)"

work="$(mktemp -d "${TMPDIR:-/tmp}/syncd-bench-http.XXXXXX")" || die "mktemp failed"
# shellcheck source=lib/syncd.sh
. "$root/scripts/lib/syncd.sh"
sampler_pid=""
cleanup() {
    [ -n "$sampler_pid" ] && kill "$sampler_pid" 2>/dev/null
    stop_syncd
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start_syncd "$bin" "$work/data" "$work/syncd.log"
port="${url##*:}"

dataset=bench
token="$(timeout 30 "$bin/syncd" token add --dataset "$dataset" --data "$work/data")" || die "token add failed"
cursor="$(timeout 60 "$bin/bench" sync-seed "$url" "$dataset" "$token")" || die "seeding the dataset failed"
pull_path="/v1/datasets/$dataset/changesets?after=$cursor"
export SYNCD_TOKEN="$token"
status="$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" "$url$pull_path" 2>/dev/null || echo "?")"
echo "bench-http: syncd pid $syncd_pid at $url; empty pull $pull_path answers $status"

# Memory of syncd, in kB.
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$syncd_pid/status"; }
hwm() { awk '/^VmHWM:/ { print $2 }' "/proc/$syncd_pid/status"; }
# Samples VmRSS every 0.2 s into $work/rss-$1 until stopped.
start_sampler() {
    ( while kill -0 "$syncd_pid" 2>/dev/null; do rss >>"$work/rss-$1"; sleep 0.2; done ) &
    sampler_pid=$!
}
stop_sampler() {
    kill "$sampler_pid" 2>/dev/null
    wait "$sampler_pid" 2>/dev/null
    sampler_pid=""
    sort -n "$work/rss-$1" | tail -n 1
}
mib() { awk -v kb="$1" 'BEGIN { printf "%.1f MiB", kb / 1024 }'; }

rss_before="$(rss)"
summary=()
run_wrk() { # name path [script]
    local name="$1" path="$2" script="${3:-}" output
    start_sampler "$name"
    if [ -n "$script" ]; then
        output="$(timeout $((duration + 30)) wrk -t2 -c64 -d"${duration}s" --latency -s "$script" "$url$path")"
    else
        output="$(timeout $((duration + 30)) wrk -t2 -c64 -d"${duration}s" --latency "$url$path")"
    fi
    local peak; peak="$(stop_sampler "$name")"
    echo "$output"
    local rate latency p99 errors
    rate="$(awk '/^Requests\/sec:/ { print $2 }' <<<"$output")"
    latency="$(awk '$1 == "Latency" && $2 != "Distribution" { print $2 " avg, " $3 " stdev, " $4 " max" }' <<<"$output")"
    p99="$(awk '$1 == "99%" { print $2 }' <<<"$output")"
    errors="$(grep -E 'Socket errors|Non-2xx' <<<"$output" | tr -s ' ' | paste -sd ';' -)"
    summary+=("$(printf '%-13s %12s req/s  latency %s, p99 %s  errors: %s  syncd RSS peak %s' \
        "$name" "$rate" "$latency" "$p99" "${errors:-none}" "$(mib "$peak")")")
}

echo "== wrk -t2 -c64 -d${duration}s $url/health"
run_wrk health /health
echo "== wrk -t2 -c64 -d${duration}s $url$pull_path (bearer token, scripts/bench-auth.lua)"
run_wrk empty-pull "$pull_path" "$root/scripts/bench-auth.lua"
rss_after_wrk="$(rss)"

echo "== $connections idle keep-alive connections held ${hold}s"
start_sampler idle
timeout $((hold + 120)) python3 "$root/scripts/bench-idle-connections.py" "$port" --connections "$connections" --hold "$hold"
idle_status=$?
rss_idle_peak="$(stop_sampler idle)"
sleep 1
rss_after="$(rss)"
hwm_after="$(hwm)"

echo ""
echo "summary ($(nproc) cores, syncd $url):"
for line in "${summary[@]}"; do echo "  $line"; done
echo "  idle          $connections connections ${hold}s: $([ "$idle_status" = 0 ] && echo "all answered again, 0 errors" || echo "FAILED (status $idle_status)")  syncd RSS peak $(mib "$rss_idle_peak")"
echo "  syncd RSS     before $(mib "$rss_before"), after wrk $(mib "$rss_after_wrk"), after idle $(mib "$rss_after"); high-water mark $(mib "$hwm_after")"
[ "$idle_status" = 0 ]
