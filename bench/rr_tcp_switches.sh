#!/usr/bin/env bash
# Benchmark (not a test): what `rr --proto tcp` and bench/tcp_rr_ref.c do per block at
# N clients (2 threads per end), counted by the kernel over 2 s in the middle of a 6 s
# run of each: context switches, epoll_wait calls, recvfrom/sendto, packets through the
# loopback device. Needs perf (Debian's linux-perf) and root.
#
#   cc -O2 -o /tmp/tcp_rr_ref bench/tcp_rr_ref.c -lpthread
#   BIN=target/release/mtuperf N=4096 bench/rr_tcp_switches.sh
set -euo pipefail
BIN=${BIN:-target/release/mtuperf}; REF=${REF:-/tmp/tcp_rr_ref}; N=${N:-4096}; PORT=${PORT:-17893}
EV=context-switches,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_recvfrom,syscalls:sys_enter_sendto,net:net_dev_queue
ulimit -n "$(ulimit -Hn)"
out=$(mktemp -d)
"$BIN" serve --bind 127.0.0.1 --port "$PORT" 2>/dev/null & agent=$!
trap 'kill "$agent" 2>/dev/null || true; rm -rf "$out"' EXIT
sleep 1
"$BIN" --no-store rr "127.0.0.1:$PORT" --proto tcp --threads 2 --workers 2 --clients "$N" --time 6s --json >"$out/mt.json" 2>/dev/null & c=$!
sleep 3; perf stat -a -x, -e "$EV" -o "$out/mt.txt" -- sleep 2; wait "$c"
kill "$agent"
"$REF" "$N" 6 2 >"$out/ref.txt" & r=$!
sleep 3; perf stat -a -x, -e "$EV" -o "$out/ref.txt.stat" -- sleep 2; wait "$r"
m=$(python3 -c "import json; print(json.load(open('$out/mt.json'))['steps'][0]['metrics']['blocks_per_s'])")
r=$(awk '{print $2}' "$out/ref.txt")
echo "blocks/s: mtuperf $m, reference $r"
paste -d, <(grep -v '^#' "$out/mt.txt" | grep . | cut -d, -f1,3) <(grep -v '^#' "$out/ref.txt.stat" | grep . | cut -d, -f1) |
    awk -F, -v m="$m" -v r="$r" '{printf "%-34s mtuperf %5.2f per block   reference %5.2f per block\n", $2, $1/(m*2), $3/(r*2)}'
