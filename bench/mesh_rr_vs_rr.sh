#!/bin/bash
# BENCHMARKS.md §12 (issue 30): the mesh's block test on one pair against `rr` alone
# on the same pair, alternated, 3 rounds; prints each round's p50 and p99 (ns),
# blocks, measured phase (ns) and lost blocks, with the load average around it.
#
#   M=target/release/mtuperf
#   $M lab up --name i30b --scenario cluster --nodes 3 --nets 1 --public && $M lab serve --name i30b
#   bench/mesh_rr_vs_rr.sh $M i30b 198.19.1      # the private network at 9000
#   bench/mesh_rr_vs_rr.sh $M i30b 198.19.100    # the public one at 1500
#   $M lab down --name i30b
set -eu
R=$1 L=$2 P=$3
ex() { "$R" lab exec --name "$L" n1 -- "$@"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
for i in 1 2 3; do
  l1=$(load)
  # The mesh with two nodes: n1 asks n2 in one round, n2 asks n1 in the next.
  m=$(ex "$R" --no-store mesh --json --net "$P.0/24" --tests rr --time 2s n1="$P.1" n2="$P.2" 2>/dev/null \
      | python3 -c 'import json,sys; d=json.load(sys.stdin); p=[p for p in d["pairs"] if p["from"]==0 and p["to"]==1][0]["rr"]; print(p["p50_ns"], p["p99_ns"], p["counts"]["blocks"], p["wall_ns"], p["counts"]["lost"])')
  l2=$(load)
  # rr alone as the mesh runs it: 8 KiB UDP blocks for 128 B requests, one client on
  # one thread, one serving thread, lost after 500 ms.
  r=$(ex "$R" --no-store rr "$P.2" --time 2s --workers 1 --threads 1 --timeout 500ms --json 2>/dev/null \
      | python3 -c 'import json,sys; d=json.load(sys.stdin); c=d["steps"][0]["result"]["client"]; print(c["latency"]["p50"], c["latency"]["p99"], c["counts"]["blocks"], c["wall_ns"], c["counts"]["lost"])')
  l3=$(load)
  echo "round $i mesh: $m (load $l1) rr: $r (load $l2 -> $l3)"
done
