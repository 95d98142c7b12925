//! Table tests of the limiting-factor verdict (typed: the words are report's, tested
//! there).

use super::*;
use crate::stream::advice::{Fix, Setup};

pub(crate) fn end(end: End, process: f64, softirq: f64, busy: f64) -> EndMetrics {
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

/// A 128 KiB-block run over one connection from the client, on a 1500 NIC.
fn setup(window: Option<u32>) -> Setup {
    Setup {
        window,
        block: 128 * 1024,
        conns: 1,
        sender_mtu: Some(1500),
        sender_kind: Some("ether".into()),
        sender: Some(End::Client),
        receiver: Some(End::Agent),
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

/// The client sends to the agent over a 10 Gbit/s NIC, min RTT 1.3 ms.
fn ev<'a>(sh: LimitShares, snd: &'a EndMetrics, rcv: &'a EndMetrics) -> Evidence<'a> {
    Evidence {
        sender: End::Client,
        receiver: End::Agent,
        shares: sh,
        sender_end: Some(snd),
        receiver_end: Some(rcv),
        conns: 1,
        min_rtt_us: Some(1300),
        srtt_us: Some(1500),
        receiver_buffer: Some(131_072),
        sender_buffer: Some(65_536),
        link_bps: Some(10e9),
        nominal_link_bps: None,
        delivery_rate_bps: None,
        goodput_bps: Some(190e6),
        software_link: None,
        setup: setup(None),
    }
}

#[test]
fn causes_from_evidence() {
    let idle = end(End::Client, 10.0, 5.0, 30.0);
    let busy_proc = end(End::Agent, 99.0, 5.0, 120.0);
    let all_busy = end(End::Agent, 30.0, 20.0, 199.0);
    let quiet = end(End::Agent, 10.0, 5.0, 30.0);
    let proc_rcv = Some(CpuWhat::Process {
        role: Role::Receiver,
        end: End::Agent,
    });
    // (shares, sender, receiver, cause, which CPU, why the CPU)
    let cases = [
        (
            shares(1.0, 0.71, 0.0),
            &idle,
            &quiet,
            LimitCause::ReceiveWindow,
            None,
            None,
        ),
        (
            shares(1.0, 0.71, 0.0),
            &idle,
            &busy_proc,
            LimitCause::Cpu,
            proc_rcv.clone(),
            Some(CpuBecause::ReceiveWindowFull { share: 0.71 }),
        ),
        (
            shares(1.0, 0.0, 0.8),
            &idle,
            &quiet,
            LimitCause::SendBuffer,
            None,
            None,
        ),
        (
            shares(1.0, 0.0, 0.0),
            &idle,
            &busy_proc,
            LimitCause::Cpu,
            proc_rcv.clone(),
            None,
        ),
        (
            shares(0.8, 0.0, 0.0),
            &idle,
            &all_busy,
            LimitCause::Cpu,
            Some(CpuWhat::Host {
                role: Role::Receiver,
                end: End::Agent,
                ncpu: 2,
            }),
            Some(CpuBecause::SenderIdle { share: 1.0 - 0.8 }),
        ),
        (
            shares(1.0, 0.0, 0.0),
            &idle,
            &all_busy,
            LimitCause::Network,
            None,
            None,
        ),
        (
            shares(0.3, 0.0, 0.0),
            &idle,
            &quiet,
            LimitCause::Application,
            None,
            None,
        ),
        (
            LimitShares::default(),
            &idle,
            &quiet,
            LimitCause::Unknown,
            None,
            None,
        ),
        (
            LimitShares::default(),
            &idle,
            &busy_proc,
            LimitCause::Cpu,
            proc_rcv,
            None,
        ),
    ];
    for (sh, snd, rcv, cause, cpu, because) in cases {
        let v = decide(&ev(sh, snd, rcv));
        assert_eq!(v.cause, cause, "{v:?}");
        assert_eq!(v.cpu.as_ref().map(|c| c.what.clone()), cpu, "{cause:?}");
        assert_eq!(v.cpu_because, because, "{cause:?}");
        assert_eq!((v.sender, v.receiver), (End::Client, End::Agent));
        // Autotuned buffers (no --window) below what the path needs (1.6 MB): the
        // sysctl that capped them, and where.
        let want = match cause {
            LimitCause::ReceiveWindow => Some(("net.ipv4.tcp_rmem", End::Agent)),
            LimitCause::SendBuffer => Some(("net.ipv4.tcp_wmem", End::Client)),
            _ => None,
        };
        assert_eq!(v.sysctl.as_deref().zip(v.sysctl_end), want, "{v:?}");
    }
}

#[test]
fn the_issue_29_window_of_16k_is_the_window_not_the_cpu() {
    // `--window 16K` on the lab's 9000 veth: a third of the default goodput, the
    // receive window and the send buffer holding the sender 62% of its busy time
    // together (neither half of it alone), every CPU of the 2-CPU host busy.
    let c = end(End::Client, 24.0, 30.0, 190.0);
    let a = end(End::Agent, 39.0, 30.0, 190.0);
    let v = decide(&Evidence {
        link_bps: None,
        software_link: Some("veth".into()),
        setup: Setup {
            sender_mtu: Some(9000),
            sender_kind: Some("veth".into()),
            ..setup(Some(16_384))
        },
        ..ev(shares(0.88, 0.40, 0.22), &c, &a)
    });
    assert_eq!(v.cause, LimitCause::ReceiveWindow, "{v:?}");
    assert_eq!(v.evidence, Some(WindowEvidence::LimitClock));
    assert_eq!(v.fixes, [Fix::RaiseWindow { window: 16_384 }]);
    assert_eq!((v.sysctl, v.link_bdp_bytes), (None, None));
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
        let snd = if cause == LimitCause::Network && link.is_some() {
            &quiet
        } else {
            &c
        };
        let v = decide(&Evidence {
            min_rtt_us: Some(3),
            receiver_buffer: None,
            sender_buffer: None,
            link_bps: None,
            goodput_bps: None,
            software_link: link.map(String::from),
            ..ev(shares(1.0, 0.0, 0.0), snd, rcv)
        });
        assert_eq!(v.cause, cause, "{v:?}");
    }
}

#[test]
fn a_buffer_above_the_bdp_is_not_called_too_small() {
    let q = end(End::Agent, 10.0, 5.0, 30.0);
    let v = decide(&Evidence {
        sender: End::Agent,
        receiver: End::Client,
        shares: shares(1.0, 0.6, 0.0),
        min_rtt_us: Some(8),
        receiver_buffer: Some(16_384),
        sender_buffer: None,
        setup: Setup {
            sender: Some(End::Agent),
            receiver: Some(End::Client),
            ..setup(Some(8192))
        },
        ..ev(LimitShares::default(), &q, &q)
    });
    assert_eq!(v.cause, LimitCause::Receiver);
    // 16 KiB is more than the 10 kB 10 Gbit/s × 8 µs needs: not the window; no bigger
    // buffer is advised, no sysctl blamed; the client did not read in time.
    assert_eq!((v.sysctl, v.sysctl_end), (None, None));
    assert_eq!(v.fixes, [Fix::DrainFaster { end: End::Client }]);
}

/// The window equation (rate ≤ window ÷ RTT) as evidence when the kernel's clocks
/// do not name the window: (shares, min RTT µs, send buffer, receive buffer, goodput
/// bit/s, link bit/s, cause, evidence).
#[test]
fn the_window_equation_names_a_buffer_the_clocks_miss() {
    let q = end(End::Client, 1.0, 5.0, 30.0);
    let qa = end(End::Agent, 3.0, 5.0, 30.0);
    let eq = Some(WindowEvidence::WindowEquation);
    let clock = Some(WindowEvidence::LimitClock);
    let cases = [
        // The lab's flow: 4 KiB send buffer, 14.6 ms min RTT, 7 Mbit/s on a 10 Gbit/s
        // link, the sndbuf clock at 25%, BBR pacing the rest.
        (
            shares(1.0, 0.0, 0.25),
            14_563,
            4096,
            328_316,
            7.0e6,
            Some(10e9),
            LimitCause::SendBuffer,
            eq,
        ),
        // The mirror: a 64 KiB receive buffer over 20 ms carries ≈ 26 Mbit/s at most;
        // the run got 20 Mbit/s while the rwnd clock read 20%.
        (
            shares(1.0, 0.2, 0.0),
            20_000,
            4_194_304,
            65_536,
            20e6,
            Some(10e9),
            LimitCause::ReceiveWindow,
            eq,
        ),
        // Both buffers in use, the clocks too short to tell: the smaller one.
        (
            shares(1.0, 0.1, 0.1),
            20_000,
            65_536,
            32_768,
            12e6,
            Some(10e9),
            LimitCause::ReceiveWindow,
            eq,
        ),
        (
            shares(1.0, 0.0, 0.2),
            20_000,
            4608,
            4096,
            2e6,
            Some(10e9),
            LimitCause::SendBuffer,
            eq,
        ),
        // A big buffer on a fast path: 4 MiB over 145 µs allows 231 Gbit/s; the run's
        // 12.7 Gbit/s is far below it: not the buffer.
        (
            shares(1.0, 0.0, 0.0),
            145,
            4_194_304,
            33_554_432,
            12.7e9,
            Some(10e9),
            LimitCause::Network,
            None,
        ),
        // A buffer that is in use but larger than the path needs (link × min RTT below
        // 4× the buffer): the path, not the buffer, is the limit.
        (
            shares(1.0, 0.0, 0.1),
            1000,
            1_048_576,
            1_048_576,
            6e9,
            Some(10e9),
            LimitCause::Network,
            None,
        ),
        // A rate-shaped path: window ÷ min RTT is far above its 191 Mbit/s.
        (
            shares(1.0, 0.0, 0.0),
            12,
            1_603_584,
            2_689_672,
            191e6,
            Some(10e9),
            LimitCause::Network,
            None,
        ),
        // No link speed: no room to show, no window-equation verdict.
        (
            shares(1.0, 0.0, 0.25),
            14_563,
            4096,
            328_316,
            7.0e6,
            None,
            LimitCause::Network,
            None,
        ),
        // The clocks name it: the clocks are the evidence.
        (
            shares(1.0, 0.0, 0.8),
            14_563,
            4096,
            328_316,
            7.0e6,
            Some(10e9),
            LimitCause::SendBuffer,
            clock,
        ),
        (
            shares(1.0, 0.2, 0.16),
            14_563,
            4096,
            328_316,
            7.0e6,
            Some(10e9),
            LimitCause::ReceiveWindow,
            clock,
        ),
    ];
    for (sh, rtt, snd, rcv, goodput, link, cause, evidence) in cases {
        let v = decide(&Evidence {
            min_rtt_us: Some(rtt),
            receiver_buffer: Some(rcv),
            sender_buffer: Some(snd),
            link_bps: link,
            goodput_bps: Some(goodput),
            ..ev(sh, &q, &qa)
        });
        assert_eq!((v.cause, v.evidence), (cause, evidence), "{v:?}");
        assert_eq!(v.window_allows_bps.is_some(), evidence == eq, "{v:?}");
        if evidence == eq {
            // The share stays the kernel's clock, not a made-up time share.
            let clock = if cause == LimitCause::SendBuffer {
                v.shares.sndbuf_limited
            } else {
                v.shares.rwnd_limited
            };
            assert_eq!(v.share, clock);
            let (sysctl, end) = if cause == LimitCause::SendBuffer {
                ("net.ipv4.tcp_wmem", End::Client)
            } else {
                ("net.ipv4.tcp_rmem", End::Agent)
            };
            assert_eq!(
                v.fixes,
                [Fix::RaiseSysctlMax {
                    sysctl: sysctl.into(),
                    end
                }]
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

/// The calibration of [`WINDOW_SHARE`]: the medians of `bench/window_sweep.sh` (one
/// TCP stream over the lab's 9000 veth, offloads off, three interleaved runs per
/// window; BENCHMARKS.md §11; sweep 3 from 32K up, at load 9–11). Each row: (sweep,
/// block, --window, rwnd share, sndbuf share, whether a larger window (or the default)
/// raised goodput by ≥ 20%). Sweeps 4 and 5 (2026-11-27, load 1.5–3, windows up to
/// 4M) also check [`SENDER_BUSIER`].
#[rustfmt::skip]
const SWEEPS: [(u8, u32, u32, f64, f64, bool); 74] = [
    (1, 8, 8, 0.70, 0.22, true), (1, 8, 16, 0.71, 0.01, true), (1, 8, 32, 0.36, 0.00, true),
    (1, 8, 64, 0.37, 0.00, true), (1, 8, 128, 0.14, 0.00, true), (1, 8, 256, 0.03, 0.00, true),
    (1, 8, 512, 0.03, 0.00, true), (1, 8, 1024, 0.32, 0.00, false),
    (1, 128, 8, 0.67, 0.21, true), (1, 128, 16, 0.66, 0.25, true), (1, 128, 32, 0.78, 0.00, true),
    (1, 128, 64, 0.71, 0.00, true), (1, 128, 128, 0.38, 0.01, true), (1, 128, 256, 0.18, 0.00, false),
    (1, 128, 512, 0.15, 0.00, false), (1, 128, 1024, 0.28, 0.00, false),
    (2, 8, 8, 0.63, 0.26, true), (2, 8, 16, 0.62, 0.09, true), (2, 8, 32, 0.57, 0.01, true),
    (2, 8, 64, 0.44, 0.00, true), (2, 8, 128, 0.29, 0.00, true), (2, 8, 256, 0.06, 0.00, true),
    (2, 8, 512, 0.02, 0.00, true), (2, 8, 1024, 0.03, 0.00, true),
    (2, 128, 8, 0.71, 0.22, true), (2, 128, 16, 0.60, 0.31, true), (2, 128, 32, 0.76, 0.02, true),
    (2, 128, 64, 0.43, 0.00, true), (2, 128, 128, 0.37, 0.01, false), (2, 128, 256, 0.40, 0.00, true),
    (2, 128, 512, 0.16, 0.00, false), (2, 128, 1024, 0.37, 0.00, false),
    (3, 8, 32, 0.30, 0.00, true), (3, 8, 64, 0.34, 0.00, true), (3, 8, 128, 0.20, 0.00, true),
    (3, 8, 256, 0.06, 0.00, true), (3, 8, 512, 0.03, 0.00, true), (3, 8, 1024, 0.12, 0.00, true),
    (3, 128, 32, 0.53, 0.00, true), (3, 128, 64, 0.69, 0.01, true), (3, 128, 128, 0.26, 0.00, false),
    (3, 128, 256, 0.14, 0.00, false), (3, 128, 512, 0.11, 0.00, true), (3, 128, 1024, 0.24, 0.00, false),
    (4, 8, 32, 0.11, 0.00, true), (4, 8, 128, 0.07, 0.00, true), (4, 8, 512, 0.02, 0.00, true),
    (4, 8, 1024, 0.19, 0.00, false), (4, 8, 2048, 0.34, 0.00, false), (4, 8, 4096, 0.29, 0.00, false),
    (5, 8, 8, 0.46, 0.19, true), (5, 8, 32, 0.06, 0.00, true), (5, 8, 128, 0.05, 0.00, true),
    (5, 8, 512, 0.01, 0.00, true), (5, 8, 1024, 0.00, 0.00, false), (5, 8, 4096, 0.00, 0.00, false),
    (5, 128, 8, 0.55, 0.22, true), (5, 128, 32, 0.32, 0.04, true), (5, 128, 128, 0.15, 0.01, true),
    (5, 128, 512, 0.01, 0.00, false), (5, 128, 1024, 0.00, 0.00, false), (5, 128, 4096, 0.00, 0.00, false),
    (6, 8, 8, 0.49, 0.16, true), (6, 8, 32, 0.05, 0.00, true), (6, 8, 128, 0.03, 0.00, true),
    (6, 8, 512, 0.01, 0.00, true), (6, 8, 1024, 0.01, 0.00, false), (6, 8, 4096, 0.00, 0.00, false),
    (6, 128, 8, 0.56, 0.22, true), (6, 128, 32, 0.36, 0.02, true), (6, 128, 128, 0.11, 0.00, false),
    (6, 128, 512, 0.01, 0.00, false), (6, 128, 1024, 0.02, 0.00, false), (6, 128, 4096, 0.01, 0.00, false),
];

/// The sending and receiving processes' % of a core, where the sweep recorded them
/// (sweeps 3 and 4 at 8K writes, 5 and 6 at both): (sweep, block, --window, sender,
/// receiver).
#[rustfmt::skip]
const PROCESS: [(u8, u32, u32, f64, f64); 36] = [
    (3, 8, 32, 44.0, 39.0), (3, 8, 64, 36.0, 32.0), (3, 8, 128, 45.0, 29.0),
    (3, 8, 256, 46.0, 16.0), (3, 8, 512, 31.0, 15.0), (3, 8, 1024, 32.0, 19.0),
    (4, 8, 32, 84.0, 37.0), (4, 8, 128, 83.0, 28.0), (4, 8, 512, 84.0, 26.0),
    (4, 8, 1024, 43.0, 44.0), (4, 8, 2048, 38.0, 49.0), (4, 8, 4096, 34.0, 37.0),
    (5, 8, 8, 25.0, 50.0), (5, 8, 32, 88.0, 35.0), (5, 8, 128, 86.0, 27.0),
    (5, 8, 512, 87.0, 26.0), (5, 8, 1024, 93.0, 28.0), (5, 8, 4096, 95.0, 26.0),
    (5, 128, 8, 17.0, 50.0), (5, 128, 32, 54.0, 57.0), (5, 128, 128, 83.0, 61.0),
    (5, 128, 512, 92.0, 37.0), (5, 128, 1024, 93.0, 33.0), (5, 128, 4096, 93.0, 37.0),
    (6, 8, 8, 29.0, 52.0), (6, 8, 32, 89.0, 40.0), (6, 8, 128, 85.0, 31.0),
    (6, 8, 512, 84.0, 31.0), (6, 8, 1024, 91.0, 31.0), (6, 8, 4096, 94.0, 34.0),
    (6, 128, 8, 18.0, 52.0), (6, 128, 32, 51.0, 57.0), (6, 128, 128, 85.0, 55.0),
    (6, 128, 512, 93.0, 37.0), (6, 128, 1024, 83.0, 38.0), (6, 128, 4096, 91.0, 38.0),
];

#[test]
fn the_window_is_named_where_raising_it_paid_by_the_recorded_sweeps() {
    let mut wrong = Vec::new();
    for (sweep, block_k, window_k, rwnd, sndbuf, raise_pays) in SWEEPS {
        // Host CPUs busy (the sweeps ran on a loaded 2-core machine), no process
        // saturated; both processes alike where the sweep did not record them.
        let (snd, rcv) = PROCESS
            .iter()
            .find(|p| (p.0, p.1, p.2) == (sweep, block_k, window_k))
            .map_or((25.0, 25.0), |p| (p.3, p.4));
        let (c, a) = (
            end(End::Client, snd, 30.0, 185.0),
            end(End::Agent, rcv, 30.0, 185.0),
        );
        let window = window_k * 1024;
        let v = decide(&Evidence {
            receiver_buffer: Some(2 * window),
            sender_buffer: Some(2 * window),
            link_bps: None,
            nominal_link_bps: Some(10e9),
            min_rtt_us: Some(5),
            srtt_us: Some(60),
            goodput_bps: Some(3e9),
            software_link: Some("veth".into()),
            setup: Setup {
                block: block_k * 1024,
                sender_mtu: Some(9000),
                sender_kind: Some("veth".into()),
                ..setup(Some(window))
            },
            ..ev(shares(0.8, rwnd, sndbuf), &c, &a)
        });
        let named = matches!(v.cause, LimitCause::ReceiveWindow | LimitCause::SendBuffer);
        if named != raise_pays {
            wrong.push((sweep, block_k, window_k));
        }
    }
    // What stays wrong: sweeps 1 and 2 recorded no process CPU, so their windows of
    // 128K to 1M under 8K writes (which lost goodput while the kernel's clocks read
    // 2-29%) cannot be told apart there; settings of the loaded sweep 2 within a few
    // points of the clock threshold; and sweep 3's 512K at 128K writes, whose "gain"
    // is a slow median between two windows as fast as the default; sweep 5's 128K
    // window at 128K writes (+24% from a larger one, clocks at 16%: the sender's-CPU
    // rule covers writes below 64 KiB only). Every setting of sweeps 3 to 5 under 8K
    // writes is right, and every setting of sweep 6 (the rule's confirmation, run after
    // it was fixed): the sender's CPU names the windows the clocks miss, and a
    // saturated sender is the CPU (BENCHMARKS.md §11).
    assert_eq!(
        wrong,
        [
            (1, 8, 128),
            (1, 8, 256),
            (1, 8, 512),
            (2, 8, 128),
            (2, 8, 256),
            (2, 8, 512),
            (2, 8, 1024),
            (2, 128, 128),
            (2, 128, 1024),
            (3, 128, 512),
            (5, 128, 128),
        ]
    );
}
