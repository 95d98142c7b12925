#!/usr/bin/env bash
# Benchmark (not a test): the calibration of the stream's limiting-factor verdict
# (issue 29). One TCP stream over the lab's jumbo path (veth at MTU 9000, offloads
# off), `--window` swept from 8K to the kernel's autotuning (no --window), at two
# block sizes; every window's run is repeated and the rows interleaved (8K, 16K, …,
# default, then again), so load from other programs on the host spreads over all of
# them. Prints per block size the median goodput of each window as a ratio to the
# default run's, the kernel's tcp_info split (receive window, send buffer, of the
# sender's busy time), the goodput a larger window bought (the best median of the
# larger windows and the default), and the verdict mtuperf gave. The verdict must name the window whenever raising it raises
# goodput by at least 20%, and must not when it does not (BENCHMARKS.md §11). Every
# run's figures also go to runs.jsonl (the unit tests of the rule use them).
#
#   BIN=target/release/mtuperf bench/window_sweep.sh
#   WINDOWS="8K 16K 32K 64K 128K 256K 512K 1M default" BLOCKS="8K 128K" T=3s REPS=3 bench/window_sweep.sh
set -euo pipefail

BIN=$(realpath "${BIN:-target/release/mtuperf}")
WINDOWS=${WINDOWS:-8K 16K 32K 64K 128K 256K 512K 1M default}
BLOCKS=${BLOCKS:-8K 128K}
T=${T:-3s}
REPS=${REPS:-3}
OUT=${OUT:-/tmp/mtuperf-window-sweep}
LAB=${LAB:-wsweep$$}
mkdir -p "$OUT"
rm -f "$OUT"/*.json

"$BIN" lab up --name "$LAB" --scenario jumbo --offload off >/dev/null
trap '"$BIN" lab down --name "$LAB" >/dev/null 2>&1 || true' EXIT
"$BIN" lab serve --name "$LAB" >/dev/null
TARGET=198.18.2.2

echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for rep in $(seq 1 "$REPS"); do
  for block in $BLOCKS; do
    for w in $WINDOWS; do
      args=(--time "$T" --block "$block")
      [ "$w" = default ] || args+=(--window "$w")
      "$BIN" lab exec --name "$LAB" client -- "$BIN" --no-store stream "$TARGET" "${args[@]}" --json \
        >"$OUT/b$block-w$w-r$rep.json" 2>/dev/null || true
    done
  done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$OUT" "$BLOCKS" "$WINDOWS" "$REPS" <<'PY'
import json, statistics, sys
out, blocks, windows, reps = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), int(sys.argv[4])

def load(b, w, r):
    try:
        d = json.load(open(f"{out}/b{b}-w{w}-r{r}.json"))
    except (OSError, ValueError):
        return None
    run = d["runs"][0]
    m = run["metrics"]
    lim = m["directions"][0].get("limit") or {}
    sh = lim.get("shares") or {}
    ends = {e["end"]: e for e in m["ends"]}
    res = run["result"]
    snd = next((c for c in res["client"]["conns"] if c["sending"]), {})
    rcv = next((c for c in res["agent"]["conns"] if not c["sending"]), {})
    st, rt = snd.get("tcp_info") or {}, rcv.get("tcp_info") or {}
    life = max(snd.get("end_ns") or 1, 1)
    return {
        # Raw signals of the sender's and the receiver's tcp_info and loops, for
        # looking for a better rule than the clocks (BENCHMARKS.md §11).
        "snd_wnd": st.get("snd_wnd"), "notsent": st.get("notsent_bytes"),
        "cwnd": st.get("snd_cwnd"), "mss": st.get("snd_mss"), "srtt_us": st.get("rtt_us"),
        "min_rtt_us": st.get("min_rtt_us"), "app_limited": st.get("delivery_rate_app_limited"),
        "delivery_bps": st.get("delivery_rate_bps"), "sndbuf_b": snd.get("sndbuf"),
        "rcvbuf_b": rcv.get("rcvbuf"), "rcv_space": rt.get("rcv_space"),
        "snd_in_call": (snd.get("in_call_ns") or 0) / life, "snd_calls": snd.get("calls"),
        "rcv_in_call": (rcv.get("in_call_ns") or 0) / life, "rcv_calls": rcv.get("calls"),
        "rcv_waits": rcv.get("waits"), "rcv_wait": (rcv.get("wait_ns") or 0) / life,
        "block": b, "window": w, "gbps": m["headline_bps"] / 1e9,
        "rwnd": sh.get("rwnd_limited"), "sndbuf": sh.get("sndbuf_limited"),
        "cwnd_lim": sh.get("cwnd_limited"), "busy": sh.get("busy_of_lifetime"),
        "snd_proc": ends["client"]["process_pct"], "rcv_proc": ends["agent"]["process_pct"],
        "softirq": max(ends["client"]["system_softirq_pct"], ends["agent"]["system_softirq_pct"]),
        "cause": lim.get("cause", "-"),
    }

pct = lambda x: "-" if x is None else f"{x*100:.0f}%"
runs = open(f"{out}/runs.jsonl", "w")
for b in blocks:
    rows = {w: [x for x in (load(b, w, r) for r in range(1, reps + 1)) if x] for w in windows}
    for v in rows.values():
        for x in v:
            runs.write(json.dumps(x) + "\n")
    med = {w: statistics.median(x["gbps"] for x in v) for w, v in rows.items() if v}
    base = med.get("default")
    if not base:
        continue
    print(f"\n### --block {b}: median of {reps} interleaved runs")
    print("| --window | goodput | of default | a larger window gives | window should be named | rwnd | sndbuf | rwnd+sndbuf | busy | sender / receiver process | verdict (each run) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    ws = [w for w in windows if w in med]
    for i, w in enumerate(ws):
        v = rows[w]
        best = max((med[x] for x in ws[i + 1:]), default=None)
        gain = best / med[w] - 1 if best and med[w] > 0 else None
        split = lambda k: statistics.median(x[k] for x in v) if all(x[k] is not None for x in v) else None
        both = split("rwnd") + split("sndbuf") if split("rwnd") is not None and split("sndbuf") is not None else None
        print(f"| {w} | {med[w]:.2f} Gbit/s | {med[w] / base:.2f} | {'-' if gain is None else f'{gain*100:+.0f}%'} "
              f"| {'-' if gain is None else ('yes' if gain >= 0.2 else 'no')} | {pct(split('rwnd'))} | {pct(split('sndbuf'))} "
              f"| {pct(both)} | {pct(split('busy'))} "
              f"| {statistics.median(x['snd_proc'] for x in v):.0f}% / {statistics.median(x['rcv_proc'] for x in v):.0f}% "
              f"| {', '.join(x['cause'] for x in v)} |")
    # The other signals of the sender's tcp_info and of both loops (BENCHMARKS.md §11):
    # whether any of them names the windows the clocks miss.
    print(f"\n#### --block {b}: other signals (medians)")
    print("| --window | gain | snd_wnd | cwnd×MSS ÷ snd_wnd | notsent ÷ sndbuf | app-limited runs | busy | receiver waited | sender / receiver process | sender CPU per Gbit/s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    med_of = lambda v, f: statistics.median(f(x) for x in v)
    for i, w in enumerate(ws):
        v = rows[w]
        best = max((med[x] for x in ws[i + 1:]), default=None)
        gain = best / med[w] - 1 if best and med[w] > 0 else None
        print(f"| {w} | {'-' if gain is None else f'{gain*100:+.0f}%'} "
              f"| {med_of(v, lambda x: (x['snd_wnd'] or 0) / 1024):.0f} KiB "
              f"| {med_of(v, lambda x: (x['cwnd'] or 0) * (x['mss'] or 0) / max(x['snd_wnd'] or 1, 1)):.2f} "
              f"| {med_of(v, lambda x: (x['notsent'] or 0) / max(x['sndbuf_b'] or 1, 1)):.2f} "
              f"| {sum(1 for x in v if x['app_limited'])}/{len(v)} | {pct(med_of(v, lambda x: x['busy'] or 0))} "
              f"| {pct(med_of(v, lambda x: x['rcv_wait']))} "
              f"| {med_of(v, lambda x: x['snd_proc']):.0f}% / {med_of(v, lambda x: x['rcv_proc']):.0f}% "
              f"| {med_of(v, lambda x: x['snd_proc'] / max(x['gbps'], 1e-9)):.1f}% |")
PY
echo
echo "raw documents: $OUT"
