//! The size search of one direction, independent of how a probe is sent: binary search
//! from a safe base up to the interface MTU, a silent size tried again (with control
//! probes in between) only where loss is plausible, then one byte more than the found
//! size tried every time allowed, which makes the answer certain.

use std::net::IpAddr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::wait::Waited;

/// What became of one probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Acknowledged by the far end.
    Passed,
    /// Refused as too big: by this host (`from` None, local EMSGSIZE) or by a router
    /// or the peer (ICMP frag-needed / packet too big), with the MTU it named.
    TooBig { mtu: u32, from: Option<IpAddr> },
    /// No answer and no error within the probe's timeout.
    Lost,
}

/// Sends one probe of `size` bytes (IP packet size) and reports its fate.
pub trait Prober {
    fn probe(&mut self, size: u32) -> Outcome;
}

/// Why the largest size that passed is the largest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Limit {
    /// The search reached its upper bound (the sending interface's MTU).
    Top,
    /// A router or the peer answered frag-needed / packet too big.
    Icmp { mtu: u32, from: Option<IpAddr> },
    /// This host refused larger sends (its route or interface MTU).
    Local { mtu: u32 },
    /// Larger probes vanished without any error: a black hole.
    Silent,
}

/// Result of one direction's search. Sizes are IP packet sizes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DirResult {
    /// Largest size that passed (confirmed).
    pub largest_ok: u32,
    /// The upper bound searched (interface MTU of the sending end).
    pub top: u32,
    pub limit: Limit,
    /// Probes sent, control probes included.
    pub probes: u32,
    /// Probes that got neither an answer nor an error.
    pub lost: u32,
    /// The slowest answer timed and the longest wait a probe was given (filled by
    /// the prober's owner; a lost probe cost at most that wait).
    #[serde(flatten)]
    pub waited: Waited,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SearchError {
    #[error("even {0}-byte probes (the safe base size) get no answer: is the agent's UDP port reachable (firewall)?")]
    BaseFails(u32),
}

/// Attempts per size before a silent size counts as a limit.
pub const ATTEMPTS: u32 = 3;
/// Most attempts per size, when control probes show heavy random loss.
const MAX_ATTEMPTS: u32 = 10;

struct Searcher<'a, P: Prober> {
    p: &'a mut P,
    base: u32,
    probes: u32,
    lost: u32,
    ctrl_sent: u32,
    ctrl_lost: u32,
    evidence: Option<Limit>,
    /// The last size refused outright (an ICMP error or this host's): certain.
    refused: Option<u32>,
}

impl<P: Prober> Searcher<'_, P> {
    fn once(&mut self, size: u32) -> Outcome {
        self.probes += 1;
        let o = self.p.probe(size);
        if o == Outcome::Lost {
            self.lost += 1;
        }
        o
    }

    /// Attempts needed so that random loss at the rate the control probes show fails
    /// a good size all times with probability below 1e-4 (3 when no loss is seen).
    fn budget(&self) -> u32 {
        if self.ctrl_lost == 0 {
            return ATTEMPTS;
        }
        let p = (f64::from(self.ctrl_lost) / f64::from(self.ctrl_sent)).clamp(0.05, 0.6);
        ((1e-4f64.ln() / p.ln()).ceil() as u32).clamp(ATTEMPTS, MAX_ATTEMPTS)
    }

    /// Tries `size` until it passes or has failed `budget()` times; a control probe at
    /// the base size follows each silent attempt, so loss is told from a size limit.
    /// A `steer`ing try (bisection: a wrong "fails" only narrows the search, which
    /// the final check of one byte more undoes) stops at the first silent attempt
    /// whose control probe passes: a retry there is only worth it where loss is
    /// plausible (a control probe was lost).
    fn passes(&mut self, size: u32, steer: bool) -> bool {
        let mut tried = 0;
        while tried < self.budget() {
            tried += 1;
            match self.once(size) {
                Outcome::Passed => return true,
                Outcome::TooBig { mtu, from } => {
                    self.evidence = Some(match from {
                        Some(_) => Limit::Icmp { mtu, from },
                        None => Limit::Local { mtu },
                    });
                    self.refused = Some(size);
                    return false;
                }
                Outcome::Lost => {
                    if size > self.base && tried < self.budget() {
                        self.ctrl_sent += 1;
                        if self.once(self.base) != Outcome::Passed {
                            self.ctrl_lost += 1;
                        } else if steer && self.ctrl_lost == 0 {
                            break;
                        }
                    }
                }
            }
        }
        if !matches!(
            self.evidence,
            Some(Limit::Icmp { .. } | Limit::Local { .. })
        ) {
            self.evidence = Some(Limit::Silent);
        }
        false
    }
}

/// Searches the largest size in `base..=top` that passes.
pub fn search<P: Prober>(p: &mut P, base: u32, top: u32) -> Result<DirResult, SearchError> {
    let base = base.min(top);
    let mut s = Searcher {
        p,
        base,
        probes: 0,
        lost: 0,
        ctrl_sent: 0,
        ctrl_lost: 0,
        evidence: None,
        refused: None,
    };
    // The base must pass; it gets every attempt allowed, since failing it ends the run.
    if !(0..MAX_ATTEMPTS).any(|_| s.once(base) == Outcome::Passed) {
        return Err(SearchError::BaseFails(base));
    }
    s.evidence = None;
    let (mut lo, mut hi) = (base, top + 1); // lo passes, hi fails (or is beyond top)
    let mut next = top;
    while hi - lo > 1 {
        let size = next.clamp(lo + 1, hi - 1);
        if s.passes(size, true) {
            lo = size;
        } else {
            hi = size;
        }
        // An ICMP or local error names the MTU: try exactly that next.
        next = match &s.evidence {
            Some(Limit::Icmp { mtu, .. } | Limit::Local { mtu }) if *mtu >= lo && *mtu < hi => {
                (*mtu).max(lo + 1)
            }
            _ => lo + (hi - lo) / 2,
        };
    }
    // The answer is certain once one byte more has failed every attempt (or was
    // refused outright); `lo` itself passed, which no loss can fake.
    if lo < top && s.refused != Some(lo + 1) && s.passes(lo + 1, false) {
        // One byte more passes now: its earlier failure was random loss (every attempt
        // of it lost), not a limit. Search again above it.
        let (probes, lost) = (s.probes, s.lost);
        let mut r = search(s.p, lo + 1, top)?;
        r.probes += probes;
        r.lost += lost;
        return Ok(r);
    }
    let limit = if lo >= top {
        Limit::Top
    } else {
        s.evidence.clone().unwrap_or(Limit::Silent)
    };
    Ok(DirResult {
        largest_ok: lo,
        top,
        limit,
        probes: s.probes,
        lost: s.lost,
        waited: Waited::default(),
    })
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
