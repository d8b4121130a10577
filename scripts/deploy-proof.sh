#!/usr/bin/env bash
# The deployment's end-to-end proof: three syncd instances on one PostgreSQL database behind
# nginx terminating TLS (deploy/nginx-syncd.conf, through scripts/nginx.sh), eight `sync` clients
# editing and syncing over HTTPS for a bounded time while one instance is SIGKILLed with pushes in
# flight (one of them, from a ninth client talking to that instance directly, certainly) and
# restarted. Then every store (and one made from a snapshot) must hold the same objects, the
# shared log every change set exactly once, and every client exactly the change sets of the log
# (a skipped cursor would lose some).
#
#   scripts/deploy-proof.sh BIN_DIR    BIN_DIR holds syncd and sync (e.g. .build/debug)
#
# The database is $OBJECTSYNC_POSTGRES_URL (scripts/postgres.sh start prints one). The clients
# trust the test's certificate authority through `sync init --ca-file`, as a deployment behind a
# private CA would. DEPLOY_PROOF_SECONDS sets how long the clients edit (default 15);
# DEPLOY_PROOF_KEEP=1 keeps the stores and instance logs for inspection.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
die() { echo "deploy-proof: $*" >&2; exit 1; }

[ "$#" -eq 1 ] || die "usage: scripts/deploy-proof.sh BIN_DIR"
bin="$(cd "$1" && pwd)"
database="${OBJECTSYNC_POSTGRES_URL:-}"
[ -n "$database" ] || die "set OBJECTSYNC_POSTGRES_URL (scripts/postgres.sh start prints one)"
seconds="${DEPLOY_PROOF_SECONDS:-15}"
clients=8
work="$(mktemp -d "${TMPDIR:-/tmp}/objectsync-deploy-proof.XXXXXX")"
declare -a ports pids
cleanup() {
    for pid in "${pids[@]:-}"; do [ -n "$pid" ] && kill "$pid" 2>/dev/null || true; done
    "$root/scripts/nginx.sh" stop || true
    [ -n "${DEPLOY_PROOF_KEEP:-}" ] && echo "deploy-proof: kept $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT

# shellcheck source=lib/free-port.sh
source "$root/scripts/lib/free-port.sh"

start_instance() {
    local index="$1"
    "$bin/syncd" serve --database "$database" --data "$work/instance-$index" --port "${ports[$index]}" \
        >>"$work/instance-$index.log" 2>&1 &
    pids[$index]=$!
    for _ in $(seq 1 300); do
        grep -q "listening" "$work/instance-$index.log" 2>/dev/null && return 0
        sleep 0.1
    done
    cat "$work/instance-$index.log" >&2
    die "syncd instance $index did not start"
}

for index in 0 1 2; do ports[$index]="$(free_port)"; start_instance "$index"; done
{ read -r url; read -r ca; } < <("$root/scripts/nginx.sh" start "${ports[@]}")
[ -n "${url:-}" ] && [ -f "${ca:-}" ] || die "nginx did not start"
dataset="proof-$RANDOM$RANDOM"
export SYNC_TOKEN
SYNC_TOKEN="$("$bin/syncd" token add --dataset "$dataset" --database "$database" 2>/dev/null)"

client() { "$bin/sync" --store "$work/client-$1.sqlite" "${@:2}"; }

# Without the CA a client is refused by TLS, not let through.
"$bin/sync" --store "$work/untrusting.sqlite" init --schema "$root/Protocol/examples/boards-schema.json" --server "$url" --dataset "$dataset" >/dev/null
if "$bin/sync" --store "$work/untrusting.sqlite" pull >/dev/null 2>"$work/untrusting.errors"; then
    die "a client without --ca-file synced with a server whose certificate the system does not trust"
fi
grep -q -i "certificate" "$work/untrusting.errors" || die "a client without --ca-file failed for another reason: $(cat "$work/untrusting.errors")"

# The clients share a board: the first creates it, the others pull it before editing.
for index in $(seq 1 $clients); do
    client "$index" init --schema "$root/Protocol/examples/boards-schema.json" --server "$url" --dataset "$dataset" --ca-file "$ca" >/dev/null
done
board="$(client 1 put Board title=Shared)"
client 1 push >/dev/null
for index in $(seq 2 $clients); do client "$index" pull >/dev/null; done
# One more client talks to the second instance directly (plain HTTP, no nginx): its push is the
# one in flight when that instance is killed.
direct=$((clients + 1))
client "$direct" init --schema "$root/Protocol/examples/boards-schema.json" --server "http://127.0.0.1:${ports[1]}" --dataset "$dataset" >/dev/null
client "$direct" pull >/dev/null

# Each client: a new card per round, every other round an edit of the shared board (concurrent
# last-writer-wins edits), then a full sync. A sync refused while an instance is down is retried
# by the next round (the CLI retries network errors and 5xx itself too).
edit_loop() {
    local index="$1" round=0 end=$((SECONDS + seconds))
    while [ "$SECONDS" -lt "$end" ]; do
        round=$((round + 1))
        client "$index" put Card "text=client-$index-$round" "points=$round" >/dev/null
        [ $((round % 2)) -eq 0 ] && client "$index" put Board "$board" "title=client-$index-$round" >/dev/null
        client "$index" pull --push >/dev/null 2>>"$work/client-$index.errors" || echo "round $round failed" >>"$work/client-$index.errors"
    done
}
declare -a loops
for index in $(seq 1 $clients); do edit_loop "$index" & loops+=($!); done

# The second instance dies a third of the way through with pushes in flight: it is frozen
# (SIGSTOP), the direct client starts a push to it (and nginx hands it requests of the others),
# a second later it is SIGKILLed, and it comes back with the same data directory a few seconds
# later. The direct client's push was sent and never answered; nginx logs the requests the kill
# cut off and retries them on another instance, as deploy/nginx-syncd.conf allows.
sleep $((seconds / 3))
client "$direct" put Card "text=in flight at the kill" "points=0" >/dev/null
kill -STOP "${pids[1]}"
client "$direct" pull --push >/dev/null 2>"$work/direct.errors" &
in_flight=$!
sleep 1
kill -KILL "${pids[1]}"
wait "${pids[1]}" 2>/dev/null || true
killed_requests="$(grep -c 'POST /v1/datasets' "$work/instance-1.log" || true)"
if wait "$in_flight"; then in_flight_result="answered after a retry"; else in_flight_result="refused, to be sent again"; fi
cut_off="$(grep -c -E 'upstream prematurely closed|Connection reset by peer|recv\(\) failed' "$(dirname "$ca")/error.log" 2>/dev/null || true)"
sleep 3
start_instance 1
client "$direct" pull --push >/dev/null
for loop in "${loops[@]}"; do wait "$loop"; done

# Everyone pushes what is left, then everyone pulls what the others pushed.
for index in $(seq 1 $direct); do client "$index" pull --push >/dev/null; done
for index in $(seq 1 $direct); do client "$index" pull >/dev/null; done
# A new client starts from a snapshot over HTTPS (through whichever instance nginx picks).
"$bin/sync" --store "$work/snapshot.sqlite" init --snapshot --server "$url" --dataset "$dataset" --ca-file "$ca" >/dev/null
"$bin/sync" --store "$work/snapshot.sqlite" list Board >"$work/snapshot.boards"
"$bin/sync" --store "$work/snapshot.sqlite" list Card >"$work/snapshot.cards"

for index in $(seq 1 $direct); do
    client "$index" list Board >"$work/client-$index.boards"
    client "$index" list Card >"$work/client-$index.cards"
    client "$index" log | awk '{print $1}' | sort >"$work/client-$index.dots"
    client "$index" log | awk '$1 ~ /^'"$(client "$index" status | awk '/replica/ {print $NF; exit}')"'/ && $3 != "acknowledged" {print}' >"$work/client-$index.unacknowledged"
done

python3 - "$url" "$ca" "$dataset" "$SYNC_TOKEN" "$work" "$direct" <<'PY'
import json, ssl, sys, urllib.request
url, ca, dataset, token, work, clients = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6])
context = ssl.create_default_context(cafile=ca)
dots, after, digest = [], "0", None
while True:
    query = f"after={after}&limit=500" + (f"&afterDigest={digest}" if digest else "")
    request = urllib.request.Request(f"{url}/v1/datasets/{dataset}/changesets?{query}",
                                     headers={"Authorization": f"Bearer {token}"})
    page = json.load(urllib.request.urlopen(request, context=context))
    dots += [f"{c['replica']}:{c['seq']}".lower() for c in page["changeSets"]["changeSets"]]
    after, digest = page["cursor"], page.get("cursorDigest")
    if not page["more"]:
        break
