# Shell functions for scripts that run a syncd of their own on 127.0.0.1 (source this file).
#
#   start_syncd BIN DATA_DIR LOG   starts BIN/syncd serve on a free port with its stderr in LOG,
#                                  waits for its listening line; sets syncd_pid and url
#   stop_syncd                     stops it (SIGTERM) and waits; safe to call twice
# Both call `die MESSAGE` (defined by the caller) on failure.

syncd_pid=""
url=""

start_syncd() {
    local bin="$1" data="$2" log="$3"
    # syncd logs one line per request to stderr: to a file, as a production log would.
    "$bin/syncd" serve --data "$data" --host 127.0.0.1 --port 0 2>"$log" &
    syncd_pid=$!
    url=""
    for _ in $(seq 1 100); do
        url="$(sed -n 's/^syncd listening on \(http:\/\/127\.0\.0\.1:[0-9]*\)$/\1/p' "$log" | head -n 1)"
        [ -n "$url" ] && return 0
        kill -0 "$syncd_pid" 2>/dev/null || { cat "$log" >&2; die "syncd exited before listening"; }
        sleep 0.1
    done
    die "syncd did not print its listening line"
}

stop_syncd() {
    if [ -n "$syncd_pid" ]; then
        kill "$syncd_pid" 2>/dev/null
        wait "$syncd_pid" 2>/dev/null
        syncd_pid=""
    fi
}
