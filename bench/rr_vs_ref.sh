#!/usr/bin/env bash
# Benchmark (not a test): the round trip of one `mtuperf rr` client against the
# smallest C loop that does the same (bench/udp_rr_ref.c), on loopback, both ends
# pinned to one CPU (`rr --cpu C --agent-cpu C`; the reference's two ends on C), the
# reference run twice: its ends as two threads of one process, and as two processes
# (as mtuperf's client and agent are).
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
ref() { "$REF" "$T" "$CPU" 168 8232 "$REF_PORT" "$1" | awk '{print $2, $4}'; }

mt_p50=(); mt_mean=(); ref_p50=(); ref_mean=(); refp_p50=(); refp_mean=()
for i in $(seq 1 "$ROUNDS"); do
    if [ $((i % 2)) = 1 ]; then
        a=$(mt); b=$(ref thread); c=$(ref process)
    else
        c=$(ref process); b=$(ref thread); a=$(mt)
    fi
    read -r p m <<<"$a"; mt_p50+=("$p"); mt_mean+=("$m")
    read -r p m <<<"$b"; ref_p50+=("$p"); ref_mean+=("$m")
    read -r p m <<<"$c"; refp_p50+=("$p"); refp_mean+=("$m")
    echo "round $i: mtuperf rr p50 ${mt_p50[-1]} ns mean ${mt_mean[-1]} ns; C threads p50 ${ref_p50[-1]} ns mean ${ref_mean[-1]} ns; C processes p50 ${refp_p50[-1]} ns mean ${refp_mean[-1]} ns" >&2
done

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.0f", m}'; }
mp=$(median "${mt_p50[@]}"); rp=$(median "${ref_p50[@]}")
mm=$(median "${mt_mean[@]}"); rm_=$(median "${ref_mean[@]}")
pp=$(median "${refp_p50[@]}"); pm=$(median "${refp_mean[@]}")
ratio() { python3 -c "print(round($1/$2, 3))"; }
echo "medians over $ROUNDS rounds of ${T}s (loopback, 128 B request, 8 KiB block, both ends on CPU $CPU):"
echo "  p50:  mtuperf rr $mp ns   C threads $rp ns (ratio $(ratio "$mp" "$rp"))   C processes $pp ns (ratio $(ratio "$mp" "$pp"))"
echo "  mean: mtuperf rr $mm ns   C threads $rm_ ns (ratio $(ratio "$mm" "$rm_"))   C processes $pm ns (ratio $(ratio "$mm" "$pm"))"
