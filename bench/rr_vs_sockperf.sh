#!/usr/bin/env bash
# Benchmark (not a test): mtuperf rr against sockperf ping-pong --full-rtt (UDP) and
# iperf 2 --bounceback (TCP) on loopback, 8 KiB messages, alternating the tools round
# by round so background load hits both alike; prints the median of each figure.
#
#   bench/rr_vs_sockperf.sh            # ROUNDS=5 T=3 (seconds per run)
#   MTUPERF=target/release/mtuperf ROUNDS=7 T=5 bench/rr_vs_sockperf.sh
#
# Figures (all round trips, request sent -> whole answer received):
#   1-client p50: mtuperf rr udp (128 B request, 8192 B block) vs sockperf ping-pong
#                 -m 8192 --full-rtt (8192 B each way: sockperf echoes the request size)
#   blocks/s:     mtuperf rr udp with 64 clients vs sockperf's single-client maximum
#                 (ping-pong --mps=max, messages received / valid run time)
#   tcp mean:     mtuperf rr --proto tcp 1 client mean vs iperf --bounceback -l 8192
#                 --bounceback-period 0 (iperf prints only avg/min/max)
set -euo pipefail

BIN=${MTUPERF:-target/release/mtuperf}
ROUNDS=${ROUNDS:-5}
T=${T:-3}
MT_PORT=${MT_PORT:-17878}
SP_PORT=${SP_PORT:-17879}
IP_PORT=${IP_PORT:-17880}

for tool in sockperf iperf python3; do
    command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 6; }
done
[ -x "$BIN" ] || { echo "build first: cargo build --release -p mtuperf ($BIN missing)" >&2; exit 6; }

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
"$BIN" serve --bind 127.0.0.1 --port "$MT_PORT" 2>/dev/null & pids+=($!)
sockperf server -i 127.0.0.1 -p "$SP_PORT" >/dev/null 2>&1 & pids+=($!)
iperf -s -p "$IP_PORT" >/dev/null 2>&1 & pids+=($!)
sleep 1

rr() { "$BIN" --no-store rr "127.0.0.1:$MT_PORT" --time "${T}s" --json "$@"; }
jq_py() { python3 -c "import json,sys; d=json.load(sys.stdin)['steps'][0]; print($1)"; }

mt_p50=(); sp_p50=(); mt_64=(); sp_max=(); mt_tcp=(); ip_tcp=()
for i in $(seq 1 "$ROUNDS"); do
    mt_p50+=("$(rr --clients 1 | jq_py "round(d['result']['client']['latency']['p50']/1000, 1)")")
    sp_p50+=("$(sockperf ping-pong -i 127.0.0.1 -p "$SP_PORT" -m 8192 --full-rtt -t "$T" 2>&1 \
        | awk '/percentile 50.000/ {print $NF}')")
    mt_64+=("$(rr --clients 64 | jq_py "round(d['metrics']['blocks_per_s'])")")
    sp_max+=("$(sockperf ping-pong -i 127.0.0.1 -p "$SP_PORT" -m 8192 --mps=max -t "$T" 2>&1 \
        | sed -n 's/.*\[Valid Duration\] RunTime=\([0-9.]*\) sec; SentMessages=[0-9]*; ReceivedMessages=\([0-9]*\).*/\2 \1/p' \
        | awk '{printf "%.0f\n", $1 / $2}')")
    mt_tcp+=("$(rr --proto tcp --clients 1 | jq_py "round(d['result']['client']['latency']['mean']/1000, 1)")")
    ip_tcp+=("$(iperf -c 127.0.0.1 -p "$IP_PORT" --bounceback -l 8192 --bounceback-period 0 -t "$T" -e 2>&1 \
        | awk '/ rps$/ {line=$0} END {split(line, a, "="); split(a[2], b, "/"); print b[1]*1000}')")
    echo "round $i: rr p50 ${mt_p50[-1]} us, sockperf p50 ${sp_p50[-1]} us, rr 64 clients ${mt_64[-1]} blocks/s, sockperf max ${sp_max[-1]} msg/s, rr tcp mean ${mt_tcp[-1]} us, iperf bb mean ${ip_tcp[-1]} us" >&2
done

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.1f", m}'; }
echo "medians over $ROUNDS rounds of ${T}s (loopback, 8 KiB):"
echo "  1-client UDP round trip p50: mtuperf rr $(median "${mt_p50[@]}") us   sockperf ping-pong --full-rtt $(median "${sp_p50[@]}") us"
echo "  UDP round trips/s: mtuperf rr 64 clients $(median "${mt_64[@]}") blocks/s   sockperf 1 client --mps=max $(median "${sp_max[@]}") msg/s"
echo "  1-client TCP round trip mean: mtuperf rr $(median "${mt_tcp[@]}") us   iperf --bounceback $(median "${ip_tcp[@]}") us"
