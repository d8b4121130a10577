#!/usr/bin/env bash
# A private nginx terminating TLS in front of syncd instances, with deploy/nginx-syncd.conf's
# proxy settings, for the deployment's end-to-end proof.
#
#   scripts/nginx.sh start PORT...  installs nginx (apt) when missing, generates a certificate
#                                   authority and a server certificate for 127.0.0.1/localhost
#                                   with openssl, starts nginx on a free loopback port balancing
#                                   over the syncd instances on PORT..., and prints two lines:
#                                   its URL (https://127.0.0.1:PORT) and the CA bundle (a PEM file)
#   scripts/nginx.sh stop           stops nginx and deletes its directory (certificates included)
#
# The server block is deploy/nginx-syncd.conf's own, with the upstream ports, the listening
# address and the certificate paths replaced: the proof exercises the configuration users copy.
# .build-nginx/ remembers the directory.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
state="$root/.build-nginx"
template="$root/deploy/nginx-syncd.conf"
die() { echo "nginx.sh: $*" >&2; exit 1; }

# shellcheck source=lib/apt-install.sh
source "$root/scripts/lib/apt-install.sh"
install_nginx() { apt_install nginx "install nginx (on PATH), e.g. brew install nginx"; }

find_nginx() {
    command -v nginx 2>/dev/null && return 0
    [ -x /usr/sbin/nginx ] && { echo /usr/sbin/nginx; return 0; }
    return 1
}

# shellcheck source=lib/free-port.sh
source "$root/scripts/lib/free-port.sh"

# A CA valid for a day and a server certificate it signs, naming 127.0.0.1 and localhost.
make_certificates() {
    local dir="$1"
    openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=ObjectSync test CA" \
        -keyout "$dir/ca.key" -out "$dir/ca.pem" \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$dir/server.key" -out "$dir/server.csr" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$dir/server.ext"
    openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial \
        -days 1 -extfile "$dir/server.ext" -out "$dir/server.pem" 2>/dev/null
}

# deploy/nginx-syncd.conf with this run's upstream ports, address and certificates; the plain
# HTTP server block (the redirect to HTTPS) is left out.
site_configuration() {
    local dir="$1" port="$2"; shift 2
    local servers="" upstream
    for upstream in "$@"; do servers="$servers    server 127.0.0.1:$upstream max_fails=3 fail_timeout=5s;\\n"; done
    awk -v servers="$servers" -v port="$port" -v dir="$dir" '
        /^server \{/ { blocks++ }
        blocks >= 2 { next }
        /^ *server 127\.0\.0\.1:/ { if (!printed) { printf "%s", servers; printed = 1 }; next }
        /^ *listen \[::\]/ { next }
        /^ *listen 443/ { print "    listen 127.0.0.1:" port " ssl;"; next }
        /^ *ssl_certificate / { print "    ssl_certificate " dir "/server.pem;"; next }
        /^ *ssl_certificate_key / { print "    ssl_certificate_key " dir "/server.key;"; next }
        { print }
    ' "$template"
}

start() {
    [ "$#" -gt 0 ] || die "usage: scripts/nginx.sh start PORT..."
    stop
    local binary
    binary="$(find_nginx)" || { install_nginx; binary="$(find_nginx)" || die "nginx not found after installing it"; }
    local dir port
    dir="$(mktemp -d "${TMPDIR:-/tmp}/objectsync-nginx.XXXXXX")"
    # nginx's workers drop to an unprivileged user when started as root: they must reach the files.
    chmod 755 "$dir"
    mkdir -p "$dir/temp"
    chmod 1777 "$dir/temp"
    make_certificates "$dir"
    port="$(free_port)"
    site_configuration "$dir" "$port" "$@" >"$dir/syncd.conf"
    cat >"$dir/nginx.conf" <<CONF
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 1024; }
http {
    access_log $dir/access.log;
    client_body_temp_path $dir/temp/body;
    proxy_temp_path $dir/temp/proxy;
    fastcgi_temp_path $dir/temp/fastcgi;
    uwsgi_temp_path $dir/temp/uwsgi;
    scgi_temp_path $dir/temp/scgi;
    include $dir/syncd.conf;
}
CONF
    "$binary" -t -q -p "$dir" -c "$dir/nginx.conf" 2>"$dir/check.log" || { cat "$dir/check.log" >&2; die "the configuration is invalid"; }
    "$binary" -p "$dir" -c "$dir/nginx.conf" || { cat "$dir/error.log" >&2; die "nginx did not start"; }
    mkdir -p "$state"
    echo "$dir" >"$state/directory"
    echo "https://127.0.0.1:$port" >"$state/url"
    cat "$state/url"
    echo "$dir/ca.pem"
}

stop() {
    [ -f "$state/directory" ] || return 0
    local dir pid
    dir="$(cat "$state/directory")"
    if [ -f "$dir/nginx.pid" ]; then
        pid="$(cat "$dir/nginx.pid")"
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
    rm -rf "$dir"
    rm -f "$state/directory" "$state/url"
}

case "${1:-}" in
    start) shift; start "$@" ;;
    stop) stop ;;
    *) echo "usage: scripts/nginx.sh start PORT...|stop" >&2; exit 2 ;;
esac
