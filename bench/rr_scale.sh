#!/usr/bin/env bash
# Benchmark (not a test): mtuperf rr closed loop at 16 to 4096 clients on loopback,
# UDP and TCP, 8 KiB blocks, this build against a previous one, alternated step by
# step (old then new at each load) so background load hits both alike; prints the
# median of each figure over the rounds (issue 20). The order flips every round.
#
#   NEW=target/release/mtuperf OLD=/tmp/mtuperf-base bench/rr_scale.sh
#   ROUNDS=3 T=3 CLIENTS="16 256 1024 2048 4096" PROTOS="udp tcp" bench/rr_scale.sh
#   # in a lab (mtuperf lab up --name b --scenario std): agents in the std host
#   TARGET=198.18.1.2 AGENT_NS=mtlab-b-std CLIENT_NS=mtlab-b-client NEW=... OLD=... bench/rr_scale.sh
#
# Each build talks to its own agent (same build; the protocol versions differ).
# Figures per step (client and agent on the same host, so "system" CPU is the whole
# machine's as seen by each end over its own interval):
#   blocks/s          blocks received by the client per second of its measured phase
#   client/agent sys  system-wide CPU busy per block (µs), /proc/stat
#   client/agent proc the process's own CPU per block (µs), getrusage(RUSAGE_SELF)
#                     deltas over each end's measured phase: comparable across builds
#   client/agent thr  (new build) CPU of the threads that carried the traffic per
#                     block (µs), RUSAGE_THREAD, as `rr` now reports it; "user": the
#                     user-space part alone (mtuperf's code, without the kernel's)
set -euo pipefail

NEW=${NEW:-target/release/mtuperf}
OLD=${OLD:-}
ROUNDS=${ROUNDS:-3}
T=${T:-3}
CLIENTS=${CLIENTS:-16 256 1024 2048 4096}
PROTOS=${PROTOS:-udp tcp}
TARGET=${TARGET:-127.0.0.1}
AGENT_NS=${AGENT_NS:-}
CLIENT_NS=${CLIENT_NS:-}
NEW_PORT=${NEW_PORT:-17891}
OLD_PORT=${OLD_PORT:-17892}

command -v python3 >/dev/null || { echo "missing python3" >&2; exit 6; }
[ -x "$NEW" ] || { echo "build first: cargo build --release -p mtuperf ($NEW missing)" >&2; exit 6; }
ulimit -n "$(ulimit -Hn)"

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
# exec: a backgrounded in_ns is then the agent itself, so the EXIT trap's kill
# reaches it (without exec it killed only the subshell and the agent lived on).
in_ns() { local ns=$1; shift; if [ -n "$ns" ]; then exec ip netns exec "$ns" "$@"; else exec "$@"; fi; }
in_ns "$AGENT_NS" "$NEW" serve --bind "$TARGET" --port "$NEW_PORT" 2>/dev/null & pids+=($!)
builds=(new)
if [ -n "$OLD" ]; then
    in_ns "$AGENT_NS" "$OLD" serve --bind "$TARGET" --port "$OLD_PORT" 2>/dev/null & pids+=($!)
    builds=(old new)
fi
sleep 1

# One step: prints "blocks/s client_sys agent_sys client_proc agent_proc client_thr
# agent_thr client_thr_user agent_thr_user".
step() {
    local bin=$1 port=$2 proto=$3 n=$4
    local doc
    # A failed step (e.g. a handshake timing out on a loaded host) is a row of nan.
    doc=$(in_ns "$CLIENT_NS" "$bin" --no-store rr "$TARGET:$port" --proto "$proto" --clients "$n" --time "${T}s" --json) ||
        { echo "nan nan nan nan nan nan nan nan nan"; return; }
    printf '%s' "$doc" |
        python3 -c '
import json, sys
s = json.load(sys.stdin)["steps"][0]
r, m = s["result"], s["metrics"]
blocks = r["client"]["counts"]["blocks"]
served = r["agent"]["responses"]
def proc(end, n):
    a, b = end["after"]["cpu"]["process"], end["before"]["cpu"]["process"]
    d = a["user_ns"] + a["system_ns"] - b["user_ns"] - b["system_ns"]
    return d / 1000 / n if n else float("nan")
def user(end, n):
    c = end.get("cpu")
    return c["user_ns"] / 1000 / n if c and n else None
f = lambda v: "nan" if v is None else "%.2f" % v
print("%.0f" % m["blocks_per_s"], f(m["client"]["cpu_us_per_block"]), f(m["agent"]["cpu_us_per_block"]),
      f(proc(r["client"], blocks)), f(proc(r["agent"], served)),
      f(m["client"].get("tool_cpu_us_per_block")), f(m["agent"].get("tool_cpu_us_per_block")),
      f(user(r["client"], blocks)), f(user(r["agent"], served)))
'
}

out=$(mktemp)
for round in $(seq 1 "$ROUNDS"); do
    for proto in $PROTOS; do
        for n in $CLIENTS; do
            # Odd rounds old first, even rounds new first: neither build always
            # follows the other's teardown of thousands of connections.
            order=("${builds[@]}")
            if [ $((round % 2)) -eq 0 ] && [ "${#builds[@]}" -eq 2 ]; then order=(new old); fi
            for b in "${order[@]}"; do
                if [ "$b" = new ]; then bin=$NEW port=$NEW_PORT; else bin=$OLD port=$OLD_PORT; fi
                line=$(step "$bin" "$port" "$proto" "$n")
                echo "$b $proto $n $line" >>"$out"
                echo "round $round: $b $proto $n clients: $line" >&2
            done
        done
    done
done

echo "medians over $ROUNDS rounds of ${T}s ($TARGET${AGENT_NS:+ in $AGENT_NS}, 8 KiB blocks, 128 B requests, closed loop, default threads/workers):"
python3 - "$out" <<'EOF'
import sys, statistics
rows = {}
for line in open(sys.argv[1]):
    b, proto, n, *v = line.split()
    rows.setdefault((b, proto, int(n)), []).append([float(x) for x in v])
hdr = ("build", "proto", "clients", "blocks/s", "cli sys", "agt sys", "cli proc", "agt proc",
       "cli thr", "agt thr", "cli thr user", "agt thr user")
print("| " + " | ".join(hdr) + " |")
print("|" + "---|" * len(hdr))
for (b, proto, n), vals in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][2], kv[0][0])):
    med = [statistics.median([x for x in col if x == x] or [float("nan")]) for col in zip(*vals)]
    cells = ["%.0f" % med[0]] + ["-" if x != x else "%.2f" % x for x in med[1:]]
    print("| %s | %s | %d | %s |" % (b, proto, n, " | ".join(cells)))
EOF
rm -f "$out"
