#!/usr/bin/env bash
# Benchmark (not a test): what `rr --proto tcp` and bench/tcp_rr_ref.c each do per block
# at N clients (P threads per end), counted per process, not system-wide, so other
# work on the machine does not enter the counts: over S seconds in the middle of a
# run of each, the CPU time (task-clock), context switches, migrations, every
# syscall by name (those above 0.005 per block), and the loopback packets (counted
# system-wide). Blocks in the window are the sendto calls / 2 (a request and a block
# each, both written whole). Counts per block hardly move with the machine's load; the
# CPU time does (a busy host costs every syscall more), and the delayed-ACK edge moves
# with the round trip (BENCHMARKS.md §18): compare runs made one right after the other.
#
#   cc -O2 -o /tmp/tcp_rr_ref bench/tcp_rr_ref.c -lpthread
#   BIN=target/release/mtuperf N=1024 bench/rr_tcp_counts.sh
#
# Prints one line per count: mtuperf (client + agent) and the reference (both ends),
# per block, and their ratio; then mtuperf's client and agent apart.
set -euo pipefail
BIN=${BIN:-target/release/mtuperf}; REF=${REF:-/tmp/tcp_rr_ref}
N=${N:-1024}; P=${P:-2}; S=${S:-3}; PORT=${PORT:-17893}
T=$((S + 4))
command -v perf >/dev/null || { echo "missing perf (Debian: linux-perf)" >&2; exit 6; }
[ -x "$BIN" ] && [ -x "$REF" ] || { echo "build $BIN and $REF first" >&2; exit 6; }
ulimit -n "$(ulimit -Hn)"
out=$(mktemp -d)
EV=task-clock,context-switches,cpu-migrations,raw_syscalls:sys_enter
EV=$EV,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_recvfrom,syscalls:sys_enter_sendto
EV=$EV,syscalls:sys_enter_read,syscalls:sys_enter_write,syscalls:sys_enter_getsockopt
EV=$EV,syscalls:sys_enter_epoll_ctl,syscalls:sys_enter_futex,syscalls:sys_enter_ppoll
EV=$EV,syscalls:sys_enter_clock_gettime,syscalls:sys_enter_nanosleep,syscalls:sys_enter_clock_nanosleep
NET=net:net_dev_queue

"$BIN" serve --bind 127.0.0.1 --port "$PORT" 2>/dev/null & agent=$!
trap 'kill "$agent" 2>/dev/null || true; rm -rf "$out"' EXIT
sleep 1
"$BIN" --no-store rr "127.0.0.1:$PORT" --proto tcp --threads "$P" --workers "$P" --clients "$N" \
    --time "${T}s" --json >"$out/mt.json" 2>/dev/null & c=$!
sleep 2
perf stat -x, -e "$EV" -p "$c" -o "$out/mt-cli.txt" -- sleep "$S" &
perf stat -x, -e "$EV" -p "$agent" -o "$out/mt-agt.txt" -- sleep "$S" &
perf stat -x, -a -e "$NET" -o "$out/mt-net.txt" -- sleep "$S"
wait "$c"
kill "$agent"; wait "$agent" 2>/dev/null || true
"$REF" "$N" "$T" "$P" >"$out/ref.out" & r=$!
sleep 2
perf stat -x, -e "$EV" -p "$r" -o "$out/ref.txt" -- sleep "$S" &
perf stat -x, -a -e "$NET" -o "$out/ref-net.txt" -- sleep "$S"
wait "$r"
m=$(python3 -c "import json; print(json.load(open('$out/mt.json'))['steps'][0]['metrics']['blocks_per_s'])")
rb=$(awk '{print $2}' "$out/ref.out")
python3 - "$out" "$m" "$rb" "$S" <<'PY'
import sys
d, m, r, s = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
def load(*names):
    t = {}
    for n in names:
        for l in open(f"{d}/{n}"):
            p = l.strip().split(",")
            if len(p) < 3 or l.startswith("#"):
                continue
            try:
                v = float(p[0])
            except ValueError:
                continue
            k = p[2].replace("syscalls:sys_enter_", "").replace("raw_syscalls:sys_enter", "syscalls (all)")
            t[k] = t.get(k, 0) + v
    return t
cli, agt = load("mt-cli.txt"), load("mt-agt.txt")
mt = {k: cli.get(k, 0) + agt.get(k, 0) for k in set(cli) | set(agt)}
mt.update(load("mt-net.txt"))
ref = load("ref.txt", "ref-net.txt")
# Blocks in the window: every block is one request sent and one block sent (a write
# of 8 KiB completes in one call here), so sendto / 2; the runs' averages include
# their setup and the window is only part of them.
mb, rb = mt.get("sendto", 0) / 2, ref.get("sendto", 0) / 2
if not mb or not rb:
    sys.exit("no sendto counted: is perf allowed to trace syscalls?")
print(f"blocks/s over the window: mtuperf {mb / s:.0f}, reference {rb / s:.0f} (ratio {mb / rb:.3f}); "
      f"over the runs: {m:.0f} and {r:.0f}")
print(f"{'per block':28s} {'mtuperf':>9s} {'reference':>9s} {'ratio':>6s} {'mt client':>9s} {'mt agent':>9s}")
for k in sorted(set(mt) | set(ref)):
    x, y = mt.get(k, 0) / mb, ref.get(k, 0) / rb
    if k == "task-clock":
        k, x, y = "CPU µs (task-clock)", x * 1e3, y * 1e3
        cx, ax = cli.get("task-clock", 0) / mb * 1e3, agt.get("task-clock", 0) / mb * 1e3
    else:
        cx, ax = cli.get(k, 0) / mb, agt.get(k, 0) / mb
    if max(x, y) < 0.005:
        continue
    ratio = f"{x / y:6.2f}" if y else "     -"
    print(f"{k:28s} {x:9.3f} {y:9.3f} {ratio} {cx:9.3f} {ax:9.3f}")
PY
