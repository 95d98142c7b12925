#!/bin/bash
# BENCHMARKS.md §16 (issue 33): the watching agent's own cost. Starts a watching agent
# in node n1 of a cluster lab, checking PEERS (a file, one address a line) every
# EVERY, for SECONDS; prints its CPU (user+system clock ticks of the process, from
# /proc/PID/stat: the machine's other load is not counted), its RSS (now and peak),
# the checks and cycles it ran, and its threads' voluntary context switches.
#
#   M=target/release/mtuperf
#   $M lab up --name wb --scenario cluster --nodes 64 --nets 2
#   $M keygen -o /tmp/wb.key && $M lab serve --name wb -- --key-file /tmp/wb.key
#   for n in 1 2; do for i in $(seq 2 33); do echo 198.19.$n.$i; done; done > /tmp/peers64
#   bench/watch_budget.sh $M wb /tmp/wb.key /tmp/peers64 5m 620     # two cycles or three
#   bench/watch_budget.sh $M wb /tmp/wb.key /tmp/peers64 10s 120    # per-check cost
#   $M lab down --name wb
set -eu
M=$(realpath "$1") L=$2 KEY=$3 PEERS=$4 EVERY=$5 SECS=$6
shift 6
ns=mtlab-$L-n1
log=$(mktemp)
ip netns exec "$ns" "$M" --key-file "$KEY" --no-store serve --bind 127.0.0.1 --port 0 \
  --metrics 127.0.0.1:0 --watch-file "$PEERS" --watch-every "$EVERY" "$@" 2>"$log" &
w=$!
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
vcs() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^voluntary_ctxt_switches/ {s += $2} END {print s}'; }
sleep 0.2
t0=$(ticks $w) v0=$(vcs $w) s0=$(date +%s.%N)
sleep "$SECS"
t1=$(ticks $w) v1=$(vcs $w) s1=$(date +%s.%N)
rss=$(awk '/^VmRSS/ {print $2}' /proc/$w/status)
hwm=$(awk '/^VmHWM/ {print $2}' /proc/$w/status)
maddr=$(grep -o 'http://[^ ]*/metrics' "$log" | head -1)
body=$(ip netns exec "$ns" curl -s "$maddr")
kill -TERM $w
wait $w || true
checks=$(grep -c ' watch: ' "$log" || true)
ok=$(grep -c ' watch: .*: ok (' "$log" || true)
cycles=$(echo "$body" | awk '/^mtuperf_watch_checks_total/ {s += $2} END {print s}')
dur=$(echo "$body" | awk '/^mtuperf_watch_cycle_duration_seconds / {print $2}')
factor=$(echo "$body" | awk '/^mtuperf_watch_rate_factor / {print $2}')
pressure=$(echo "$body" | awk '/^mtuperf_watch_host_cpu_pressure_ratio/ {print $1, $2}')
wall=$(echo "$s1 - $s0" | bc -l)
peers=$(grep -c . "$PEERS")
echo "peers $peers every $EVERY over ${wall:0:6} s: cpu $((t1 - t0)) ticks ($(echo "($t1 - $t0) / $wall" | bc -l | cut -c1-6) % of a core)," \
     "rss ${rss} KiB (peak ${hwm} KiB), checks $checks (ok $ok; counted $cycles)," \
     "last cycle ${dur} s, rate factor $factor ($pressure), voluntary switches $((v1 - v0))"
grep -v ' watch: .*: ok (' "$log" | grep -v 'listening on\|limits:\|metrics served' | head -5 || true
rm -f "$log"
