#!/usr/bin/env bash
# Benchmark (not a test): the round trip of one `mtuperf rr` client against the
# smallest C loop that does the same (bench/udp_rr_ref.c), on loopback, both ends
# pinned to one CPU (`rr --cpu C --agent-cpu C`; the reference's two threads on C).
# Round by round, the order flipped each round, so background load hits both alike;
# prints each round and the medians of p50 and mean, and their ratio (issue 33's goal:
# within 3%).
#
#   cc -O2 -o /tmp/udp_rr_ref bench/udp_rr_ref.c -lpthread
#   BIN=target/release/mtuperf ROUNDS=7 T=3 CPU=1 bench/rr_vs_ref.sh
set -euo pipefail

BIN=${BIN:-target/release/mtuperf}
REF=${REF:-/tmp/udp_rr_ref}
ROUNDS=${ROUNDS:-7}
T=${T:-3}
CPU=${CPU:-1}
PORT=${PORT:-17881}
REF_PORT=${REF_PORT:-17991}

[ -x "$BIN" ] || { echo "build first: cargo build --release -p mtuperf ($BIN missing)" >&2; exit 6; }
[ -x "$REF" ] || { echo "build first: cc -O2 -o $REF bench/udp_rr_ref.c -lpthread" >&2; exit 6; }
command -v python3 >/dev/null || { echo "missing python3" >&2; exit 6; }

"$BIN" serve --bind 127.0.0.1 --port "$PORT" 2>/dev/null &
agent=$!
trap 'kill "$agent" 2>/dev/null || true' EXIT
sleep 1

mt() {
    "$BIN" --no-store rr "127.0.0.1:$PORT" --clients 1 --time "${T}s" \
        --cpu "$CPU" --agent-cpu "$CPU" --json |
        python3 -c "import json,sys; d=json.load(sys.stdin)['steps'][0]['result']['client']['latency']; print(d['p50'], round(d['mean']))"
}
ref() { "$REF" "$T" "$CPU" 168 8232 "$REF_PORT" | awk '{print $2, $4}'; }

mt_p50=(); mt_mean=(); ref_p50=(); ref_mean=()
for i in $(seq 1 "$ROUNDS"); do
    if [ $((i % 2)) = 1 ]; then a=$(mt); b=$(ref); else b=$(ref); a=$(mt); fi
    read -r p m <<<"$a"; mt_p50+=("$p"); mt_mean+=("$m")
    read -r p m <<<"$b"; ref_p50+=("$p"); ref_mean+=("$m")
    echo "round $i: mtuperf rr p50 ${mt_p50[-1]} ns mean ${mt_mean[-1]} ns; C loop p50 ${ref_p50[-1]} ns mean ${ref_mean[-1]} ns" >&2
done

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.0f", m}'; }
mp=$(median "${mt_p50[@]}"); rp=$(median "${ref_p50[@]}")
mm=$(median "${mt_mean[@]}"); rm_=$(median "${ref_mean[@]}")
echo "medians over $ROUNDS rounds of ${T}s (loopback, 128 B request, 8 KiB block, both ends on CPU $CPU):"
echo "  p50:  mtuperf rr $mp ns   C loop $rp ns   ratio $(python3 -c "print(round($mp/$rp, 3))")"
echo "  mean: mtuperf rr $mm ns   C loop $rm_ ns   ratio $(python3 -c "print(round($mm/$rm_, 3))")"
