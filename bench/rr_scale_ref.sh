#!/usr/bin/env bash
# Benchmark (not a test): how much of rr TCP's growing CPU per block from 16 to 4096
# clients is the kernel's. At each client count it runs, alternated (the order flips
# every round), `mtuperf rr --proto tcp --threads P --workers P` on loopback and
# bench/tcp_rr_ref.c, the smallest program doing the same closed loop (P threads per
# end, edge-triggered epoll, no clocks, histogram or checks), and prints the medians.
# PAIRS=1: one unpinned thread per end; PAIRS=2 (this host's CPUs): mtuperf's default
# on 2 CPUs (TCP steering: each connection's two ends on one CPU) against the
# reference laid out the same way.
#
#   blocks/s  and the CPU per block (µs, user + system) of the threads carrying the
#   traffic on each end: mtuperf's as `rr` reports it (tool_cpu_us_per_block), the
#   reference's from RUSAGE_THREAD.
#
#   cc -O2 -o /tmp/tcp_rr_ref bench/tcp_rr_ref.c -lpthread
#   BIN=target/release/mtuperf REF=/tmp/tcp_rr_ref ROUNDS=3 T=3 PAIRS=2 bench/rr_scale_ref.sh
set -euo pipefail

BIN=${BIN:-target/release/mtuperf}
REF=${REF:-/tmp/tcp_rr_ref}
ROUNDS=${ROUNDS:-3}
T=${T:-3}
CLIENTS=${CLIENTS:-16 256 1024 2048 4096}
PORT=${PORT:-17893}
PAIRS=${PAIRS:-1}

command -v python3 >/dev/null || { echo "missing python3" >&2; exit 6; }
[ -x "$BIN" ] || { echo "build first: cargo build --release -p mtuperf ($BIN missing)" >&2; exit 6; }
[ -x "$REF" ] || { echo "build the reference first: cc -O2 -o $REF bench/tcp_rr_ref.c -lpthread" >&2; exit 6; }
ulimit -n "$(ulimit -Hn)"

"$BIN" serve --bind 127.0.0.1 --port "$PORT" 2>/dev/null &
agent=$!
# Waited for, so a run right after this one can bind the same port.
trap 'kill $agent 2>/dev/null; wait $agent 2>/dev/null || true' EXIT
sleep 1
kill -0 "$agent" 2>/dev/null || { echo "the agent did not start on 127.0.0.1:$PORT" >&2; exit 6; }

# One step of mtuperf: "blocks/s client_us agent_us" (nan on failure).
mtuperf_step() {
    local doc
    doc=$("$BIN" --no-store rr "127.0.0.1:$PORT" --proto tcp --threads "$PAIRS" --workers "$PAIRS" \
        --clients "$1" --time "${T}s" --json 2>/dev/null) || { echo "nan nan nan"; return; }
    printf '%s' "$doc" | python3 -c '
import json, sys
m = json.load(sys.stdin)["steps"][0]["metrics"]
print("%.0f %.2f %.2f" % (m["blocks_per_s"], m["client"]["tool_cpu_us_per_block"],
                          m["agent"]["tool_cpu_us_per_block"]))'
}

ref_step() {
    local r
    r=$("$REF" "$1" "$T" "$PAIRS") || { echo "nan nan nan"; return; }
    echo "$r" | awk '{print $2, $3, $4}'
}

out=$(mktemp)
for round in $(seq 1 "$ROUNDS"); do
    for n in $CLIENTS; do
        order=(ref mtuperf)
        if [ $((round % 2)) -eq 0 ]; then order=(mtuperf ref); fi
        for w in "${order[@]}"; do
            line=$("${w}_step" "$n")
            echo "$w $n $line" >>"$out"
            echo "round $round: $w $n connections: $line" >&2
        done
    done
done

echo "medians over $ROUNDS rounds of ${T}s (loopback TCP, 8 KiB blocks, 128 B requests, closed loop, $PAIRS thread(s) per end):"
python3 - "$out" <<'EOF'
import sys, statistics
rows = {}
for line in open(sys.argv[1]):
    w, n, *v = line.split()
    rows.setdefault((w, int(n)), []).append([float(x) for x in v])
print("| program | clients | blocks/s | client µs/block | server µs/block |")
print("|---|---|---|---|---|")
for (w, n), vals in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][1])):
    med = [statistics.median([x for x in col if x == x] or [float("nan")]) for col in zip(*vals)]
    print("| %s | %d | %.0f | %.2f | %.2f |" % (w, n, *med))
EOF
rm -f "$out"
