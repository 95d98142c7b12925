#!/bin/bash
# BENCHMARKS.md §15 (issue 33): the path-only mesh's wall time against the cluster's
# size, in the lab: N nodes x 2 networks, n2's NIC on net1 at 1500 and the switch
# port toward n4 on net2 at 1500 (the faults of docs/mesh.md's example), 3 runs per
# size. Per run: wall time (the orchestrator's /usr/bin/time), ordered pairs, the
# findings' classes, silent directions, probes, the probes per second per agent (the
# mean over the nodes, and the busiest node's: each probe counts at both of its
# ends) and the load average before and after.
#
#   M=target/release/mtuperf
#   bench/mesh_curve.sh $M 5 16 32
set -eu
M=$1
shift
load() { cut -d' ' -f1-3 /proc/loadavg; }
for N in "$@"; do
  L=curve$N
  "$M" lab down --name "$L" >/dev/null 2>&1 || true
  "$M" lab up --name "$L" --scenario cluster --nodes "$N" --nets 2 \
      --fault nic-mtu=n2:1:1500 --fault port-mtu=n4:2:1500 >/dev/null
  "$M" lab serve --name "$L" >/dev/null
  nodes=$(for i in $(seq 1 "$N"); do printf "n%s=198.19.1.%s " "$i" "$i"; done)
  for run in 1 2 3; do
    l1=$(load)
    # shellcheck disable=SC2086
    "$M" lab exec --name "$L" n1 -- /usr/bin/time -f "%e" -o /tmp/mesh_curve.time \
        "$M" --no-store mesh --json --net 198.19.0.0/16 $nodes >/tmp/mesh_curve.json 2>/dev/null || true
    l2=$(load)
    python3 - "$N" "$run" "$(tail -1 /tmp/mesh_curve.time)" "$l1" "$l2" <<'EOF'
import json, sys
n, run, wall, l1, l2 = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5]
d = json.load(open("/tmp/mesh_curve.json"))
per = [0] * n
probes = silent = 0
for p in d["pairs"]:
    s = p.get("path")
    if not s:
        continue
    k = s["forward"]["probes"] + s["reverse"]["probes"]
    silent += sum(s[x]["stop"] == "silent" for x in ("forward", "reverse"))
    probes += k
    per[p["from"]] += k
    per[p["to"]] += k
faults = sorted((f["diagnosis"]["class"], f["node"], f["net"]) for f in d["findings"] if f["kind"] == "fault")
others = [f["kind"] for f in d["findings"] if f["kind"] != "fault"]
print(f"N={n} run {run}: wall {wall:.2f} s, {len(d['pairs'])} pairs, faults {faults} others {others}, "
      f"{silent} silent directions, {probes} probes, per agent {sum(per) / n / wall:.0f}/s mean "
      f"{max(per) / wall:.0f}/s busiest (load {l1} -> {l2})")
EOF
  done
  "$M" lab down --name "$L" >/dev/null
done
