# free_port: prints a TCP port nothing listens on at 127.0.0.1 (source this file).
# Calls `die MESSAGE` (defined by the caller) when 50 random tries find none.

free_port() {
    local port
    for _ in $(seq 1 50); do
        port=$((20000 + RANDOM % 40000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return 0; fi
    done
    die "no free port found"
}
