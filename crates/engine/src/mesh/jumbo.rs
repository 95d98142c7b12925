//! Jumbo vs standard across the cluster: when the mesh covers networks of different
//! MTUs (a public 1500 network and private 9000 ones, or `--expect` per network),
//! the same node pairs' block test compared across them. Each ordered node pair
//! measured on both networks is one paired observation (its ratio, jumbo over
//! standard), so a slow node slows both sides of its pairs and cancels: seed 004's
//! "-25% block latency" question answered for the whole cluster, with intervals.

use mtuperf_proto::msg::mesh::RrSummary;

pub use super::doc::{MtuComparison, Paired};
use super::model::{MeshNetwork, MeshTests, PairResult};

impl Paired {
    /// The interval exists and excludes 0.
    pub fn significant(&self) -> bool {
        matches!((self.low, self.high), (Some(l), Some(h)) if l > 0.0 || h < 0.0)
    }
}

/// A pair's block test when it measured (a result, not failed).
fn measured(p: &PairResult) -> Option<&RrSummary> {
    p.rr.as_ref().filter(|_| p.failure(MeshTests::Rr).is_none())
}

fn blocks_per_s(r: &RrSummary) -> Option<f64> {
    (r.wall_ns > 0 && r.counts.blocks > 0).then(|| r.counts.blocks as f64 * 1e9 / r.wall_ns as f64)
}

fn median(xs: &[f64]) -> Option<f64> {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    mtuperf_stats::percentile(&v, 50.0)
}

/// One figure paired over `pairs` of (standard, jumbo) summaries.
fn paired(
    pairs: &[(&RrSummary, &RrSummary)],
    fig: fn(&RrSummary) -> Option<f64>,
) -> Option<Paired> {
    let (a, b): (Vec<f64>, Vec<f64>) = pairs
        .iter()
        .filter_map(|(s, j)| Some((fig(s)?, fig(j)?)))
        .unzip();
    let d = mtuperf_stats::paired_rel_diff(&a, &b)?;
    Some(Paired {
        standard: median(&a)?,
        jumbo: median(&b)?,
        rel: d.rel,
        low: d.low,
        high: d.high,
    })
}

/// Every two networks of different expected MTUs (smaller first, in network order)
/// that share at least one ordered node pair measured on both.
pub fn compare(networks: &[MeshNetwork], pairs: &[PairResult]) -> Vec<MtuComparison> {
    let mut out = Vec::new();
    for (si, s) in networks.iter().enumerate() {
        for (ji, j) in networks.iter().enumerate() {
            if s.expect >= j.expect {
                continue;
            }
            if let Some(c) = compare_two(si, ji, pairs) {
                out.push(c);
            }
        }
    }
    out.sort_by_key(|c| (c.standard, c.jumbo));
    out
}

