#!/usr/bin/env bash
# Benchmark (not a test): two builds' `rr` round trip, one client, both ends on one
# CPU, alternated round by round (order flipped each round) with the two-process C
# loop (bench/udp_rr_ref.c) beside them; each build runs its own agent. Prints each
# round's p50 and mean (ns); take the medians.
#
#   cc -O2 -o /tmp/udp_rr_ref bench/udp_rr_ref.c -lpthread
#   A=/tmp/mtuperf-before B=target/release/mtuperf ROUNDS=9 T=3 CPU=1 bench/rr_ab.sh
set -euo pipefail
A=${A:?the first build}; B=${B:?the second build}
REF=${REF:-/tmp/udp_rr_ref}; T=${T:-3}; CPU=${CPU:-1}; ROUNDS=${ROUNDS:-9}
"$A" serve --bind 127.0.0.1 --port 17881 2>/dev/null & a1=$!
"$B" serve --bind 127.0.0.1 --port 17882 2>/dev/null & a2=$!
trap 'kill "$a1" "$a2" 2>/dev/null || true' EXIT
sleep 1
mt() {
    "$1" --no-store rr "127.0.0.1:$2" --clients 1 --time "${T}s" --cpu "$CPU" --agent-cpu "$CPU" --json |
        python3 -c "import json,sys; d=json.load(sys.stdin)['steps'][0]['result']['client']['latency']; print(d['p50'], round(d['mean']))"
}
ref() { "$REF" "$T" "$CPU" 168 8232 17991 process | awk '{print $2, $4}'; }
for i in $(seq 1 "$ROUNDS"); do
    if [ $((i % 2)) = 1 ]; then a=$(mt "$A" 17881); b=$(mt "$B" 17882); c=$(ref)
    else c=$(ref); b=$(mt "$B" 17882); a=$(mt "$A" 17881); fi
    echo "round $i: A p50/mean $a  B $b  C processes $c"
done
