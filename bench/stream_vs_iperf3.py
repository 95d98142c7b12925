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

Usage (as root, from the repository root, after `cargo build --release`):
    python3 bench/stream_vs_iperf3.py [--pairs 5] [--time 3] [--only loopback|std|jumbo]
        [--blocks 8K,128K] [--mtuperf-args '--rx-coalesce 0']
"""
import argparse, json, os, signal, statistics, subprocess, sys, time

BIN = os.path.abspath("target/release/mtuperf")
LAB = "bench"
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def ns(host):
    return ["ip", "netns", "exec", f"mtlab-{LAB}-{host}"] if host else []


def run_mtuperf(client_ns, target, block, secs, extra):
    env = dict(os.environ)
    if client_ns:  # lab agents authenticate with the lab's key
        env["MTUPERF_KEY_FILE"] = f"/run/mtuperf/lab/{LAB}/key"
    out = subprocess.run(ns(client_ns) + [BIN, "--no-store", "stream", target, "--time", f"{secs}s",
                          "--block", block, "--json"] + extra, capture_output=True, text=True, check=True, env=env)
    d = json.loads(out.stdout)["runs"][0]["metrics"]["directions"][0]
    return d["goodput_wall_bps"], d["bytes_read"]


def run_iperf3(client_ns, host, port, block, secs):
    out = subprocess.run(ns(client_ns) + ["iperf3", "-c", host, "-p", str(port), "-t", str(secs),
                          "-l", block, "-J"], capture_output=True, text=True, check=True)
    s = json.loads(out.stdout)["end"]["sum_received"]
    return s["bits_per_second"], s["bytes"]


def measure(fn, server_pid):
    c0 = cpu_seconds(server_pid)
    bps, nbytes = fn()
    time.sleep(0.3)  # let the server finish accounting the connection
    c1 = cpu_seconds(server_pid)
    return bps, (c1 - c0) / (nbytes / 2**30)


def bench(name, client_ns, m_target, i_host, i_port, m_pid, i_pid, pairs, secs, blocks, extra):
    for block in blocks:
        g, c = [], []
        for _ in range(pairs):
            mb, mc = measure(lambda: run_mtuperf(client_ns, m_target, block, secs, extra), m_pid)
            ib, ic = measure(lambda: run_iperf3(client_ns, i_host, i_port, block, secs), i_pid)
            g.append(mb / ib)
            c.append(mc / ic)
            print(f"  {name:8} {block:>5}: mtuperf {mb/1e9:6.2f} Gbit/s {mc:6.3f} cpu-s/GiB | "
                  f"iperf3 {ib/1e9:6.2f} Gbit/s {ic:6.3f} cpu-s/GiB", file=sys.stderr)
        print(f"{name:8} block {block:>5}: median goodput ratio mtuperf/iperf3 {statistics.median(g):.3f} "
              f"(pairs: {' '.join(f'{x:.2f}' for x in g)}); median receiver CPU/GiB ratio "
              f"{statistics.median(c):.3f} (lower is better)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--time", type=int, default=3)
    ap.add_argument("--only", choices=["loopback", "std", "jumbo"])
    ap.add_argument("--blocks", default="8K,128K", help="comma-separated block sizes (default 8K,128K)")
    ap.add_argument("--mtuperf-args", default="", help="extra arguments for mtuperf stream, e.g. '--rx-coalesce 0'")
    a = ap.parse_args()
    blocks, extra = a.blocks.split(","), a.mtuperf_args.split()
    procs = []
    try:
        if a.only in (None, "loopback"):
            m = subprocess.Popen([BIN, "serve", "--bind", "127.0.0.1", "--port", "7979"], stderr=subprocess.DEVNULL)
            i = subprocess.Popen(["iperf3", "-s", "-p", "5299"], stdout=subprocess.DEVNULL)
            procs += [m, i]
            time.sleep(0.5)
            bench("loopback", None, "127.0.0.1:7979", "127.0.0.1", 5299, m.pid, i.pid, a.pairs, a.time, blocks, extra)
        nets = [s for s in ["std", "jumbo"] if a.only in (None, s)]
        if nets:
            subprocess.run([BIN, "lab", "down", "--name", LAB], capture_output=True)
            subprocess.run([BIN, "lab", "up", "--name", LAB] + sum((["--scenario", s] for s in nets), []),
                           check=True, capture_output=True)
            subprocess.run([BIN, "lab", "serve", "--name", LAB], check=True, capture_output=True)
            addr = {"std": "198.18.1.2", "jumbo": "198.18.2.2"}
            for s in nets:
                i = subprocess.Popen(ns(s) + ["iperf3", "-s", "-p", "5201"], stdout=subprocess.DEVNULL)
                procs.append(i)
                time.sleep(0.5)
                with open(f"/run/mtuperf/lab/{LAB}/agent-{s}.pid") as f:
                    m_pid = int(f.read().strip())
                bench(f"veth-{s}", "client", addr[s], addr[s], 5201, m_pid, i.pid, a.pairs, a.time, blocks, extra)
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        subprocess.run([BIN, "lab", "down", "--name", LAB], capture_output=True)


if __name__ == "__main__":
    main()
