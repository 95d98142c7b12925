//! Table tests of the limiting-factor verdict.

use super::*;

fn end(end: End, process: f64, softirq: f64, busy: f64) -> EndMetrics {
    EndMetrics {
        end,
        wall_s: 1.0,
        process_user_pct: 0.0,
        process_sys_pct: 0.0,
        process_pct: process,
        system_user_pct: 0.0,
        system_sys_pct: 0.0,
        system_irq_pct: 0.0,
        system_softirq_pct: softirq,
        system_busy_pct: busy,
        ncpu: 2,
        bytes_moved: 0,
        service_demand_us_per_mib: None,
        process_us_per_mib: None,
        iface: None,
    }
}

fn shares(busy: f64, rwnd: f64, sndbuf: f64) -> LimitShares {
    LimitShares {
        busy_of_lifetime: Some(busy),
        rwnd_limited: Some(rwnd),
        sndbuf_limited: Some(sndbuf),
        cwnd_limited: Some(1.0 - rwnd - sndbuf),
        retrans: Some(0.001),
        ce_marked: Some(0.0),
        busy_us: Some(1_000_000),
    }
}

#[test]
fn causes_from_evidence() {
    let idle = end(End::Client, 10.0, 5.0, 30.0);
    let busy_proc = end(End::Agent, 99.0, 5.0, 120.0);
    let all_busy = end(End::Agent, 30.0, 20.0, 199.0);
    let quiet = end(End::Agent, 10.0, 5.0, 30.0);
    // (shares, sender, receiver, cause, text that must appear)
    let cases = [
        (shares(1.0, 0.71, 0.0), &idle, &quiet, LimitCause::ReceiveWindow, "receive window limited the sender 71% of the time: the agent's socket buffer reached 131072 B, the path needs ≈ 1.6 MB (10.00 Gbit/s link × min RTT 1300 µs); raise net.ipv4.tcp_rmem's maximum on the agent"),
        (shares(1.0, 0.71, 0.0), &idle, &busy_proc, LimitCause::Cpu, "the receiver (agent) process ran at 99% of a core and could not drain the receive window"),
        (shares(1.0, 0.0, 0.8), &idle, &quiet, LimitCause::SendBuffer, "send buffer limited the sender 80% of the time: the client's socket buffer reached 65536 B"),
        (shares(1.0, 0.0, 0.0), &idle, &busy_proc, LimitCause::Cpu, "the receiver (agent) process ran at 99% of a core"),
        (shares(0.8, 0.0, 0.0), &idle, &all_busy, LimitCause::Cpu, "all 2 CPUs of the receiver (agent) host were busy (199% of a core), and the sender had nothing queued to send 20% of the time"),
        (shares(1.0, 0.0, 0.0), &idle, &all_busy, LimitCause::Network, "congestion control (its window or pacing) held the sender 100% of the time (0.10% of bytes retransmitted); the path carried ≈ 190.0 Mbit/s; no buffer or CPU was the limit"),
        (shares(0.3, 0.0, 0.0), &idle, &quiet, LimitCause::Application, "the sender had nothing queued to send 70% of the time"),
        (LimitShares::default(), &idle, &quiet, LimitCause::Unknown, "limiting factor unknown"),
        (LimitShares::default(), &idle, &busy_proc, LimitCause::Cpu, "process ran at 99%"),
    ];
    for (sh, snd, rcv, cause, text) in cases {
        let v = decide(&Evidence {
            sender: End::Client,
            receiver: End::Agent,
            shares: sh,
            sender_end: Some(snd),
            receiver_end: Some(rcv),
            conns: 1,
            min_rtt_us: Some(1300),
            receiver_buffer: Some(131_072),
            sender_buffer: Some(65_536),
            link_bps: Some(10e9),
            delivery_rate_bps: None,
            goodput_bps: Some(190e6),
            software_link: None,
            window: None,
        });
        assert_eq!(v.cause, cause, "{}", v.line);
        assert!(v.line.starts_with("client→agent: "), "{}", v.line);
        // Autotuned buffers (no --window): the sysctl that capped them, and where.
        let want = match cause {
            LimitCause::ReceiveWindow => Some(("net.ipv4.tcp_rmem", End::Agent)),
            LimitCause::SendBuffer => Some(("net.ipv4.tcp_wmem", End::Client)),
            _ => None,
        };
        assert_eq!(v.sysctl.as_deref().zip(v.sysctl_end), want, "{}", v.line);
        assert!(v.line.contains(text), "{}\nlacks: {text}", v.line);
    }
}

#[test]
fn a_veth_link_that_takes_a_core_is_cpu_not_the_network() {
    let (c, a) = (
        end(End::Client, 46.0, 54.0, 170.0),
        end(End::Agent, 34.0, 54.0, 170.0),
    );
    let quiet = end(End::Agent, 3.0, 1.0, 20.0);
    for (rcv, link, cause) in [
        (&a, Some("veth"), LimitCause::Cpu),
        (&a, None, LimitCause::Network),
        (&quiet, Some("veth"), LimitCause::Network),
    ] {
        let v = decide(&Evidence {
            sender: End::Client,
            receiver: End::Agent,
            shares: shares(1.0, 0.0, 0.0),
            sender_end: Some(if cause == LimitCause::Network && link.is_some() {
                &quiet
            } else {
                &c
            }),
            receiver_end: Some(rcv),
            conns: 1,
            min_rtt_us: Some(3),
            receiver_buffer: None,
            sender_buffer: None,
            link_bps: None,
            delivery_rate_bps: None,
            goodput_bps: None,
            software_link: link.map(String::from),
            window: None,
        });
        assert_eq!(v.cause, cause, "{}", v.line);
    }
}

#[test]
fn a_buffer_above_the_bdp_is_not_called_too_small() {
    let q = end(End::Agent, 10.0, 5.0, 30.0);
    let v = decide(&Evidence {
        sender: End::Agent,
        receiver: End::Client,
        shares: shares(1.0, 0.6, 0.0),
        sender_end: Some(&q),
        receiver_end: Some(&q),
        conns: 1,
        min_rtt_us: Some(8),
        receiver_buffer: Some(16_384),
        sender_buffer: None,
        link_bps: Some(10e9),
        delivery_rate_bps: None,
        goodput_bps: None,
        software_link: None,
        window: Some(8192),
    });
    assert_eq!(v.cause, LimitCause::ReceiveWindow);
    // --window fixed the buffers: no sysctl is to blame.
    assert_eq!((v.sysctl, v.sysctl_end), (None, None));
    assert!(
        v.line.contains("more than the ≈ 10 kB the path needs")
            && v.line.ends_with("raise --window"),
        "{}",
        v.line
    );
}
