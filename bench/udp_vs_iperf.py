#!/usr/bin/env python3
"""Benchmark (not a test): `mtuperf stream --udp` against iperf3 -u (issue 35).

For each offload setting (the lab's `--offload on|off`: TSO, GSO, GRO and UDP
segmentation offload of every veth), each network (a veth pair between two lab
namespaces at MTU 1500 and at 9000) and each datagram size (1472 B: one frame at
1500; 8192 B: one frame at 9000, six IP fragments at 1500), runs PAIRS alternated
rounds (mtuperf in each --udp-io mode asked, iperf3, then again ...) of TIME seconds,
client -> server, as fast as each tool goes:
  mtuperf stream --udp --block SIZE --rate max --udp-io MODE
  iperf3 -u -b 0 -l SIZE
and prints per cell the medians over rounds of
  * received goodput: datagrams the receiver got x SIZE x 8 / the sender's sending
    time (mtuperf: its goodput_bps; iperf3: (packets - lost_packets) of
    end.sum_received over its seconds), and its ratio mtuperf/iperf3 per round;
  * CPU per byte received on both ends, measured from outside the same way for both
    tools: the receiving server process's user+sys CPU (/proc/PID/stat before and
    after the round) and the sending client process's (getrusage of the reaped
    child), each per GiB received, and their ratios mtuperf/iperf3 per round.
It ends with a Markdown table of the medians against issue 35's goal (goodput ratio
>= 1.10, CPU ratios < 1 on both ends). --iperf2 adds iperf 2 (`iperf -u -b 100G`,
it has no "unlimited") and --loopback a loopback cell.

Usage (as root, from the repository root, after `cargo build --release -p mtuperf`;
MTUPERF_BIN=PATH runs another build):
    python3 bench/udp_vs_iperf.py [--pairs 5] [--time 3] [--sizes 1472,8192]
        [--nets std,jumbo] [--offloads on,off] [--udp-io gso[,batch,plain]]
        [--iperf2] [--loopback]
"""
import argparse, json, os, resource, signal, statistics, subprocess, sys, time

BIN = os.path.abspath(os.environ.get("MTUPERF_BIN", "target/release/mtuperf"))
LAB = "benchudp"
TICK = os.sysconf("SC_CLK_TCK")
ADDR = {"std": "198.18.1.2", "jumbo": "198.18.2.2"}
GIB = 2**30


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def ns(host):
    return ["ip", "netns", "exec", f"mtlab-{LAB}-{host}"] if host else []


def run_mtuperf(mode):
    def run(client_ns, target, size, secs, _log):
        env = dict(os.environ)
        if client_ns:  # lab agents authenticate with the lab's key
            env["MTUPERF_KEY_FILE"] = f"/run/mtuperf/lab/{LAB}/key"
        out = subprocess.run(ns(client_ns) + [BIN, "--no-store", "stream", target, "--udp", "--rate", "max",
                              "--block", str(size), "--time", f"{secs}s", "--udp-io", mode, "--json"],
                             capture_output=True, text=True, check=True, env=env)
        d = json.loads(out.stdout)["runs"][0]["metrics"]["directions"][0]
        c, io = d["loss_causes"], d["io"]
        print(f"    mtuperf {mode}: sent {d['sent']} received {d['received']} lost {d['lost']} ({d['loss_pct']:.2f}%: "
              f"socket buffer {c['socket_buffer']}, reassembly {c['reassembly']}, never arrived {c['never_arrived']}); "
              f"sender {io['sender']['mode']} {io['sender']['datagrams_per_call'] or 0:.1f}/call, receiver "
              f"{io['receiver']['mode']} {io['receiver']['datagrams_per_call'] or 0:.1f}/call", file=sys.stderr)
        return d["goodput_bps"], d["received"] * size
    return run


def run_iperf3(client_ns, host_port, size, secs, _log):
    host, port = host_port
    out = subprocess.run(ns(client_ns) + ["iperf3", "-c", host, "-p", str(port), "-u", "-b", "0",
                          "-l", str(size), "-t", str(secs), "-J"], capture_output=True, text=True, check=True)
    s = json.loads(out.stdout)["end"]["sum_received"]
    print(f"    iperf3: sent {s['packets']} lost {s['lost_packets']} ({s['lost_percent']:.2f}%)", file=sys.stderr)
    got = (s["packets"] - s["lost_packets"]) * size
    return got * 8 / s["seconds"], got


def run_iperf2(client_ns, host_port, size, secs, server_log):
    host, port = host_port
    before = len(open(server_log).read().splitlines())
    subprocess.run(ns(client_ns) + ["iperf", "-c", host, "-p", str(port), "-u", "-b", "100G",
                    "-l", str(size), "-t", str(secs), "-y", "C"], capture_output=True, text=True)
    lines = []
    for _ in range(50):
        lines = open(server_log).read().splitlines()[before:]
        if lines:
            break
        time.sleep(0.1)
    f = lines[-1].split(",")
    start, end = (float(x) for x in f[6].split("-"))
    lost, total = int(f[10]), int(f[11])
    got = (total - lost) * size
    return got * 8 / max(end - start, 1e-9), got


