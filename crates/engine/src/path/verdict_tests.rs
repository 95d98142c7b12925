//! Tests of the verdict: table-driven cases, the slack reading, the texts.
use std::net::{IpAddr, Ipv4Addr};

use super::*;

fn dir(ok: u32, top: u32, limit: Limit) -> DirResult {
    DirResult {
        largest_ok: ok,
        top,
        limit,
        probes: 1,
        lost: 0,
    }
}

#[test]
fn verdicts() {
    let lan = Context {
        local_mtu: 9000,
        peer_mtu: Some(9000),
        same_segment: true,
    };
    let routed = Context {
        peer_mtu: Some(1500),
        same_segment: false,
        ..lan
    };
    let r = Some(IpAddr::V4(Ipv4Addr::new(198, 18, 3, 1)));
    let icmp = Limit::Icmp { mtu: 1500, from: r };
    let cases = [
        (
            dir(9000, 9000, Limit::Top),
            dir(9000, 9000, Limit::Top),
            lan,
            Verdict::Carries { mtu: 9000 },
        ),
        (
            dir(1500, 9000, icmp.clone()),
            dir(1500, 1500, Limit::Top),
            routed,
            Verdict::LimitedByHop {
                mtu: 1500,
                hop: "198.18.3.1".into(),
            },
        ),
        (
            dir(1500, 9000, Limit::Silent),
            dir(1500, 1500, Limit::Top),
            routed,
            Verdict::BlackHole {
                mtu: 1500,
                hop: None,
            },
        ),
        (
            dir(1500, 9000, Limit::Silent),
            dir(1500, 1500, Limit::Top),
            Context {
                same_segment: true,
                ..routed
            },
            Verdict::Mismatch {
                local_mtu: 9000,
                peer_mtu: 1500,
            },
        ),
        (
            dir(9000, 9000, Limit::Top),
            dir(4000, 9000, Limit::Silent),
            lan,
            Verdict::Asymmetric {
                forward: 9000,
                reverse: 4000,
            },
        ),
    ];
    for (f, r, cx, want) in cases {
        assert_eq!(decide(&f, &r, cx).verdict, want);
    }
}

#[test]
fn link_layer_slack_is_read_as_the_mtu() {
    let lan = Context {
        local_mtu: 9000,
        peer_mtu: Some(9000),
        same_segment: true,
    };
    let switch = Verdict::SwitchPort {
        mtu: 1500,
        local_mtu: 9000,
        peer_mtu: 9000,
    };
    let icmp = Limit::Icmp {
        mtu: 1500,
        from: Some(IpAddr::V4(Ipv4Addr::new(198, 18, 7, 254))),
    };
    let cases = [
        // Both NICs 9000, one bridge port at 1500: 4 bytes of slack one way only.
        (
            dir(1500, 9000, Limit::Silent),
            dir(1504, 9000, Limit::Silent),
            lan,
            switch.clone(),
            (1500, 1500),
        ),
        (
            dir(1504, 9000, Limit::Silent),
            dir(1504, 9000, Limit::Silent),
            lan,
            switch,
            (1500, 1500),
        ),
        // The peer's own NIC at 1500 takes a VLAN tag's worth more on receive.
        (
            dir(1504, 9000, Limit::Silent),
            dir(1500, 1500, Limit::Top),
            Context {
                peer_mtu: Some(1500),
                ..lan
            },
            Verdict::Mismatch {
                local_mtu: 9000,
                peer_mtu: 1500,
            },
            (1500, 1500),
        ),
        // This host is the small one.
        (
            dir(1500, 1500, Limit::Top),
            dir(1504, 9000, Limit::Silent),
            Context {
                local_mtu: 1500,
                ..lan
            },
            Verdict::Mismatch {
                local_mtu: 1500,
                peer_mtu: 9000,
            },
            (1500, 1500),
        ),
        // Sizes a few bytes apart with no MTU near them: still one limit.
        (
            dir(3002, 9000, Limit::Silent),
            dir(3000, 9000, Limit::Silent),
            Context {
                same_segment: false,
                ..lan
            },
            Verdict::BlackHole {
                mtu: 3000,
                hop: None,
            },
            (3000, 3000),
        ),
        // A real asymmetric route: forward 9000, return through a 1500 hop.
        (
            dir(9000, 9000, Limit::Top),
            dir(1500, 9000, icmp),
            Context {
                same_segment: false,
                ..lan
            },
            Verdict::Asymmetric {
                forward: 9000,
                reverse: 1500,
            },
            (9000, 1500),
        ),
        // More than the slack apart is asymmetric even on one segment.
        (
            dir(1500, 9000, Limit::Silent),
            dir(1520, 9000, Limit::Silent),
            lan,
            Verdict::Asymmetric {
                forward: 1500,
                reverse: 1520,
            },
            (1500, 1520),
        ),
    ];
    for (f, r, cx, want, mtus) in cases {
        let got = decide(&f, &r, cx);
        assert_eq!(got.verdict, want, "{f:?} {r:?}");
        assert_eq!((got.forward_mtu, got.reverse_mtu), mtus);
    }
}

