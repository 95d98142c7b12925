#!/usr/bin/env python3
"""Benchmark (not a test): mtuperf stream against iperf3, alternated, medians.

For each network (loopback; a veth pair between two lab namespaces at MTU 1500
and at 9000) and each block size (8K, 128K), runs PAIRS alternating pairs
(mtuperf, iperf3, mtuperf, iperf3, ...) of TIME seconds each, client -> server,
and prints the median of the per-pair ratios mtuperf/iperf3 of
  * goodput: bytes received / receiver wall time (mtuperf goodput_wall_bps,
    iperf3 end.sum_received.bits_per_second), and
  * receiver CPU per GiB: user+sys CPU seconds of the receiving server process
    (read from /proc/PID/stat before and after each run) per GiB received.
Same measurement for both tools, taken from outside them.

--baseline PATH adds another mtuperf build (e.g. the end of round 1, 3e92c1f, built in
its own worktree) with its own agent beside this one's, and --iperf2 adds iperf 2
(`iperf -c -l BLOCK`, its server's CPU read the same way); each round then runs every
tool once, in turn, so all see the same minutes of the machine. The summary gives the
medians of each tool's goodput and receiver CPU per GiB, and mtuperf's per-round ratio
to the better of iperf3 and iperf 2 and to the baseline. --offload off builds the lab
with TSO/GSO/GRO off (a NIC without segmentation offload).

Usage (as root, from the repository root, after `cargo build --release`):
    python3 bench/stream_vs_iperf3.py [--pairs 5] [--time 3] [--only loopback|std|jumbo]
        [--blocks 8K,128K] [--mtuperf-args '--rx-coalesce 0'] [--baseline PATH]
        [--baseline-args '--rx-coalesce 0'] [--iperf2] [--offload on|off] [--zerocopy]
        [--ref /tmp/tcp_stream_ref [--ref-poll-us 50]]
--ref adds bench/tcp_stream_ref.c (cc -O2 -o /tmp/tcp_stream_ref bench/tcp_stream_ref.c),
the smallest write()/read() pair: what the kernel gives one stream with nothing else
running, so a tool's own cost shows as its ratio to it (--ref-poll-us: its receiver
polls, as mtuperf --rx-poll; compare like with like).
--zerocopy compares zero-copy senders: mtuperf stream --zerocopy against iperf3 -Z
(iperf 2 has no zero-copy sender: with --iperf2 it still writes).
MT_BIN=PATH runs another build than target/release/mtuperf as "mtuperf". The same build
with other arguments as the second column: --baseline target/release/mtuperf
--baseline-args '--rx-coalesce 0'.
"""
import argparse, json, os, signal, statistics, subprocess, sys, time

BIN = os.path.abspath(os.environ.get("MT_BIN", "target/release/mtuperf"))
LAB = "bench"
REF = None
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def ns(host):
    return ["ip", "netns", "exec", f"mtlab-{LAB}-{host}"] if host else []


def run_mtuperf(client_ns, target, block, secs, extra, binary=None):
    env = dict(os.environ)
    env.pop("MTUPERF_KEY_FILE", None)  # every agent of the bench is open (see `main`)
    out = subprocess.run(ns(client_ns) + [binary or BIN, "--no-store", "stream", target, "--time", f"{secs}s",
                          "--block", block, "--json"] + extra, capture_output=True, text=True, check=True, env=env)
    d = json.loads(out.stdout)["runs"][0]["metrics"]["directions"][0]
    return d["goodput_wall_bps"], d["bytes_read"]


def run_iperf3(client_ns, host, port, block, secs, extra=()):
    out = subprocess.run(ns(client_ns) + ["iperf3", "-c", host, "-p", str(port), "-t", str(secs),
                          "-l", block, "-J", *extra], capture_output=True, text=True, check=True)
    s = json.loads(out.stdout)["end"]["sum_received"]
    return s["bits_per_second"], s["bytes"]


