# free_port: prints a TCP port nothing listens on at 127.0.0.1 (source this file).
# Calls `die MESSAGE` (defined by the caller) when 50 random tries find none.
#
# The port is chosen below the kernel's range for outgoing connections: a port from that range
# can be taken, between this choice and the server's bind, by any connection the machine opens
# meanwhile (syncd's database connections, the clients of a test), and nginx then fails with
# "Address already in use".

free_port() {
    local port low=32768
    if [ -r /proc/sys/net/ipv4/ip_local_port_range ]; then read -r low _ </proc/sys/net/ipv4/ip_local_port_range; fi
    # macOS hands out 49152-65535; a Linux range starting too low to leave room falls back to 20000-59999.
    [ "$(uname -s)" = "Darwin" ] && low=49152
    local span=$((low - 20000))
    [ "$span" -ge 1000 ] || span=40000
    for _ in $(seq 1 50); do
        port=$((20000 + RANDOM % span))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return 0; fi
    done
    die "no free port found"
}
