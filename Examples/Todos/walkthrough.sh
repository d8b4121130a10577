#!/usr/bin/env bash
# Runs the walkthrough of Examples/Todos/README.md against a real syncd and checks every output.
#
# Builds syncd (with the main package's .build, so it reuses a test build) and the example (in
# .build-examples/todos, as the example compiles swift-syntax again), starts syncd on a free port
# with a temporary data directory, then runs each `$ ` command of the README's ```console blocks
# in order, in this shell (so `export`s carry over), and compares what it prints with the lines
# the README shows under it. Paths under /tmp and the server URL are mapped to the temporary
# directory and the real port. Finally it checks that both stores list the same todos, the ones
# the README expects, and that both journals hold the cascaded delete.
#
# Usage: Examples/Todos/walkthrough.sh [--no-build]
set -uo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
readme="$root/Examples/Todos/README.md"
passed=0
failed=0

die() { echo "walkthrough: $*" >&2; exit 1; }

build=1
for argument in "$@"; do
    case "$argument" in
        --no-build) build=0 ;;
        -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$argument' (try --help)" ;;
    esac
done

cd "$root" || die "cannot cd to $root"
if [ "$build" = 1 ]; then
    echo "walkthrough: building syncd and the example"
    scripts/debug-build.sh --product syncd >/dev/null || die "building syncd failed"
    swift build --package-path Examples/Todos --scratch-path .build-examples/todos >/dev/null || die "building Examples/Todos failed"
fi
server_bin="$(swift build --show-bin-path)" || die "swift build --show-bin-path failed"
todos_bin="$(swift build --package-path Examples/Todos --scratch-path .build-examples/todos --show-bin-path)" || die "swift build --show-bin-path failed for the example"
[ -x "$server_bin/syncd" ] || die "no syncd in $server_bin (build it or drop --no-build)"
[ -x "$todos_bin/todos" ] || die "no todos in $todos_bin (build it or drop --no-build)"

work="$(mktemp -d "${TMPDIR:-/tmp}/todos-walkthrough.XXXXXX")" || die "mktemp failed"
syncd_pid=""
cleanup() {
    if [ -n "$syncd_pid" ]; then
        kill "$syncd_pid" 2>/dev/null
        wait "$syncd_pid" 2>/dev/null
    fi
    rm -rf "$work"
}
trap cleanup EXIT

# Start syncd on a free port and wait for its "listening" line.
"$server_bin/syncd" serve --data "$work/syncd" --port 0 2>"$work/syncd.log" &
syncd_pid=$!
url=""
for _ in $(seq 1 100); do
    url="$(sed -n 's/^syncd listening on \(http:[^ ]*\)$/\1/p' "$work/syncd.log" | head -n 1)"
    [ -n "$url" ] && break
    kill -0 "$syncd_pid" 2>/dev/null || { cat "$work/syncd.log" >&2; die "syncd exited before listening"; }
    sleep 0.1
done
[ -n "$url" ] || { cat "$work/syncd.log" >&2; die "syncd did not say it was listening within 10 s"; }
echo "walkthrough: syncd listening on $url"

# The README's commands run as a new user's would: nothing from this environment leaks in.
unset TODOS_DIR TODOS_SERVER TODOS_DATASET TODOS_TOKEN
export HOME="$work/home"
export PATH="$server_bin:$todos_bin:$PATH"

# README paths and URL -> this run's.
localize() {
    sed -e "s#/tmp/alice#$work/alice#g" -e "s#/tmp/bob#$work/bob#g" -e "s#/tmp/todos-syncd#$work/syncd#g" \
        -e "s#http://127.0.0.1:8080#$url#g"
}

# Split the console blocks into numbered steps: steps/N.cmd (the command) and steps/N.out (what it prints).
mkdir -p "$work/steps"
awk -v dir="$work/steps" '
    /^```console[ \t]*$/ { inside = 1; next }
    /^```/ { inside = 0; next }
    inside && /^\$ / { n++; file = sprintf("%s/%03d", dir, n); print substr($0, 3) > (file ".cmd"); printf "" > (file ".out"); next }
    inside && n > 0 { print > (file ".out") }
' "$readme"
steps=$(find "$work/steps" -name '*.cmd' | wc -l)
[ "$steps" -gt 0 ] || die "found no \$ commands in $readme"

check() { # name, expected file, actual file
    if diff -u "$2" "$3" >"$work/diff"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL: $1"
        sed 's/^/    /' "$work/diff"
    fi
}

for cmd_file in "$work"/steps/*.cmd; do
    step="${cmd_file%.cmd}"
    command="$(localize <"$cmd_file")"
    localize <"$step.out" >"$step.expected"
    eval "$command" >"$step.actual" 2>&1
    status=$?
    if [ "$status" != 0 ]; then
        echo "exit status $status" >>"$step.actual"
    fi
    check "\$ $(cat "$cmd_file")" "$step.expected" "$step.actual"
done

# The end state, checked directly: both stores list the same todos, the ones the README expects
# (the output under its last `ls` of Alice's store), and both journals hold the cascaded delete.
awk '/^\$ todos --dir \/tmp\/alice ls$/ { text = ""; grab = 1; next } /^(\$ |```)/ { grab = 0 } grab { text = text $0 "\n" } END { printf "%s", text }' \
    "$readme" >"$work/final.expected"
[ -s "$work/final.expected" ] || die "found no final listing in $readme"
todos --dir "$work/alice" ls >"$work/alice.final" 2>&1
todos --dir "$work/bob" ls >"$work/bob.final" 2>&1
check "Alice's and Bob's final listings are identical" "$work/alice.final" "$work/bob.final"
check "Alice's final listing is the README's" "$work/final.expected" "$work/alice.final"
for who in alice bob; do
    todos --dir "$work/$who" conflicts >"$work/$who.conflicts" 2>&1
    if grep -q '^1\. cascaded_delete: todo "Eggs" was deleted too' "$work/$who.conflicts"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL: $who's conflict journal lacks the cascaded delete of Eggs:"
        sed 's/^/    /' "$work/$who.conflicts"
    fi
done

echo "walkthrough: $passed passed, $failed failed"
if [ "$failed" != 0 ]; then
    echo "walkthrough: syncd's log:" >&2
    sed 's/^/    /' "$work/syncd.log" >&2
    exit 1
fi
