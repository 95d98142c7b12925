#!/usr/bin/env python3
"""Benchmark (not a test): `mtuperf stream --udp` against iperf3 -u and iperf 2 -u.

For each network (loopback; a veth pair between two lab namespaces at MTU 1500 and
at 9000), runs PAIRS alternated rounds (mtuperf, iperf3, iperf, mtuperf, ...) of
TIME seconds each, client -> server, 8192-byte datagrams as fast as each tool goes:
  mtuperf stream --udp --block 8K --rate max
  iperf3 -u -b 0 -l 8192
  iperf -u -b 100G -l 8192        (iperf 2 has no "unlimited": 100G is far above)
and prints, per tool pair, the median over rounds of the ratio mtuperf/peer of
  * received goodput: datagrams the receiver got x 8192 x 8 / the sender's sending
    time (mtuperf: its goodput_bps; iperf3: (packets - lost_packets) of
    end.sum_received over its seconds; iperf 2: (total - lost) of the server's CSV
    report over its interval), and
  * receiver CPU per GiB received: user+sys CPU seconds of the receiving server
    process (/proc/PID/stat before and after each run) per GiB received.
Medians of the absolute figures are printed too.

Usage (as root, from the repository root, after `cargo build --release -p mtuperf`):
    python3 bench/udp_vs_iperf.py [--pairs 10] [--time 3] [--only loopback|std|jumbo]
"""
import argparse, json, os, signal, statistics, subprocess, sys, time

BIN = os.path.abspath("target/release/mtuperf")
LAB = "benchudp"
TICK = os.sysconf("SC_CLK_TCK")
SIZE = 8192


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def ns(host):
    return ["ip", "netns", "exec", f"mtlab-{LAB}-{host}"] if host else []


def run_mtuperf(client_ns, target, secs, _server_log):
    env = dict(os.environ)
    if client_ns:  # lab agents authenticate with the lab's key
        env["MTUPERF_KEY_FILE"] = f"/run/mtuperf/lab/{LAB}/key"
    out = subprocess.run(ns(client_ns) + [BIN, "--no-store", "stream", target, "--udp", "--rate", "max",
                          "--block", "8K", "--time", f"{secs}s", "--json"],
                         capture_output=True, text=True, check=True, env=env)
    d = json.loads(out.stdout)["runs"][0]["metrics"]["directions"][0]
    # Where mtuperf's own losses went (its receiver's kernel counters), per round.
    c = d["loss_causes"]
    print(f"    mtuperf sent {d['sent']} received {d['received']} lost {d['lost']} ({d['loss_pct']:.2f}%: socket buffer "
          f"{c['socket_buffer']}, reassembly {c['reassembly']}, never arrived {c['never_arrived']})", file=sys.stderr)
    return d["goodput_bps"], d["received"] * SIZE


def run_iperf3(client_ns, host_port, secs, _server_log):
    host, port = host_port
    out = subprocess.run(ns(client_ns) + ["iperf3", "-c", host, "-p", str(port), "-u", "-b", "0",
                          "-l", str(SIZE), "-t", str(secs), "-J"], capture_output=True, text=True, check=True)
    s = json.loads(out.stdout)["end"]["sum_received"]
    print(f"    iperf3 sent {s['packets']} lost {s['lost_packets']} ({s['lost_percent']:.2f}%)", file=sys.stderr)
    got = (s["packets"] - s["lost_packets"]) * SIZE
    return got * 8 / s["seconds"], got


def run_iperf2(client_ns, host_port, secs, server_log):
    host, port = host_port
    before = len(open(server_log).read().splitlines())
    subprocess.run(ns(client_ns) + ["iperf", "-c", host, "-p", str(port), "-u", "-b", "100G",
                    "-l", str(SIZE), "-t", str(secs), "-y", "C"], capture_output=True, text=True)
    for _ in range(50):
        lines = open(server_log).read().splitlines()[before:]
        if lines:
            break
        time.sleep(0.1)
    f = lines[-1].split(",")
    start, end = (float(x) for x in f[6].split("-"))
    lost, total = int(f[10]), int(f[11])
    got = (total - lost) * SIZE
    return got * 8 / max(end - start, 1e-9), got


def measure(fn, server_pid):
    c0 = cpu_seconds(server_pid)
    bps, nbytes = fn()
    time.sleep(0.3)  # let the server finish accounting
    c1 = cpu_seconds(server_pid)
    return bps, (c1 - c0) / max(nbytes / 2**30, 1e-12)


