#!/usr/bin/env bash
# Benchmark (not a test): seed 004's processor-set experiment in the lab. An rr load
# sweep (closed loop, 8 KiB UDP blocks, 128 B requests) over the lab's jumbo path
# (veth at MTU 9000, offloads off), four placements of the agent's serving threads:
#   --workers 1 or 2 ("LMS processes") × --agent-cpu 0 (one CPU) or 0-1 (both),
# the client's threads not pinned. Prints one table per placement with the knee rr
# finds (the load ending the last step that raised blocks/s by ≥ 10%), stores every
# step in a private history labelled by placement, and writes the report (latency vs
# load, one curve per placement) next to it.
#
#   BIN=target/release/mtuperf bench/placement_sweep.sh
#   CLIENTS=1,2,4,8,16,32 T=2s OUT=/tmp/placement bench/placement_sweep.sh
#   LOOPBACK=1 bench/placement_sweep.sh   # an agent on 127.0.0.1 instead of the lab
set -euo pipefail

BIN=$(realpath "${BIN:-target/release/mtuperf}")
CLIENTS=${CLIENTS:-1,2,4,8,16,32}
T=${T:-2s}
OUT=${OUT:-/tmp/mtuperf-placement}
LAB=${LAB:-psweep$$}
mkdir -p "$OUT"
DB="$OUT/history.db"
rm -f "$DB"

if [ "${LOOPBACK:-0}" = 1 ]; then
  # One agent on loopback (no lab): when namespaces cannot be used.
  PORT=${PORT:-17990}
  "$BIN" serve --bind 127.0.0.1 --port "$PORT" 2>/dev/null &
  AGENT=$!
  trap 'kill "$AGENT" 2>/dev/null || true' EXIT
  sleep 1
  TARGET=127.0.0.1:$PORT
  run() { "$@"; }
else
  "$BIN" lab up --name "$LAB" --scenario jumbo --offload off >/dev/null
  trap '"$BIN" lab down --name "$LAB" >/dev/null 2>&1 || true' EXIT
  "$BIN" lab serve --name "$LAB" >/dev/null
  TARGET=198.18.2.2
  run() { "$BIN" lab exec --name "$LAB" client -- "$@"; }
fi

echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg)"
for workers in 1 2; do
  for set in 0 0-1; do
    label="workers=$workers agent-cpu=$set"
    run "$BIN" --db "$DB" rr "$TARGET" --clients "$CLIENTS" --time "$T" \
      --workers "$workers" --agent-cpu "$set" --label "$label" --json >"$OUT/w$workers-cpu$set.json"
    python3 - "$OUT/w$workers-cpu$set.json" "$label" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
sw = d["sweep"]
print(f"\n## {sys.argv[2]}")
print("| clients | blocks/s | p50 µs | p99 µs | agent threads on CPU | shared CPU with client |")
print("|---|---|---|---|---|---|")
for p, s in zip(sw["points"], d["steps"]):
    pl = s.get("placement") or {}
    print(f"| {p['clients']} | {p['blocks_per_s']:.0f} | {p['p50_ns']/1e3:.1f} | {p['p99_ns']/1e3:.1f} "
          f"| {','.join(map(str, pl.get('agent_cpus', [])))} | {pl.get('shared_cpu')} |")
open(sys.argv[1] + ".ids", "w").write(" ".join(str(s["run_id"]) for s in d["steps"]) + "\n")
k = sw.get("knee")
print(f"knee: {sw['points'][k]['clients']} clients" if k is not None else "knee: none (still scaling at the last step)")
PY
  done
done
# shellcheck disable=SC2046 # one id per word
"$BIN" --db "$DB" report $(cat "$OUT"/*.ids) -o "$OUT/report.html"
echo
echo "report: $OUT/report.html (stored runs in $DB)"