def run_iperf2(client_ns, host, port, block, secs):
    # iperf 2 prints the client's report; its CSV line's last field is bits/s and the
    # one before it bytes.
    out = subprocess.run(ns(client_ns) + ["iperf", "-c", host, "-p", str(port), "-t", str(secs),
                          "-l", block, "-y", "C"], capture_output=True, text=True, check=True)
    last = [l for l in out.stdout.splitlines() if l.count(",") >= 8][-1].split(",")
    return float(last[-1]), int(last[-2])


def run_ref(client_ns, host, port, block, secs):
    # bench/tcp_stream_ref.c: prints "bytes gbit_per_s".
    out = subprocess.run(ns(client_ns) + [REF, "send", host, str(port), str(secs), str(units(block))],
                         capture_output=True, text=True, check=True)
    nbytes, gbps = out.stdout.split()
    return float(gbps) * 1e9, int(nbytes)


def units(block):
    n = block.upper()
    return int(n[:-1]) * 1024 if n.endswith("K") else int(n[:-1]) << 20 if n.endswith("M") else int(n)


def measure(fn, server_pid):
    c0 = cpu_seconds(server_pid)
    bps, nbytes = fn()
    time.sleep(0.3)  # let the server finish accounting the connection
    c1 = cpu_seconds(server_pid)
    return bps, (c1 - c0) / (nbytes / 2**30)


