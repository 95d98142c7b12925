//! Watch results as the history keeps them (runs labelled "watch": one path run per
//! check, one rr run per probe), read back as a trend; drawn as the trend page
//! (`html`) and exported as OpenMetrics (`openmetrics`).

pub mod html;
pub mod openmetrics;

use std::collections::BTreeMap;

use mtuperf_engine::path::PathResult;
use mtuperf_engine::rr::RrResult;

use crate::record::RunKind;

/// One stored watch run.
pub struct StoredWatch<'a> {
    /// The peer as given to --watch.
    pub target: &'a str,
    /// Path (a check) or rr (a probe); other kinds are left out.
    pub kind: RunKind,
    pub started_unix_ms: i64,
    pub document: &'a str,
}

/// The agent-mode result of a stored path document (`agent`).
pub fn path_of(doc: &str) -> Option<PathResult> {
    let v: serde_json::Value = serde_json::from_str(doc).ok()?;
    serde_json::from_value(v.get("agent")?.clone()).ok()
}

/// The (last) step's result of a stored rr document (`steps[].result`).
pub fn rr_of(doc: &str) -> Option<RrResult> {
    let v: serde_json::Value = serde_json::from_str(doc).ok()?;
    let step = v.get("steps")?.as_array()?.last()?;
    serde_json::from_value(step.get("result")?.clone()).ok()
}

/// One path check in the trend.
#[derive(Debug, Clone, PartialEq)]
pub struct MtuPoint {
    pub unix_ms: i64,
    pub forward: Option<u32>,
    pub reverse: Option<u32>,
    pub expect: u32,
    pub ok: bool,
}

/// One rr probe in the trend (ns, on the checking node's clock). No block answered:
/// no latency (None), never a point at 0.
#[derive(Debug, Clone, PartialEq)]
pub struct RrPoint {
    pub unix_ms: i64,
    pub p50_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub lost: u64,
    pub sent: u64,
}

/// One peer's history, oldest first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PeerTrend {
    pub mtu: Vec<MtuPoint>,
    pub rr: Vec<RrPoint>,
}

/// The watch history by peer, over the window the caller chose.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trend {
    pub since_unix_ms: i64,
    pub until_unix_ms: i64,
    pub peers: BTreeMap<String, PeerTrend>,
}

impl Trend {
    pub fn of(runs: &[StoredWatch<'_>], since_unix_ms: i64, until_unix_ms: i64) -> Trend {
        let mut t = Trend {
            since_unix_ms,
            until_unix_ms,
            peers: BTreeMap::new(),
        };
        for r in runs {
            let peer = t.peers.entry(r.target.to_string()).or_default();
            match r.kind {
                RunKind::Path => {
                    if let Some(p) = path_of(r.document) {
                        peer.mtu.push(MtuPoint {
                            unix_ms: r.started_unix_ms,
                            forward: Some(p.forward_mtu),
                            reverse: Some(p.reverse_mtu),
                            expect: p.expect,
                            ok: p.ok,
                        });
                    }
                }
                RunKind::Rr => {
                    if let Some(rr) = rr_of(r.document) {
                        peer.rr.push(RrPoint {
                            unix_ms: r.started_unix_ms,
                            p50_ns: rr.client.latency.p50,
                            p99_ns: rr.client.latency.p99,
                            lost: rr.client.counts.lost,
                            sent: rr.client.counts.requests_sent,
                        });
                    }
                }
                _ => {}
            }
        }
        t.peers.retain(|_, p| !p.mtu.is_empty() || !p.rr.is_empty());
        for p in t.peers.values_mut() {
            p.mtu.sort_by_key(|x| x.unix_ms);
            p.rr.sort_by_key(|x| x.unix_ms);
        }
        t
    }
}

/// The checks where a direction's MTU changed from the check before: (time, direction,
/// before, after). A switch replaced at 3 a.m. is one line here.
pub fn steps(points: &[MtuPoint]) -> Vec<(i64, &'static str, Option<u32>, Option<u32>)> {
    let mut out = Vec::new();
    for w in points.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        if a.forward != b.forward {
            out.push((b.unix_ms, "forward", a.forward, b.forward));
        }
        if a.reverse != b.reverse {
            out.push((b.unix_ms, "reverse", a.reverse, b.reverse));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(t: i64, f: u32, r: u32) -> MtuPoint {
        MtuPoint {
            unix_ms: t,
            forward: Some(f),
            reverse: Some(r),
            expect: 9000,
            ok: f >= 9000 && r >= 9000,
        }
    }

    #[test]
    fn a_changed_mtu_is_one_step() {
        let pts = [
            p(1, 9000, 9000),
            p(2, 9000, 9000),
            p(3, 1500, 9000),
            p(4, 1500, 9000),
        ];
        assert_eq!(steps(&pts), vec![(3, "forward", Some(9000), Some(1500))]);
        assert!(steps(&pts[..2]).is_empty());
    }
}