fn compare_two(si: usize, ji: usize, pairs: &[PairResult]) -> Option<MtuComparison> {
    let on = |net: usize, from: usize, to: usize| {
        pairs
            .iter()
            .find(|p| (p.net, p.from, p.to) == (net, from, to))
            .and_then(measured)
    };
    let both: Vec<((usize, usize), &RrSummary, &RrSummary)> = pairs
        .iter()
        .filter(|p| p.net == si)
        .filter_map(|p| Some(((p.from, p.to), measured(p)?, on(ji, p.from, p.to)?)))
        .collect();
    if both.is_empty() {
        return None;
    }
    let answered = |r: &RrSummary| r.p50_ns.is_some() && r.counts.blocks > 0;
    let unanswered: Vec<(usize, usize)> = both
        .iter()
        .filter(|(_, s, j)| !answered(s) || !answered(j))
        .map(|x| x.0)
        .collect();
    let kept: Vec<(&RrSummary, &RrSummary)> = both
        .iter()
        .filter(|(_, s, j)| answered(s) && answered(j))
        .map(|&(_, s, j)| (s, j))
        .collect();
    Some(MtuComparison {
        standard: si,
        jumbo: ji,
        pairs: both.len(),
        unanswered,
        lost_standard: both.iter().map(|x| x.1.counts.lost).sum(),
        lost_jumbo: both.iter().map(|x| x.2.counts.lost).sum(),
        p50_ns: paired(&kept, |r| r.p50_ns.map(|x| x as f64)),
        p99_ns: paired(&kept, |r| r.p99_ns.map(|x| x as f64)),
        blocks_per_s: paired(&kept, blocks_per_s),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mtuperf_proto::msg::rr::{RrCounts, RrProto};

    fn rr(p50_us: Option<u64>, blocks: u64, lost: u64) -> RrSummary {
        RrSummary {
            proto: RrProto::Udp,
            block: 8192,
            request: 128,
            rate: None,
            timeout_ms: 500,
            counts: RrCounts {
                requests_sent: blocks + lost,
                blocks,
                lost,
                ..RrCounts::default()
            },
            unanswered: 0,
            p50_ns: p50_us.map(|x| x * 1000),
            p99_ns: p50_us.map(|x| x * 3000),
            p999_ns: p50_us.map(|x| x * 4000),
            max_ns: p50_us.map(|x| x * 5000),
            wall_ns: 1_000_000_000,
            served: blocks,
            fragments: None,
            interrupted_by: Vec::new(),
        }
    }

    fn net(name: &str, expect: u32) -> MeshNetwork {
        MeshNetwork {
            name: name.into(),
            cidr: "198.19.1.0/24".parse().unwrap(),
            expect,
            members: Vec::new(),
            source: super::super::NetSource::Shared,
        }
    }

    fn pair(net: usize, from: usize, to: usize, rr: Option<RrSummary>) -> PairResult {
        PairResult {
            rr,
            ..PairResult::new(net, from, to)
        }
    }

    /// Three nodes: the 9000 network (net 0, listed first) answers every pair's
    /// blocks in 30 µs, the 1500 one (net 1) in 48 µs; n3 asking on 1500 gets
    /// nothing (its reassembly fails). The comparison pairs the four others, counts
    /// the two left out and their lost blocks, and finds the jumbo network's p50
    /// 37.5% lower with an interval of its own (every pair's ratio alike).
    #[test]
    fn the_same_pairs_are_compared_and_the_unanswered_left_out() {
        let nets = [net("A", 9000), net("B", 1500), net("C", 9000)];
        let mut pairs = Vec::new();
        for (a, b) in [(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)] {
            pairs.push(pair(0, a, b, Some(rr(Some(30), 3000, 0))));
            let public = if a == 2 {
                rr(None, 0, 2)
            } else {
                rr(Some(48), 2000, 0)
            };
            pairs.push(pair(1, a, b, Some(public)));
        }
        let got = compare(&nets, &pairs);
        // B against A; C has no pair measured: nothing to compare with it.
        assert_eq!(got.len(), 1, "{got:?}");
        let c = &got[0];
        assert_eq!((c.standard, c.jumbo, c.pairs), (1, 0, 6));
        assert_eq!(c.unanswered, vec![(2, 0), (2, 1)]);
        assert_eq!((c.lost_standard, c.lost_jumbo), (4, 0));
        let p50 = c.p50_ns.as_ref().unwrap();
        assert_eq!((p50.standard, p50.jumbo), (48_000.0, 30_000.0));
        assert!((p50.rel + 0.375).abs() < 1e-12, "{p50:?}");
        assert!(p50.significant(), "{p50:?}");
        let bps = c.blocks_per_s.as_ref().unwrap();
        assert!((bps.rel - 0.5).abs() < 1e-12, "{bps:?}");
        assert!(c.p99_ns.is_some());
    }

    /// Networks of one MTU are not compared; a pair measured on one network only,
    /// or whose test failed, is no observation; two pairs give figures without an
    /// interval; no pair answered on both: counts and no figure.
    #[test]
    fn what_is_not_compared() {
        let same = [net("A", 9000), net("B", 9000)];
        let pairs = vec![
            pair(0, 0, 1, Some(rr(Some(30), 10, 0))),
            pair(1, 0, 1, Some(rr(Some(40), 10, 0))),
        ];
        assert!(compare(&same, &pairs).is_empty());
        let nets = [net("A", 1500), net("B", 9000)];
        let mut failed = pair(1, 1, 0, Some(rr(Some(20), 10, 0)));
        failed.failed.push(super::super::TestFailure {
            test: MeshTests::Rr,
            error: super::super::PairError::Cut {
                causes: vec![crate::Interrupt::AgentSide],
            },
            elapsed_ms: 10,
        });
        let pairs = vec![
            pair(0, 0, 1, Some(rr(Some(40), 10, 0))),
            pair(1, 0, 1, Some(rr(Some(20), 10, 0))),
            pair(0, 1, 0, Some(rr(Some(40), 10, 0))),
            failed,
            pair(0, 0, 2, Some(rr(Some(40), 10, 0))),
        ];
        let c = &compare(&nets, &pairs)[0];
        assert_eq!(c.pairs, 1);
        let p50 = c.p50_ns.as_ref().unwrap();
        assert!(
            (p50.rel + 0.5).abs() < 1e-12 && p50.low.is_none(),
            "{p50:?}"
        );
        assert!(!p50.significant());
        let pairs = vec![
            pair(0, 0, 1, Some(rr(None, 0, 3))),
            pair(1, 0, 1, Some(rr(Some(20), 10, 0))),
        ];
        let c = &compare(&nets, &pairs)[0];
        assert_eq!((c.pairs, c.unanswered.len(), c.lost_standard), (1, 1, 3));
        assert!(c.p50_ns.is_none() && c.p99_ns.is_none() && c.blocks_per_s.is_none());
    }
}