def bench(name, client_ns, tools, pairs, secs, blocks):
    """tools: [(label, run(block) -> (bps, bytes), server_pid)], run in turn each round."""
    for block in blocks:
        res = {label: [] for label, _, _ in tools}
        for _ in range(pairs):
            line = []
            for label, run, pid in tools:
                bps, cpu = measure(lambda: run(block), pid)
                res[label].append((bps, cpu))
                line.append(f"{label} {bps/1e9:6.2f} Gbit/s {cpu:6.3f} cpu-s/GiB")
            print(f"  {name:8} {block:>5}: " + " | ".join(line), file=sys.stderr)
        med = {k: (statistics.median(b for b, _ in v), statistics.median(c for _, c in v)) for k, v in res.items()}
        print(f"{name:8} block {block:>5}: " + "; ".join(
            f"{k} {g/1e9:.2f} Gbit/s {c:.3f} cpu-s/GiB" for k, (g, c) in med.items()))
        peers = [k for k in res if k.startswith("iperf")]
        best = [max(res[k][i][0] for k in peers) for i in range(pairs)]
        g = [res["mtuperf"][i][0] / best[i] for i in range(pairs)]
        print(f"{name:8} block {block:>5}: median goodput ratio mtuperf/best of {'+'.join(peers)} "
              f"{statistics.median(g):.3f} (rounds: {' '.join(f'{x:.2f}' for x in g)})")
        c = [res["mtuperf"][i][1] / res["iperf3"][i][1] for i in range(pairs)]
        print(f"{name:8} block {block:>5}: median receiver CPU/GiB ratio mtuperf/iperf3 "
              f"{statistics.median(c):.3f} (lower is better)")
        if "C-ref" in res:
            r = [res["mtuperf"][i][0] / res["C-ref"][i][0] for i in range(pairs)]
            print(f"{name:8} block {block:>5}: median goodput ratio mtuperf/C reference "
                  f"{statistics.median(r):.3f} (rounds: {' '.join(f'{x:.2f}' for x in r)})")
        if "baseline" in res:
            b = [res["mtuperf"][i][0] / res["baseline"][i][0] for i in range(pairs)]
            print(f"{name:8} block {block:>5}: median goodput ratio mtuperf/baseline "
                  f"{statistics.median(b):.3f} (rounds: {' '.join(f'{x:.2f}' for x in b)})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--time", type=int, default=3)
    ap.add_argument("--only", choices=["loopback", "std", "jumbo"])
    ap.add_argument("--blocks", default="8K,128K", help="comma-separated block sizes (default 8K,128K)")
    ap.add_argument("--mtuperf-args", default="", help="extra arguments for mtuperf stream, e.g. '--rx-coalesce 0'")
    ap.add_argument("--baseline", help="another mtuperf build to run alongside (e.g. round 1's)")
    ap.add_argument("--baseline-args", default="", help="extra arguments for the baseline's stream")
    ap.add_argument("--iperf2", action="store_true", help="add iperf 2")
    ap.add_argument("--offload", choices=["on", "off"], default="on")
    ap.add_argument("--zerocopy", action="store_true", help="mtuperf --zerocopy against iperf3 -Z")
    ap.add_argument("--ref", help="bench/tcp_stream_ref.c built (cc -O2 -o /tmp/tcp_stream_ref ...): the smallest "
                    "write()/read() pair as a column of its own, the kernel's floor for one stream")
    ap.add_argument("--ref-poll-us", type=int, default=0, help="its receiver polls this long, as --rx-poll")
    a = ap.parse_args()
    global REF
    REF = os.path.abspath(a.ref) if a.ref else None
    blocks, extra, base_extra = a.blocks.split(","), a.mtuperf_args.split(), a.baseline_args.split()
    i3_extra = ["-Z"] if a.zerocopy else []
    if a.zerocopy:
        extra.append("--zerocopy")
    base = os.path.abspath(a.baseline) if a.baseline else None
    procs = []

    def start(argv, **kw):
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
        procs.append(p)
        return p

    def tools(client_ns, host, m_target, m_pid, server_ns, keyfile):
        t = [("mtuperf", lambda b: run_mtuperf(client_ns, m_target, b, a.time, extra), m_pid)]
        if base:
            # The baseline's own agent, open (no key) and bound to the same address.
            bp = start(ns(server_ns) + [base, "--no-store", "serve", "--bind", host, "--port", "7979"])
            t.append(("baseline", lambda b: run_mtuperf(client_ns, f"{host}:7979", b, a.time, base_extra, base), bp.pid))
        ip = start(ns(server_ns) + ["iperf3", "-s", "-p", "5201"])
        t.append(("iperf3", lambda b: run_iperf3(client_ns, host, 5201, b, a.time, i3_extra), ip.pid))
        if a.iperf2:
            i2 = start(ns(server_ns) + ["iperf", "-s", "-p", "5001"])
            t.append(("iperf2", lambda b: run_iperf2(client_ns, host, 5001, b, a.time), i2.pid))
        if REF:
            rp = start(ns(server_ns) + [REF, "serve", host, "5301", str(a.ref_poll_us)])
            t.append(("C-ref", lambda b: run_ref(client_ns, host, 5301, b, a.time), rp.pid))
        time.sleep(0.5)
        return t

    try:
        if a.only in (None, "loopback"):
            m = start([BIN, "serve", "--bind", "127.0.0.1", "--port", "7878"])
            time.sleep(0.3)
            bench("loopback", None, tools(None, "127.0.0.1", "127.0.0.1:7878", m.pid, None, None),
                  a.pairs, a.time, blocks)
        nets = [s for s in ["std", "jumbo"] if a.only in (None, s)]
        if nets:
            subprocess.run([BIN, "lab", "down", "--name", LAB], capture_output=True)
            subprocess.run([BIN, "lab", "up", "--name", LAB, "--offload", a.offload] + sum((["--scenario", s] for s in nets), []),
                           check=True, capture_output=True)
            addr = {"std": "198.18.1.2", "jumbo": "198.18.2.2"}
            for s in nets:
                # Every server starts the same way, a child of this script in its
                # session: `lab serve` starts its agents with setsid, and with the
                # kernel's sched_autogroup a process in a session of its own is
                # scheduled as a group against the client's; that alone cost the
                # 8K stream 10% and 4x the sender's context switches (BENCHMARKS §17).
                m = start(ns(s) + [BIN, "--no-store", "serve", "--bind", addr[s], "--port", "7878"])
                bench(f"veth-{s}", "client", tools("client", addr[s], addr[s], m.pid, s, None),
                      a.pairs, a.time, blocks)
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        subprocess.run([BIN, "lab", "down", "--name", LAB], capture_output=True)


if __name__ == "__main__":
    main()
