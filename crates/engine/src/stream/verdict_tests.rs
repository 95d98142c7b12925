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
        cpu_resolution: None,
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

#[test]
fn cpu_advice_asks_for_more_streams_than_were_run() {
    // `--bidir --streams 4` runs four connections a direction: advising 2 would be fewer.
    assert_eq!(more_streams(4).as_deref(), Some("--streams 8"));
    assert_eq!(more_streams(1).as_deref(), Some("--streams 2"));
    assert_eq!(more_streams(64).as_deref(), Some("--streams 128"));
    assert_eq!(more_streams(128), None);
}

/// The window equation (rate ≤ window ÷ RTT) as evidence when the kernel's clocks
/// do not dominate: (shares, min RTT µs, send buffer, receive buffer, goodput bit/s,
/// link bit/s, cause, evidence, text that must appear).
#[test]
fn the_window_equation_names_a_buffer_the_clocks_miss() {
    let q = end(End::Client, 1.0, 5.0, 30.0);
    let qa = end(End::Agent, 3.0, 5.0, 30.0);
    let eq = Some(WindowEvidence::WindowEquation);
    let cases = [
        // The lab's flow: 4 KiB send buffer, 14.6 ms min RTT, 7 Mbit/s on a 10 Gbit/s
        // link, the sndbuf clock at 36%, BBR pacing the rest.
        (shares(1.0, 0.0, 0.36), 14_563, 4096, 328_316, 7.0e6, Some(10e9), LimitCause::SendBuffer, eq,
         "send buffer limited the sender: the client's socket buffer of 4096 B per 14.6 ms round trip (min RTT) allows ≈ 2.3 Mbit/s (window ÷ RTT) and the run got 7.0 Mbit/s, while the 10.00 Gbit/s link × min RTT needs ≈ 18.2 MB"),
        (shares(1.0, 0.0, 0.36), 14_563, 4096, 328_316, 7.0e6, Some(10e9), LimitCause::SendBuffer, eq,
         "evidence: the window equation (rate ≤ window ÷ RTT); the kernel's sndbuf clock read 36% (a pacing sender"),
        // The mirror: a 64 KiB receive buffer over 20 ms carries ≈ 26 Mbit/s at most;
        // the run got 20 Mbit/s while the rwnd clock read 30%.
        (shares(1.0, 0.3, 0.0), 20_000, 4_194_304, 65_536, 20e6, Some(10e9), LimitCause::ReceiveWindow, eq,
         "receive window limited the sender: the agent's socket buffer of 65536 B per 20.0 ms round trip (min RTT) allows ≈ 26.2 Mbit/s"),
        // Both buffers in use: the smaller one is the window, unless the kernel's
        // clocks tell which one held the sender (here --window 4K on both ends).
        (shares(1.0, 0.2, 0.2), 20_000, 65_536, 32_768, 12e6, Some(10e9), LimitCause::ReceiveWindow, eq,
         "the agent's socket buffer of 32768 B"),
        (shares(1.0, 0.0, 0.36), 20_000, 4608, 4096, 2e6, Some(10e9), LimitCause::SendBuffer, eq,
         "the client's socket buffer of 4608 B"),
        // A big buffer on a fast path: 4 MiB over 145 µs allows 231 Gbit/s; the run's
        // 12.7 Gbit/s is far below it: not the buffer.
        (shares(1.0, 0.0, 0.0), 145, 4_194_304, 33_554_432, 12.7e9, Some(10e9), LimitCause::Network, None,
         "the network: "),
        // A buffer that is in use but larger than the path needs (link × min RTT below
        // 4× the buffer): the path, not the buffer, is the limit.
        (shares(1.0, 0.0, 0.1), 1000, 1_048_576, 1_048_576, 6e9, Some(10e9), LimitCause::Network, None,
         "the network: "),
        // A rate-shaped path: the flow queues behind the shaper (srtt ≫ min RTT) but
        // window ÷ min RTT is far above its 191 Mbit/s.
        (shares(1.0, 0.0, 0.0), 12, 1_603_584, 2_689_672, 191e6, Some(10e9), LimitCause::Network, None,
         "the network: "),
        // No link speed: no room to show, no window-equation verdict.
        (shares(1.0, 0.0, 0.36), 14_563, 4096, 328_316, 7.0e6, None, LimitCause::Network, None,
         "the network: "),
        // The clock dominates: the clock is the evidence.
        (shares(1.0, 0.0, 0.8), 14_563, 4096, 328_316, 7.0e6, Some(10e9), LimitCause::SendBuffer, Some(WindowEvidence::LimitClock),
         "send buffer limited the sender 80% of the time"),
    ];
    for (sh, rtt, snd, rcv, goodput, link, cause, evidence, text) in cases {
        let v = decide(&Evidence {
            sender: End::Client,
            receiver: End::Agent,
            shares: sh,
            sender_end: Some(&q),
            receiver_end: Some(&qa),
            conns: 1,
            min_rtt_us: Some(rtt),
            receiver_buffer: Some(rcv),
            sender_buffer: Some(snd),
            link_bps: link,
            delivery_rate_bps: None,
            goodput_bps: Some(goodput),
            software_link: None,
            window: None,
        });
        assert_eq!((v.cause, v.evidence), (cause, evidence), "{}", v.line);
        assert_eq!(v.window_allows_bps.is_some(), evidence == eq, "{}", v.line);
        assert!(v.line.contains(text), "{}\nlacks: {text}", v.line);
        if evidence == eq {
            // The share stays the kernel's clock, not a made-up time share.
            let clock = if cause == LimitCause::SendBuffer {
                v.shares.sndbuf_limited
            } else {
                v.shares.rwnd_limited
            };
            assert_eq!(v.share, clock);
            assert!(
                v.line.ends_with(if cause == LimitCause::SendBuffer {
                    "raise net.ipv4.tcp_wmem's maximum on the client"
                } else {
                    "raise net.ipv4.tcp_rmem's maximum on the agent"
                }),
                "{}",
                v.line
            );
        }
    }
}

#[test]
fn the_window_equation_counts_every_connection() {
    // Two connections of 4 KiB each over 10 ms: 6.6 Mbit/s allowed; 4 Mbit/s is in use.
    let b = window_eq::bound(Some(4096), 2, Some(10_000), Some(4e6), Some(1e9)).unwrap();
    assert!((b.allows_bps - 2.0 * 4096.0 * 8.0 / 0.01).abs() < 1e-6);
    // 3 Mbit/s is below half of it: not the buffer.
    assert_eq!(
        window_eq::bound(Some(4096), 2, Some(10_000), Some(3e6), Some(1e9)),
        None
    );
    // Unknown RTT or buffer: no evidence.
    assert_eq!(
        window_eq::bound(None, 1, Some(10_000), Some(4e6), Some(1e9)),
        None
    );
    assert_eq!(
        window_eq::bound(Some(4096), 1, None, Some(4e6), Some(1e9)),
        None
    );
}
