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
    // base, 9000 (ICMP), 1500, 1501 (ICMP): refused outright, the answer is certain.
    assert_eq!(p.sent, vec![1280, 9000, 1500, 1501]);
}

#[test]
fn a_size_that_passed_at_the_top_is_not_tried_again() {
    let mut p = FakePath::new(9000, Outcome::Lost);
    let r = search(&mut p, 1280, 9000).unwrap();
    assert_eq!((r.largest_ok, &r.limit), (9000, &Limit::Top));
    assert_eq!(p.sent, vec![1280, 9000]);
}

/// While the bisection steers, a silent size whose control probe passes is not tried
/// again (no loss is plausible); one byte more than the answer gets every attempt.
#[test]
fn silent_sizes_are_retried_only_where_loss_is_plausible() {
    let mut p = FakePath::new(1500, Outcome::Lost);
    let r = search(&mut p, 1280, 9000).unwrap();
    assert_eq!((r.largest_ok, &r.limit), (1500, &Limit::Silent));
    let first: Vec<u32> = p.sent.iter().copied().skip(1).take(3).collect();
    assert_eq!(first, vec![9000, 1280, 5140]);
    let tail = &p.sent[p.sent.len() - 5..];
    assert_eq!(tail, [1501, 1280, 1501, 1280, 1501]);
    // A steering size costs one lost probe; the answer's next byte, ATTEMPTS.
    let steering = p.sent.iter().filter(|&&x| x > 1500).count() as u32 - ATTEMPTS;
    assert_eq!(r.lost, steering + ATTEMPTS);
}

/// A path whose large probes vanish and whose control probes are lost too: loss is
/// plausible, so the steering sizes are tried again.
#[test]
fn a_lost_control_probe_makes_a_steering_size_tried_again() {
    struct LossyControl {
        sent: Vec<u32>,
    }
    impl Prober for LossyControl {
        fn probe(&mut self, size: u32) -> Outcome {
            self.sent.push(size);
            // The second probe of the base (the first control probe) is lost.
            let bases = self.sent.iter().filter(|&&x| x == 1280).count();
            if size > 1500 || (size == 1280 && bases == 2) {
                Outcome::Lost
            } else {
                Outcome::Passed
            }
        }
    }
    let mut p = LossyControl { sent: Vec::new() };
    let r = search(&mut p, 1280, 9000).unwrap();
    assert_eq!(r.largest_ok, 1500);
    let first: Vec<u32> = p.sent.iter().copied().skip(1).take(5).collect();
    assert_eq!(first, vec![9000, 1280, 9000, 1280, 9000]);
}

/// The bound the mesh's speed rests on: a silent direction's search loses at most
/// one probe per bisection step and ATTEMPTS at the end, so with each probe's wait
/// bounded by the pair's round trip (`wait::bound`) its silent time is bounded.
#[test]
fn a_silent_directions_lost_probes_are_bounded_by_the_bisection() {
    for (base, top) in [(576u32, 9000u32), (1280, 9000), (576, 65_535), (1280, 1500)] {
        let steps = (top - base + 1).next_power_of_two().trailing_zeros() + 1;
        for mtu in [base + 1, 1500, 1504, 4470, top - 1] {
            if mtu >= top || mtu <= base {
                continue;
            }
            let mut p = FakePath::new(mtu, Outcome::Lost);
            let r = search(&mut p, base, top).unwrap();
            assert_eq!((r.largest_ok, &r.limit), (mtu, &Limit::Silent));
            assert!(
                r.lost <= steps + ATTEMPTS,
                "{base}..{top} at {mtu}: {} lost, bound {}",
                r.lost,
                steps + ATTEMPTS
            );
            assert!(r.probes <= 2 * (steps + ATTEMPTS) + 1, "{r:?}");
        }
    }
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