#[test]
fn as_mtu_prefers_interfaces_seen_then_common_mtus_then_the_other_direction() {
    assert_eq!(as_mtu(1504, &[9000], None), 1500);
    assert_eq!(as_mtu(1508, &[9000], None), 1500);
    assert_eq!(as_mtu(1509, &[9000], None), 1509);
    assert_eq!(as_mtu(4004, &[4000, 9000], None), 4000);
    assert_eq!(as_mtu(4004, &[9000], Some(4000)), 4000);
    assert_eq!(as_mtu(4000, &[9000], Some(4004)), 4000);
    assert_eq!(as_mtu(9000, &[9000], Some(1500)), 9000);
}

#[test]
fn text_names_ip_and_payload_sizes() {
    let sw = Verdict::SwitchPort {
        mtu: 1500,
        local_mtu: 9000,
        peer_mtu: 9000,
    };
    assert_eq!(
        sw.text(false),
        "switch port: an L2 device between these two interfaces (a switch port, a bridge, a VLAN sub-interface) passes at most 1500; both NICs say 9000 (1500 = 1472 + 28)"
    );
    assert_eq!(
        Verdict::Carries { mtu: 9000 }.text(false),
        "carries MTU 9000 end to end (9000 = 8972 + 28)"
    );
    assert!(Verdict::BlackHole {
        mtu: 1500,
        hop: None
    }
    .text(true)
    .contains("1500 = 1452 + 48"));
    let mixed = Verdict::SwitchPort {
        mtu: 1500,
        local_mtu: 9000,
        peer_mtu: 4000,
    };
    assert!(mixed
        .text(false)
        .contains("passes at most 1500; the NICs say 9000 (local) and 4000 (peer)"));
    let small_here = Verdict::Mismatch {
        local_mtu: 1500,
        peer_mtu: 9000,
    };
    assert_eq!(
        small_here.text(false),
        "mismatch: peer MTU 9000, this host accepts ≤ 1500 on the same segment"
    );
    let named = Verdict::BlackHole {
        mtu: 1500,
        hop: Some("1 198.18.4.254".into()),
    };
    assert_eq!(
        named.text(false),
        "black hole above 1500 after hop 1 198.18.4.254: larger packets vanish past it, no ICMP (1500 = 1472 + 28)"
    );
}

#[test]
fn a_limit_below_two_different_nics_is_a_switch_port() {
    let cx = Context {
        local_mtu: 9000,
        peer_mtu: Some(4000),
        same_segment: true,
    };
    let got = decide(
        &dir(1504, 9000, Limit::Silent),
        &dir(1500, 4000, Limit::Silent),
        cx,
    );
    assert_eq!(
        got.verdict,
        Verdict::SwitchPort {
            mtu: 1500,
            local_mtu: 9000,
            peer_mtu: 4000
        }
    );
    // Loopback: both ends stop at the largest IP packet, below lo's 65536: carries.
    let lo = Context {
        local_mtu: 65_536,
        peer_mtu: Some(65_536),
        same_segment: true,
    };
    let top = dir(65_535, 65_535, Limit::Top);
    assert_eq!(
        decide(&top, &top, lo).verdict,
        Verdict::Carries { mtu: 65_535 }
    );
}