def measure(fn, server_pid):
    """One round: goodput, and each end's CPU seconds per GiB received."""
    s0, c0 = cpu_seconds(server_pid), children_cpu()
    bps, nbytes = fn()
    c1 = children_cpu()
    time.sleep(0.3)  # let the server finish accounting
    s1 = cpu_seconds(server_pid)
    gib = max(nbytes / GIB, 1e-12)
    return bps, (s1 - s0) / gib, (c1 - c0) / gib


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def bench(cell, client_ns, tools, size, pairs, secs, rows):
    res = {t: ([], [], []) for t in tools}
    for _ in range(pairs):
        for t, (fn, target, pid, log) in tools.items():
            g, rx, tx = measure(lambda: fn(client_ns, target, size, secs, log), pid)
            for lst, v in zip(res[t], (g, rx, tx)):
                lst.append(v)
        print(f"  {cell}: " + " | ".join(f"{t} {res[t][0][-1]/1e9:5.2f} Gbit/s rx {res[t][1][-1]:6.3f} "
                                         f"tx {res[t][2][-1]:6.3f} cpu-s/GiB" for t in tools), file=sys.stderr)
    print(f"{cell}: median received goodput " + ", ".join(f"{t} {med(res[t][0])/1e9:.2f} Gbit/s" for t in tools)
          + "; median CPU s/GiB received (receiver/sender) "
          + ", ".join(f"{t} {med(res[t][1]):.3f}/{med(res[t][2]):.3f}" for t in tools))
    for t in [t for t in tools if t.startswith("mtuperf")]:
        for peer in [p for p in tools if not p.startswith("mtuperf")]:
            ratio = [[a / b for a, b in zip(res[t][k], res[peer][k]) if b > 0] for k in range(3)]
            g, rx, tx = (med(r) for r in ratio)
            print(f"{cell}: {t}/{peer}: median goodput ratio {g:.2f} (rounds: {' '.join(f'{x:.2f}' for x in ratio[0])}); "
                  f"median CPU/GiB ratio receiver {rx:.2f}, sender {tx:.2f} (lower is better)")
            rows.append((cell, t, peer, med(res[t][0]), med(res[peer][0]), g, rx, tx))


def servers(net_ns, bind, procs, tmp, iperf2):
    i3 = subprocess.Popen(ns(net_ns) + ["iperf3", "-s", "-p", "5311"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
    procs.append(i3)
    out = {"iperf3": (run_iperf3, (bind, 5311), i3.pid, None)}
    if iperf2:
        log = os.path.join(tmp, f"iperf2-{net_ns or 'lo'}.csv")
        i2 = subprocess.Popen(ns(net_ns) + ["iperf", "-s", "-u", "-B", bind, "-p", "5312", "-y", "C"],
                              stdout=open(log, "w"), stderr=subprocess.DEVNULL)
        procs.append(i2)
        out["iperf"] = (run_iperf2, (bind, 5312), i2.pid, log)
    time.sleep(0.5)
    return out


def table(rows):
    print("\n| offloads, network, datagram | tool vs peer | received goodput, median | ratio (goal >= 1.10) "
          "| CPU/GiB ratio receiver (goal < 1) | CPU/GiB ratio sender (goal < 1) | goal met |")
    print("|---|---|---|---|---|---|---|")
    for cell, t, peer, gt, gp, g, rx, tx in rows:
        ok = "yes" if g >= 1.10 and rx < 1 and tx < 1 else "no"
        print(f"| {cell} | {t} / {peer} | {gt/1e9:.2f} / {gp/1e9:.2f} Gbit/s | {g:.2f} | {rx:.2f} | {tx:.2f} | {ok} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--time", type=int, default=3)
    ap.add_argument("--sizes", default="1472,8192")
    ap.add_argument("--nets", default="std,jumbo", help="lab networks: std (MTU 1500), jumbo (9000)")
    ap.add_argument("--offloads", default="on,off")
    ap.add_argument("--udp-io", default="gso", help="mtuperf's --udp-io modes to run, comma-separated")
    ap.add_argument("--iperf2", action="store_true", help="also run iperf 2")
    ap.add_argument("--loopback", action="store_true", help="also a loopback cell (offloads as the host has them)")
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    nets = [n for n in a.nets.split(",") if n]
    modes = a.udp_io.split(",")
    procs, rows, tmp = [], [], f"/tmp/mtuperf-bench-udp-{os.getpid()}"
    os.makedirs(tmp, exist_ok=True)

    def tools_for(target, agent_pid, peers):
        t = {f"mtuperf-{m}": (run_mtuperf(m), target, agent_pid, None) for m in modes}
        t.update(peers)
        return t

    try:
        if a.loopback:
            m = subprocess.Popen([BIN, "serve", "--bind", "127.0.0.1", "--port", "7979"], stderr=subprocess.DEVNULL)
            procs.append(m)
            peers = servers(None, "127.0.0.1", procs, tmp, a.iperf2)
            for size in sizes:
                bench(f"loopback, {size} B", None, tools_for("127.0.0.1:7979", m.pid, peers), size,
                      a.pairs, a.time, rows)
        for off in [o for o in a.offloads.split(",") if o]:
            subprocess.run([BIN, "lab", "down", "--name", LAB], capture_output=True)
            subprocess.run([BIN, "lab", "up", "--name", LAB, "--offload", off] + sum((["--scenario", s] for s in nets), []),
                           check=True, capture_output=True)
            subprocess.run([BIN, "lab", "serve", "--name", LAB], check=True, capture_output=True)
            for s in nets:
                peers = servers(s, ADDR[s], procs, tmp, a.iperf2)
                with open(f"/run/mtuperf/lab/{LAB}/agent-{s}.pid") as f:
                    m_pid = int(f.read().strip())
                mtu = 1500 if s == "std" else 9000
                for size in sizes:
                    bench(f"offloads {off}, MTU {mtu}, {size} B", "client", tools_for(ADDR[s], m_pid, peers),
                          size, a.pairs, a.time, rows)
                for p in procs[-len(peers):]:
                    p.send_signal(signal.SIGTERM)
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        subprocess.run([BIN, "lab", "down", "--name", LAB], capture_output=True)
    table(rows)


if __name__ == "__main__":
    main()
