#!/usr/bin/env bash
# A private PostgreSQL server for syncd's tests: its own cluster on a free loopback port.
#
#   scripts/postgres.sh start   installs PostgreSQL (apt) when missing, starts the cluster unless
#                               it runs, and prints its URL (postgresql://postgres@127.0.0.1:PORT/postgres)
#   scripts/postgres.sh url     prints the URL of the running cluster (exit 1 when none runs)
#   scripts/postgres.sh stop    stops the cluster and deletes it
#
# The cluster lives in a temporary directory; .build-postgres/ remembers where, and its URL.
# PostgreSQL refuses to run as root: as root the cluster belongs to the `postgres` user the
# package creates. Durability is off (fsync=off): the cluster holds test data only.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
state="$root/.build-postgres"
die() { echo "postgres.sh: $*" >&2; exit 1; }

# The directory of initdb and pg_ctl: the newest Debian/Ubuntu server package, else PATH.
find_binaries() {
    local dir
    dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
    if [ -n "$dir" ] && [ -x "$dir/initdb" ]; then echo "$dir"; return 0; fi
    command -v initdb >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return 0; }
    return 1
}

# shellcheck source=lib/apt-install.sh
source "$root/scripts/lib/apt-install.sh"
install_postgres() { apt_install postgresql "install PostgreSQL (initdb and pg_ctl on PATH), e.g. brew install postgresql"; }

# Runs a command as the cluster's owner: the `postgres` user when running as root.
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

is_running() {
    [ -f "$state/url" ] && [ -f "$state/cluster" ] || return 1
    local bin cluster
    bin="$(find_binaries)" || return 1
    cluster="$(cat "$state/cluster")"
    as_owner "$bin/pg_ctl" -D "$cluster" status >/dev/null 2>&1
}

# shellcheck source=lib/free-port.sh
source "$root/scripts/lib/free-port.sh"

start() {
    if is_running; then cat "$state/url"; return 0; fi
    local bin
    bin="$(find_binaries)" || { install_postgres; bin="$(find_binaries)" || die "initdb not found after installing postgresql"; }
    mkdir -p "$state"
    local cluster port
    cluster="$(mktemp -d "${TMPDIR:-/tmp}/objectsync-postgres.XXXXXX")"
    [ "$(id -u)" -ne 0 ] || chown postgres: "$cluster"
    chmod 700 "$cluster"
    as_owner "$bin/initdb" -D "$cluster/data" -U postgres --auth=trust -E UTF8 --no-sync >"$cluster/initdb.log" 2>&1 \
        || { cat "$cluster/initdb.log" >&2; die "initdb failed"; }
    port="$(free_port)"
    as_owner "$bin/pg_ctl" -D "$cluster/data" -l "$cluster/server.log" -w -t 60 \
        -o "-p $port -k $cluster -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
        start >/dev/null || { cat "$cluster/server.log" >&2; die "the server did not start"; }
    echo "$cluster/data" >"$state/cluster"
    echo "postgresql://postgres@127.0.0.1:$port/postgres" >"$state/url"
    cat "$state/url"
}

stop() {
    [ -f "$state/cluster" ] || return 0
    local bin cluster
    cluster="$(cat "$state/cluster")"
    if bin="$(find_binaries)" && [ -d "$cluster" ]; then
        as_owner "$bin/pg_ctl" -D "$cluster" -m fast -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$(dirname "$cluster")"
    rm -f "$state/cluster" "$state/url"
}

case "${1:-}" in
    start) start ;;
    url) is_running || exit 1; cat "$state/url" ;;
    stop) stop ;;
    *) echo "usage: scripts/postgres.sh start|url|stop" >&2; exit 2 ;;
esac
