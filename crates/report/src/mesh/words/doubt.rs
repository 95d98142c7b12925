//! Measurements refused as evidence, in words: a node whose results contradict its
//! peers', and results no path can carry.

use mtuperf_engine::mesh::{Claim, Contradiction, Implausible};

use super::{how, some, Say, Words};

impl Say<'_> {
    /// "n3 reports n1→n3 576 (ICMP frag-needed), n1 reports 9000 (at the sender's NIC)".
    fn contradiction(&self, c: &Contradiction) -> String {
        let claim = |x: &Claim| format!("{} ({})", x.mtu, how(x.stop));
        let mut parts = c.claims.iter();
        let first = parts.next().map_or_else(String::new, |x| {
            format!(
                "{} reports {}→{} {}",
                self.node(x.by),
                self.node(c.from),
                self.node(c.to),
                claim(x)
            )
        });
        let rest: Vec<String> = parts
            .map(|x| format!("{} reports {}", self.node(x.by), claim(x)))
            .collect();
        std::iter::once(first)
            .chain(rest)
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub(super) fn disputed(&self, node: Option<usize>, on: &str, cs: &[Contradiction]) -> Words {
        let evidence = some(cs.iter().map(|c| self.contradiction(c)).collect());
        if let Some(v) = node {
            let v = self.node(v);
            return Words {
                summary: format!(
                    "results about node {v} on {on} disagree: its measurements contradict every peer's, so none of them is used; no verdict on its paths rests on them"
                ),
                evidence,
                next: format!(
                    "check node {v}'s agent and host (the same mtuperf, unmodified?), then mtuperf path from {v} toward a peer and from that peer toward {v}"
                ),
            };
        }
        let mut pairs: Vec<(usize, usize)> = cs
            .iter()
            .map(|c| (c.from.min(c.to), c.from.max(c.to)))
            .collect();
        pairs.dedup();
        let names = some(
            pairs
                .iter()
                .map(|&(a, b)| format!("{} ↔ {}", self.node(a), self.node(b)))
                .collect(),
        );
        Words {
            summary: format!(
                "results about {names} on {on} disagree: both sides are left out of the diagnosis"
            ),
            evidence,
            next: "mtuperf path from each end toward the other, by hand, to see which is right"
                .into(),
        }
    }

    pub(super) fn implausible(&self, n: &str, on: &str, claims: &[Implausible]) -> Words {
        let k = claims.len();
        Words {
            summary: format!(
                "node {n} reported {k} {} on {on} that no path can carry: refused as evidence",
                if k == 1 {
                    "measurement"
                } else {
                    "measurements"
                }
            ),
            evidence: some(
                claims
                    .iter()
                    .map(|c| {
                        format!(
                            "{}→{} {} (largest packet {}), above {}",
                            self.node(c.from),
                            self.node(c.to),
                            c.mtu,
                            c.largest_ok,
                            c.limit
                        )
                    })
                    .collect(),
            ) + " (the smaller NIC MTU of the two ends, as they reported it)",
            next: format!(
                "check node {n}'s agent (the same mtuperf, unmodified?) and its NIC MTU on {on}"
            ),
        }
    }
}
