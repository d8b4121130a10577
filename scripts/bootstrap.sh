#!/usr/bin/env bash
# Installs what building and testing need on a fresh Debian/Ubuntu machine (or checks macOS).
# Called by `make run` and `make test`; safe to run again.
set -euo pipefail

if ! command -v swift >/dev/null 2>&1; then
    echo "bootstrap: the Swift toolchain (6.2 or newer) is not on PATH; install it from swift.org first" >&2
    exit 1
fi

missing=()
if [ "$(uname -s)" = "Linux" ]; then
    [ -f /usr/include/sqlite3.h ] || missing+=(libsqlite3-dev)
    # libpq for syncd's PostgreSQL storage, found through pkg-config (the server is installed
    # only by the tests, scripts/postgres.sh).
    [ -f /usr/include/postgresql/libpq-fe.h ] || missing+=(libpq-dev)
    # libcurl's headers for SyncKit's requests to servers behind a private certificate authority.
    [ -f /usr/include/x86_64-linux-gnu/curl/curl.h ] || [ -f /usr/include/aarch64-linux-gnu/curl/curl.h ] || [ -f /usr/include/curl/curl.h ] || missing+=(libcurl4-openssl-dev)
    command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
    command -v sqlite3 >/dev/null 2>&1 || missing+=(sqlite3)
    command -v curl >/dev/null 2>&1 || missing+=(curl)
    if [ "${#missing[@]}" -gt 0 ]; then
        echo "bootstrap: installing ${missing[*]}" >&2
        sudo_cmd=""
        [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
        $sudo_cmd apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
fi
