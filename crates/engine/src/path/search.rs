//! The size search of one direction, independent of how a probe is sent: binary search
//! from a safe base up to the interface MTU, each size tried several times with
//! control probes in between, then confirmation at the found size and one byte more.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    fn passes(&mut self, size: u32) -> bool {
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
                    return false;
                }
                Outcome::Lost => {
                    if size > self.base && tried < self.budget() {
                        self.ctrl_sent += 1;
                        if self.once(self.base) != Outcome::Passed {
                            self.ctrl_lost += 1;
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
        if s.passes(size) {
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
    // Confirmation: the found size again, and one byte more (when within the bound).
    if lo > base && !s.passes(lo) {
        return search_again(s.p, base, lo, top);
    }
    if lo < top && s.passes(lo + 1) {
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
    })
}

/// The found size failed its confirmation: search again below it.
fn search_again<P: Prober>(
    p: &mut P,
    base: u32,
    failed: u32,
    top: u32,
) -> Result<DirResult, SearchError> {
    let mut r = search(p, base, failed - 1)?;
    r.top = top;
    if r.limit == Limit::Top {
        r.limit = Limit::Silent;
    }
    Ok(r)
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