def bench(name, client_ns, tools, pairs, secs):
    res = {t: ([], []) for t in tools}
    for _ in range(pairs):
        for t, (fn, target, pid, log) in tools.items():
            bps, cpg = measure(lambda: fn(client_ns, target, secs, log), pid)
            res[t][0].append(bps)
            res[t][1].append(cpg)
        print(f"  {name:10} " + " | ".join(f"{t} {res[t][0][-1]/1e9:5.2f} Gbit/s {res[t][1][-1]:6.3f} cpu-s/GiB"
                                        for t in tools), file=sys.stderr)
    med = {t: (statistics.median(g), statistics.median(c)) for t, (g, c) in res.items()}
    print(f"{name}: median received goodput " + ", ".join(f"{t} {med[t][0]/1e9:.2f} Gbit/s" for t in tools)
          + "; median receiver CPU per GiB " + ", ".join(f"{t} {med[t][1]:.3f} s" for t in tools))
    for peer in [t for t in tools if t != "mtuperf"]:
        g = [a / b for a, b in zip(res["mtuperf"][0], res[peer][0]) if b > 0]
        c = [a / b for a, b in zip(res["mtuperf"][1], res[peer][1]) if b > 0]
        print(f"{name}: vs {peer}: median goodput ratio mtuperf/{peer} {statistics.median(g):.2f} "
              f"(pairs: {' '.join(f'{x:.2f}' for x in g)}); median receiver CPU/GiB ratio "
              f"{statistics.median(c):.2f} (lower is better)")


def servers(net_ns, bind, procs, tmp):
    log = os.path.join(tmp, f"iperf2-{net_ns or 'lo'}.csv")
    i3 = subprocess.Popen(ns(net_ns) + ["iperf3", "-s", "-p", "5311"], stdout=subprocess.DEVNULL)
    i2 = subprocess.Popen(ns(net_ns) + ["iperf", "-s", "-u", "-B", bind, "-p", "5312", "-y", "C"],
                          stdout=open(log, "w"), stderr=subprocess.DEVNULL)
    procs += [i3, i2]
    time.sleep(0.5)
    return i3.pid, i2.pid, log


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=10)
    ap.add_argument("--time", type=int, default=3)
    ap.add_argument("--only", choices=["loopback", "std", "jumbo"])
    a = ap.parse_args()
    procs, tmp = [], f"/tmp/mtuperf-bench-udp-{os.getpid()}"
    os.makedirs(tmp, exist_ok=True)
    try:
        if a.only in (None, "loopback"):
            m = subprocess.Popen([BIN, "serve", "--bind", "127.0.0.1", "--port", "7979"], stderr=subprocess.DEVNULL)
            procs.append(m)
            i3, i2, log = servers(None, "127.0.0.1", procs, tmp)
            bench("loopback", None, {
                "mtuperf": (run_mtuperf, "127.0.0.1:7979", m.pid, None),
                "iperf3": (run_iperf3, ("127.0.0.1", 5311), i3, None),
                "iperf": (run_iperf2, ("127.0.0.1", 5312), i2, log)}, a.pairs, a.time)
        nets = [s for s in ["std", "jumbo"] if a.only in (None, s)]
        if nets:
            subprocess.run([BIN, "lab", "down", "--name", LAB], capture_output=True)
            subprocess.run([BIN, "lab", "up", "--name", LAB] + sum((["--scenario", s] for s in nets), []),
                           check=True, capture_output=True)
            subprocess.run([BIN, "lab", "serve", "--name", LAB], check=True, capture_output=True)
            addr = {"std": "198.18.1.2", "jumbo": "198.18.2.2"}
            for s in nets:
                i3, i2, log = servers(s, addr[s], procs, tmp)
                with open(f"/run/mtuperf/lab/{LAB}/agent-{s}.pid") as f:
                    m_pid = int(f.read().strip())
                bench(f"veth-{s}", "client", {
                    "mtuperf": (run_mtuperf, addr[s], m_pid, None),
                    "iperf3": (run_iperf3, (addr[s], 5311), i3, None),
                    "iperf": (run_iperf2, (addr[s], 5312), i2, log)}, a.pairs, a.time)
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        subprocess.run([BIN, "lab", "down", "--name", LAB], capture_output=True)


if __name__ == "__main__":
    main()
