#!/usr/bin/env bash
# Property-based checks of syncd against Protocol/openapi.yaml with schemathesis: starts syncd
# (debug by default) on a temporary data directory on 127.0.0.1, adds a read-write token for the
# dataset "demo", registers the schema of Protocol/vectors/examples/03-schema-put.json, then runs
# `schemathesis run` with every check against the contract. Exits non-zero when schemathesis
# reports a failure. syncd is stopped and its data removed at the end.
#
# Usage: scripts/schemathesis.sh [--release] [--no-build] [--max-examples N] [--time-limit SECONDS]
# Needs python3 and curl; installs schemathesis with pip when it is missing.
set -uo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
configuration=debug
build=1
max_examples=50
time_limit=600
die() { echo "schemathesis.sh: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
    case "$1" in
        --release) configuration=release ;;
        --no-build) build=0 ;;
        --max-examples) shift; max_examples="${1:?--max-examples needs a number}" ;;
        --time-limit) shift; time_limit="${1:?--time-limit needs seconds}" ;;
        -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$1' (try --help)" ;;
    esac
    shift
done
case "$max_examples$time_limit" in *[!0-9]*) die "--max-examples and --time-limit take whole numbers" ;; esac

# The version is pinned so that a new schemathesis release cannot change what CI checks unnoticed.
if ! command -v schemathesis >/dev/null 2>&1; then
    python3 -m pip install -q "schemathesis==4.32.5" || die "cannot install schemathesis"
    # pip puts the command in the interpreter's scripts directory, which need not be on PATH.
    PATH="$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))'):$PATH"
fi
command -v schemathesis >/dev/null 2>&1 || die "schemathesis is not on PATH after installing it"

cd "$root" || die "cannot enter $root"
if [ "$build" = 1 ]; then
    # The debug build is the tests' (scripts/debug-build.sh), so that it reuses theirs.
    if [ "$configuration" = debug ]; then build_syncd=(scripts/debug-build.sh); else build_syncd=(swift build -c release); fi
    "${build_syncd[@]}" --product syncd >/dev/null || die "building syncd failed"
fi
bin="$(swift build -c "$configuration" --show-bin-path)"
[ -x "$bin/syncd" ] || die "no syncd in $bin (build it or drop --no-build)"

work="$(mktemp -d "${TMPDIR:-/tmp}/syncd-schemathesis.XXXXXX")" || die "mktemp failed"
# shellcheck source=lib/syncd.sh
. "$root/scripts/lib/syncd.sh"
cleanup() {
    stop_syncd
    rm -rf "$work"
}
trap cleanup EXIT

start_syncd "$bin" "$work/data" "$work/syncd.log"

dataset=demo
token="$(timeout 30 "$bin/syncd" token add --dataset "$dataset" --data "$work/data" 2>/dev/null)" || die "token add failed"
python3 -c 'import json, sys; json.dump(json.load(open(sys.argv[1]))["request"]["body"], sys.stdout)' \
    Protocol/vectors/examples/03-schema-put.json >"$work/schema.json" || die "cannot read the example schema"
status="$(curl -s -o "$work/schema-response.json" -w '%{http_code}' -X PUT -H "Authorization: Bearer $token" \
    -H 'Content-Type: application/json' --data-binary @"$work/schema.json" "$url/v1/datasets/$dataset/schema")"
[ "$status" = 200 ] || die "registering the schema answered $status: $(cat "$work/schema-response.json")"
echo "schemathesis.sh: syncd ($configuration) at $url, dataset $dataset with a registered schema"

# Every check runs except positive_data_acceptance: it expects any request the schema allows to be
# accepted, but some rules cannot be written in OpenAPI 3.0 and are stated in descriptions instead
# (versionHash must be the hash of the entities, a change set's vector must hold its own seq,
# vector keys must be UUIDs, a pull's afterDigest must name the server's log up to its cursor), so
# schema-valid requests that break them are rightly answered 400.
#
# The dataset path parameter is pinned to the dataset the token opens, so the generated requests
# reach the routes' logic instead of stopping at 403.
cat >"$work/schemathesis.toml" <<TOML
[parameters]
"path.dataset" = "$dataset"
TOML
timeout "$time_limit" schemathesis --config-file "$work/schemathesis.toml" run Protocol/openapi.yaml \
    --url "$url" \
    --header "Authorization: Bearer $token" \
    --checks all \
    --exclude-checks positive_data_acceptance \
    --max-examples "$max_examples" \
    --no-color
result=$?
[ "$result" = 124 ] && die "schemathesis did not finish within $time_limit s"
exit "$result"
