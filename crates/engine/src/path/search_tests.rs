//! Table-driven tests of the search with a fake path.
use std::net::{IpAddr, Ipv4Addr};

use super::*;

const ROUTER: IpAddr = IpAddr::V4(Ipv4Addr::new(198, 18, 3, 1));

/// A fake path: passes up to `mtu`; above it answers with ICMP, silence or a local
/// error; loses `loss_pct` of all probes (deterministic LCG).
struct FakePath {
    mtu: u32,
    above: Outcome,
    loss_pct: u64,
    rng: u64,
    sent: Vec<u32>,
}

impl FakePath {
    fn new(mtu: u32, above: Outcome) -> FakePath {
        FakePath {
            mtu,
            above,
            loss_pct: 0,
            rng: 0x9e37_79b9_7f4a_7c15,
            sent: Vec::new(),
        }
    }
}

impl Prober for FakePath {
    fn probe(&mut self, size: u32) -> Outcome {
        self.sent.push(size);
        self.rng = self
            .rng
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        if (self.rng >> 33) % 100 < self.loss_pct {
            return Outcome::Lost;
        }
        if size <= self.mtu {
            Outcome::Passed
        } else {
            self.above
        }
    }
}

#[test]
fn table() {
    let icmp = Outcome::TooBig {
        mtu: 1500,
        from: Some(ROUTER),
    };
    let local = Outcome::TooBig {
        mtu: 1500,
        from: None,
    };
    // (path mtu, outcome above it, top, expected largest, expected limit)
    let cases = [
        (9000, Outcome::Lost, 9000, 9000, Limit::Top),
        (1500, Outcome::Lost, 1500, 1500, Limit::Top),
        (
            1500,
            icmp,
            9000,
            1500,
            Limit::Icmp {
                mtu: 1500,
                from: Some(ROUTER),
            },
        ),
        (1500, Outcome::Lost, 9000, 1500, Limit::Silent),
        (4321, Outcome::Lost, 9000, 4321, Limit::Silent),
        (1500, local, 9000, 1500, Limit::Local { mtu: 1500 }),
    ];
    for (mtu, above, top, want, limit) in cases {
        let mut p = FakePath::new(mtu, above);
        let r = search(&mut p, 1280, top).unwrap();
        assert_eq!(
            (r.largest_ok, &r.limit),
            (want, &limit),
            "path {mtu} top {top}"
        );
        assert_eq!(r.top, top);
        assert_eq!(r.probes as usize, p.sent.len());
    }
}

#[test]
fn icmp_mtu_is_tried_next_so_few_probes_are_needed() {
    let mut p = FakePath::new(
        1500,
        Outcome::TooBig {
            mtu: 1500,
            from: Some(ROUTER),
        },
    );
    let r = search(&mut p, 1280, 9000).unwrap();
    assert_eq!(r.largest_ok, 1500);
    // base, 9000 (ICMP), 1500, 1501 (ICMP), then confirmation: 1500 and 1501.
    assert_eq!(p.sent, vec![1280, 9000, 1500, 1501, 1500, 1501]);
}

#[test]
fn silent_sizes_are_retried_with_control_probes_between() {
    let mut p = FakePath::new(1500, Outcome::Lost);
    search(&mut p, 1280, 9000).unwrap();
    let first: Vec<u32> = p.sent.iter().copied().skip(1).take(5).collect();
    assert_eq!(first, vec![9000, 1280, 9000, 1280, 9000]);
}

#[test]
fn random_loss_of_20_percent_still_finds_the_limit() {
    let mut lost = 0;
    for (mtu, above) in [
        (9000, Outcome::Lost),
        (1500, Outcome::Lost),
        (3000, Outcome::Lost),
    ] {
        for seed in 1..40u64 {
            let mut p = FakePath::new(mtu, above);
            p.loss_pct = 20;
            p.rng = seed;
            let r = search(&mut p, 1280, 9000).unwrap();
            assert_eq!(r.largest_ok, mtu, "seed {seed}");
            lost += r.lost;
        }
    }
    assert!(lost > 100, "the fake path lost only {lost} probes");
}

#[test]
fn a_dead_base_is_an_error_not_a_limit() {
    let mut p = FakePath::new(100, Outcome::Lost);
    assert_eq!(
        search(&mut p, 1280, 9000),
        Err(SearchError::BaseFails(1280))
    );
}

/// A path whose top size loses its first `lose` probes (a burst of random loss), then
/// carries everything.
struct Burst {
    top: u32,
    lose: u32,
}

impl Prober for Burst {
    fn probe(&mut self, size: u32) -> Outcome {
        if size == self.top && self.lose > 0 {
            self.lose -= 1;
            return Outcome::Lost;
        }
        Outcome::Passed
    }
}

#[test]
fn a_top_size_lost_by_chance_is_found_when_its_confirmation_passes() {
    let mut p = Burst {
        top: 9000,
        lose: ATTEMPTS,
    };
    let r = search(&mut p, 1280, 9000).unwrap();
    assert_eq!((r.largest_ok, &r.limit), (9000, &Limit::Top), "{r:?}");
    assert!(r.lost >= ATTEMPTS, "{r:?}");
}