failures = []
if len(dots) != len(set(dots)):
    failures.append(f"the log holds {len(dots) - len(set(dots))} change sets more than once")
if int(after) != len(dots):
    failures.append(f"the log ends at cursor {after} but holds {len(dots)} change sets")
log = set(dots)
reference = None
for index in range(1, clients + 1):
    held = {line.strip().lower() for line in open(f"{work}/client-{index}.dots") if ":" in line}
    if held != log:
        failures.append(f"client {index} holds {len(held - log)} change sets the log lacks and lacks {len(log - held)} of the log's")
    unacknowledged = open(f"{work}/client-{index}.unacknowledged").read().strip()
    if unacknowledged:
        failures.append(f"client {index} has change sets the server never acknowledged: {unacknowledged[:200]}")
    state = open(f"{work}/client-{index}.boards").read() + open(f"{work}/client-{index}.cards").read()
    if reference is None:
        reference = state
    elif state != reference:
        failures.append(f"client {index}'s objects differ from client 1's")
if reference is not None and reference.count("in flight at the kill") != 1:
    failures.append("the card pushed while the instance was killed is not on the clients exactly once")
if open(f"{work}/snapshot.boards").read() + open(f"{work}/snapshot.cards").read() != reference:
    failures.append("a store made from a snapshot holds other objects than the clients")
for failure in failures:
    print("deploy-proof: " + failure, file=sys.stderr)
print(f"deploy-proof: {len(dots)} change sets in the log, {clients} clients and a snapshot identical" if not failures else "", file=sys.stderr)
sys.exit(1 if failures else 0)
PY
echo "deploy-proof: passed (3 instances behind nginx over TLS, $clients clients for ${seconds}s, instance 2 killed after answering $killed_requests pushes, with a direct push in flight ($in_flight_result) and $cut_off requests through nginx cut off, and restarted)" >&2
