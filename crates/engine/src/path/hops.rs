//! `path --hops`: per-hop discovery like tracepath, with scamper's black-hole search.
//! TTL-limited DF UDP probes; the error queue gives each hop's address (ICMP time
//! exceeded) and the MTU a hop reports (frag-needed / packet too big); port
//! unreachable marks the destination. When a large probe gets no answer at a TTL
//! where a small one does, the large one vanished past the last hop that answered
//! large probes: that hop is named, the size that still passes is searched there,
//! and the walk goes on at that size.

use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use mtuperf_proto::failed::Failed;
use mtuperf_sys::sockopt::{self, ErrQueueEntry, Origin, PmtuMode};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{LocalView, PathResult};
use crate::client::Session;
use crate::config::PathConfig;
use crate::diagnosis::pair::{self, End, Pair, Way};
use crate::diagnosis::Diagnosis;
use crate::EngineError;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Hop {
    pub ttl: u32,
    /// None when the hop did not answer.
    pub addr: Option<IpAddr>,
    /// The MTU this hop reported in frag-needed / packet too big.
    pub reports_mtu: Option<u32>,
    pub destination: bool,
    /// IP packet size of the probe this hop answered (None: no answer).
    pub probe_size: Option<u32>,
}

/// Large probes vanish, without ICMP, past a hop that still answers them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BlackHoleHop {
    /// TTL of the last hop that answered probes of `vanishes` bytes (0: none did,
    /// they vanish on this host's first link).
    pub last_ttl: u32,
    /// That hop's address.
    pub last_addr: Option<IpAddr>,
    /// The TTL at which `vanishes`-byte probes got no answer while small ones did.
    pub at_ttl: u32,
    /// Largest size found to reach `at_ttl`.
    pub passes: u32,
    /// Smallest size found to vanish before `at_ttl` (`passes` + 1).
    pub vanishes: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct HopsResult {
    pub target: IpAddr,
    pub v6: bool,
    pub local: LocalView,
    /// This host's address toward the target.
    pub local_addr: IpAddr,
    pub hops: Vec<Hop>,
    /// Where large probes vanish without ICMP, when they do.
    pub black_hole: Option<BlackHoleHop>,
    /// Size (IP packet) that reached the destination, if it answered.
    pub path_mtu: Option<u32>,
    pub reached: bool,
    /// The agent's view of the pair, when one answered at the target: its NIC MTU and
    /// both directions (a `path` run), which the walk alone cannot see.
    pub agent: Option<Box<PathResult>>,
    /// Why there is no agent's view (none answered, or its run failed; a refusal
    /// typed).
    pub agent_error: Option<Failed>,
    /// What keeps the path from carrying `expect`, class and location: the agent's
    /// diagnosis when it answered, else the walk's (the forward direction only).
    pub faults: Vec<Diagnosis>,
    /// The walk's expected size: `--expect`, else this interface's MTU; with an
    /// agent's view, the larger of the two NICs'.
    pub expect: u32,
    pub ok: bool,
    pub elapsed_ms: u64,
}

const MAX_TTL: u32 = 30;
/// Consecutive TTLs where neither large nor small probes get an answer before the
/// walk stops: routers that never answer are rare in a row of this length.
const MAX_SILENT: u32 = 4;
/// Most probes in one run (a bound on the run's length whatever the path does).
const MAX_PROBES: u32 = 200;
const PORT: u16 = 44_444;
/// Wait for a reply before any hop has answered; afterwards ten times the slowest
/// answer seen, within `MIN_WAIT..=MAX_WAIT`.
const MAX_WAIT: Duration = Duration::from_millis(500);
const MIN_WAIT: Duration = Duration::from_millis(100);

/// What came back for one probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reply {
    None,
    /// This host refuses the size (its route or interface MTU).
    LocalTooBig(u32),
    TooBig {
        from: Option<IpAddr>,
        mtu: u32,
    },
    TimeExceeded(Option<IpAddr>),
    Destination(Option<IpAddr>),
    Unreachable(Option<IpAddr>),
}

struct Walker {
    sock: UdpSocket,
    target: IpAddr,
    v6: bool,
    wait: Duration,
    /// The slowest answer seen so far.
    slowest: Duration,
    probes: u32,
}

impl Walker {
    fn wait_error(&self) -> Option<(ErrQueueEntry, Duration)> {
        let t0 = Instant::now();
        while t0.elapsed() < self.wait {
            if let Ok(Some(e)) = sockopt::recv_err(&self.sock, self.v6) {
                return Some((e, t0.elapsed()));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        None
    }

    fn probe(&mut self, ttl: u32, size: u32) -> Result<Reply, EngineError> {
        self.probes += 1;
        // A late answer to an earlier probe must not count for this one.
        while let Ok(Some(_)) = sockopt::recv_err(&self.sock, self.v6) {}
        sockopt::set_ttl(&self.sock, self.v6, ttl)
            .map_err(|e| EngineError::io("setting the TTL", e))?;
        let ovh = super::reading::udp_overhead(self.v6);
        let _ = self
            .sock
            .send(&vec![0u8; size.saturating_sub(ovh) as usize]);
        let Some((e, rtt)) = self.wait_error() else {
            return Ok(Reply::None);
        };
        if e.errno == libc::EMSGSIZE && e.origin == Origin::Local {
            return Ok(Reply::LocalTooBig(e.info));
        }
        self.slowest = self.slowest.max(rtt);
        self.wait = (self.slowest * 10).clamp(MIN_WAIT, MAX_WAIT);
        let (time_exceeded, too_big, unreach) = if self.v6 {
            (e.icmp_type == 3, e.icmp_type == 2, e.icmp_type == 1)
        } else {
            (
                e.icmp_type == 11,
                e.icmp_type == 3 && e.icmp_code == 4,
                e.icmp_type == 3,
            )
        };
        Ok(if too_big {
            Reply::TooBig {
                from: e.offender,
                mtu: e.info,
            }
        } else if e.errno == libc::ECONNREFUSED || unreach && e.offender == Some(self.target) {
            Reply::Destination(e.offender)
        } else if time_exceeded {
            Reply::TimeExceeded(e.offender)
        } else if unreach {
            Reply::Unreachable(e.offender)
        } else {
            Reply::None
        })
    }

    /// A size that reaches `ttl` is answered (two tries): the answer, or None.
    fn reaches(&mut self, ttl: u32, size: u32) -> Result<Option<Reply>, EngineError> {
        for _ in 0..2 {
            match self.probe(ttl, size)? {
                Reply::None => {}
                Reply::LocalTooBig(_) => return Ok(None),
                r => return Ok(Some(r)),
            }
        }
        Ok(None)
    }
}

/// Largest size below `fails` that `reaches` (`ok` does, answered `ok_reply`), with
/// its answer. Common MTUs are tried first, from the top down, then one byte more,
/// and a bisection only when that passes too: every answer spends a token of the
/// answering host's ICMP rate limit (Linux: a burst of 6, then one a second), silent
/// sizes spend none.
fn largest_passing<R, E>(
    (mut ok, mut ok_reply): (u32, R),
    mut fails: u32,
    mut reaches: impl FnMut(u32) -> Result<Option<R>, E>,
) -> Result<(u32, R), E> {
    let top = fails;
    for m in COMMON_MTUS.into_iter().filter(|&m| m > ok && m < top) {
        if let Some(r) = reaches(m)? {
            (ok, ok_reply) = (m, r);
            break;
        }
        fails = m;
    }
    let mut next = ok + 1;
    while fails - ok > 1 {
        if let Some(r) = reaches(next)? {
            (ok, ok_reply) = (next, r);
        } else {
            fails = next;
        }
        next = ok + (fails - ok) / 2;
    }
    Ok((ok, ok_reply))
}

/// MTUs links commonly have, largest first (as scamper's PMTUD table): jumbo,
/// FDDI/POS, Ethernet and its tunnels (PPPoE, GRE, VXLAN, IPsec), IPv6's minimum.
const COMMON_MTUS: [u32; 14] = [
    9216, 9000, 8192, 4470, 4352, 2048, 1500, 1492, 1480, 1476, 1450, 1400, 1280, 1006,
];

impl Walker {
    fn open(target: IpAddr) -> Result<Walker, EngineError> {
        let v6 = target.is_ipv6();
        let bind: SocketAddr = if v6 { "[::]:0" } else { "0.0.0.0:0" }
            .parse()
            .map_err(|_| EngineError::Protocol("bind address".into()))?;
        let sock =
            UdpSocket::bind(bind).map_err(|e| EngineError::io("binding the hops socket", e))?;
        sock.connect(SocketAddr::new(target, PORT))
            .map_err(|e| EngineError::io("connecting the hops socket", e))?;
        sockopt::set_pmtu_discover(&sock, v6, PmtuMode::Probe)
            .and_then(|()| sockopt::set_recverr(&sock, v6))
            .map_err(|e| EngineError::io("setting hops socket options", e))?;
        Ok(Walker {
            sock,
            target,
            v6,
            wait: MAX_WAIT,
            slowest: Duration::ZERO,
            probes: 0,
        })
    }
}

/// Where `vanishes`-byte packets toward `target` disappear while `passes`-byte ones
/// get through (the agent-mode search found a silent limit): TTL by TTL, the last hop
/// that answers the large probe, and the TTL where only the small one is answered.
/// None when no hop tells them apart (the drop is at the destination itself, or
/// hops do not answer). `rtt`, the pair's slowest round trip when measured, sets the
/// first wait as later answers do (ten times it, within `MIN_WAIT..=MAX_WAIT`).
pub fn locate_black_hole(
    target: IpAddr,
    passes: u32,
    vanishes: u32,
    rtt: Option<Duration>,
) -> Result<Option<BlackHoleHop>, EngineError> {
    let mut w = Walker::open(target)?;
    if let Some(rtt) = rtt {
        w.slowest = rtt;
        w.wait = (rtt * 10).clamp(MIN_WAIT, MAX_WAIT);
    }
    let (mut last, mut silent) = ((0, None), 0);
    for ttl in 1..=MAX_TTL {
        if silent >= MAX_SILENT || w.probes >= MAX_PROBES {
            break;
        }
        match w.probe(ttl, vanishes)? {
            Reply::TimeExceeded(a) => {
                last = (ttl, a);
                silent = 0;
            }
            Reply::None => {
                if w.reaches(ttl, passes)?.is_some() {
                    return Ok(Some(BlackHoleHop {
                        last_ttl: last.0,
                        last_addr: last.1,
                        at_ttl: ttl,
                        passes,
                        vanishes,
                    }));
                }
                silent += 1;
            }
            // The large probe reached the destination or an error: nothing to name.
            _ => break,
        }
    }
    Ok(None)
}

/// The router a small packet toward `target` reaches first: the one answering a
/// TTL-1 probe with time exceeded; None when the target itself answers (one segment)
/// or nothing does.
pub fn first_router(target: IpAddr) -> Result<Option<IpAddr>, EngineError> {
    let mut w = Walker::open(target)?;
    Ok(match w.reaches(1, super::base_size(target.is_ipv6()))? {
        Some(Reply::TimeExceeded(a)) => a,
        _ => None,
    })
}

/// The far end as `path --hops` may know it: an agent's session, or why there is none.
pub type Far<'a> = Result<&'a Session, Failed>;

/// Walks the path toward `target` hop by hop and, when an agent answers there
/// (`far`), runs the `path` check against it: the pair's diagnosis then rests on
/// both directions and the far NIC's MTU, which the walk alone cannot see.
pub fn run(target: IpAddr, expect: Option<u32>, far: Far<'_>) -> Result<HopsResult, EngineError> {
    let t0 = Instant::now();
    let mut r = walk(target, expect)?;
    match far {
        Ok(session) => match super::run(session, &target.to_string(), &PathConfig { expect }) {
            Ok(p) => r.agent = Some(Box::new(p)),
            Err(e) => r.agent_error = Some(e.failed()),
        },
        Err(e) => r.agent_error = Some(e),
    }
    if let Some(p) = &r.agent {
        (r.faults, r.expect, r.ok) = (p.faults.clone(), p.expect, p.ok);
    } else {
        r.faults = pair::decide(&r.pair());
    }
    r.elapsed_ms = t0.elapsed().as_millis() as u64;
    Ok(r)
}

impl HopsResult {
    /// What the walk alone saw of the pair: this host and the forward direction.
    pub fn pair(&self) -> Pair {
        let first_router = self
            .hops
            .first()
            .filter(|h| h.ttl == 1 && !h.destination)
            .and_then(|h| h.addr);
        let seen = [self.local.mtu];
        let icmp = self.hops.iter().find(|h| h.reports_mtu.is_some());
        let ab = match (&self.black_hole, self.path_mtu) {
            (Some(b), _) => Some(Way {
                mtu: super::reading::as_mtu(b.passes, &seen, None),
                stop: mtuperf_proto::msg::mesh::StopKind::Silent,
                icmp_from: None,
                vanish_after: Some(pair::Hop {
                    ttl: b.last_ttl,
                    addr: b.last_addr,
                }),
            }),
            (None, Some(m)) => {
                use mtuperf_proto::msg::mesh::StopKind;
                let stop = if icmp.is_some() {
                    StopKind::Icmp
                } else if m < self.local.max_packet() {
                    StopKind::Local
                } else {
                    StopKind::Top
                };
                Some(Way {
                    mtu: super::reading::as_mtu(m, &seen, None),
                    stop,
                    icmp_from: icmp.and_then(|h| h.addr),
                    vanish_after: None,
                })
            }
            (None, None) => None,
        };
        Pair {
            a: End {
                addr: self.local_addr,
                nic_mtu: Some(self.local.mtu),
                iface: Some(self.local.route.iface.clone()),
                first_router,
            },
            b: End {
                addr: self.target,
                nic_mtu: None,
                iface: None,
                first_router: None,
            },
            ab,
            ba: None,
            expect: self.expect,
        }
    }
}

/// A hop that answered (or not, `addr` None) a probe of `size` bytes.
fn hop(ttl: u32, addr: Option<IpAddr>, size: Option<u32>) -> Hop {
    Hop {
        ttl,
        addr,
        reports_mtu: None,
        destination: false,
        probe_size: size,
    }
}

/// What the walk found: the hops, where larger probes vanish, the size that reached
/// the destination.
struct Walked {
    hops: Vec<Hop>,
    black_hole: Option<BlackHoleHop>,
    path_mtu: Option<u32>,
}

/// The walk: TTL by TTL, each hop's address and reported MTU, and where larger
/// probes vanish.
fn walk(target: IpAddr, expect: Option<u32>) -> Result<HopsResult, EngineError> {
    let t0 = Instant::now();
    let v6 = target.is_ipv6();
    let local = LocalView::toward(target)?;
    let mut w = Walker::open(target)?;
    let local_addr = w
        .sock
        .local_addr()
        .map_err(|e| EngineError::io("hops socket", e))?
        .ip();
    let found = steps(&mut w, local.max_packet(), super::base_size(v6))?;
    let expect = expect.unwrap_or(local.max_packet());
    Ok(HopsResult {
        target,
        v6,
        local,
        local_addr,
        reached: found.path_mtu.is_some(),
        hops: found.hops,
        black_hole: found.black_hole,
        path_mtu: found.path_mtu,
        agent: None,
        agent_error: None,
        faults: Vec::new(),
        expect,
        ok: found.path_mtu.is_some_and(|m| m >= expect),
        elapsed_ms: t0.elapsed().as_millis() as u64,
    })
}

/// The walk's probes, from `top` bytes down to `small` as hops report less or larger
/// probes vanish.
fn steps(w: &mut Walker, top: u32, small: u32) -> Result<Walked, EngineError> {
    let mut size = top;
    let mut hops: Vec<Hop> = Vec::new();
    let mut black_hole = None;
    let mut last_large: (u32, Option<IpAddr>) = (0, None);
    let (mut reached, mut silent, mut ttl) = (false, 0, 1);
    // An answer already in hand (the black-hole search's last passing probe).
    let mut pending = None;
    while ttl <= MAX_TTL && silent < MAX_SILENT && w.probes < MAX_PROBES {
        let reply = match pending.take() {
            Some(r) => r,
            None => w.probe(ttl, size)?,
        };
        match reply {
            Reply::LocalTooBig(m) => size = m.min(size - 1).max(small),
            Reply::TooBig { from, mtu } => {
                match hops.iter_mut().find(|h| h.addr == from) {
                    Some(h) => h.reports_mtu = Some(mtu),
                    None => hops.push(Hop {
                        reports_mtu: Some(mtu),
                        ..hop(ttl, from, Some(size))
                    }),
                }
                size = mtu.min(size - 1).max(small);
            }
            Reply::TimeExceeded(a) => {
                hops.push(hop(ttl, a, Some(size)));
                last_large = (ttl, a);
                silent = 0;
                ttl += 1;
            }
            Reply::Destination(a) => {
                hops.push(Hop {
                    destination: true,
                    ..hop(ttl, a, Some(size))
                });
                reached = true;
                break;
            }
            Reply::Unreachable(a) => {
                hops.push(hop(ttl, a, Some(size)));
                break;
            }
            Reply::None => {
                let small_reply = if size > small && black_hole.is_none() {
                    w.reaches(ttl, small)?
                } else {
                    None
                };
                if let Some(r) = small_reply {
                    // Small probes reach this TTL, large ones vanish on the way.
                    let (passes, reply) = largest_passing((small, r), size, |m| w.reaches(ttl, m))?;
                    black_hole = Some(BlackHoleHop {
                        last_ttl: last_large.0,
                        last_addr: last_large.1,
                        at_ttl: ttl,
                        passes,
                        vanishes: passes + 1,
                    });
                    size = passes;
                    pending = Some(reply);
                    continue;
                }
                hops.push(hop(ttl, None, None));
                silent += 1;
                ttl += 1;
            }
        }
    }
    Ok(Walked {
        hops,
        black_hole,
        path_mtu: reached.then_some(size),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A path that passes up to `mtu`; counts the answers (rate-limit tokens) spent.
    fn search(mtu: u32, from: u32) -> (u32, u32, u32) {
        let (mut answers, mut probes) = (0, 0);
        let (found, reply) = largest_passing((576, 576), from, |size| {
            probes += 1;
            Ok::<_, ()>((size <= mtu).then(|| {
                answers += 1;
                size
            }))
        })
        .unwrap();
        assert_eq!(found, reply);
        (found, answers, probes)
    }

    #[test]
    fn the_passing_size_costs_few_answers() {
        // A common MTU: one answer for it; 1501 then fails silently.
        assert_eq!(search(1500, 9000), (1500, 1, 6));
        assert_eq!(search(9000, 9216), (9000, 1, 2));
        // Any other size is still found exactly, by bisection above the common one.
        let (found, answers, _) = search(1337, 9000);
        assert_eq!(found, 1337);
        assert!(answers <= 8, "{answers}");
        assert_eq!(search(600, 1500).0, 600);
        // Nothing passes above the small size.
        assert_eq!(search(576, 9000).0, 576);
    }

    #[test]
    fn common_mtus_are_largest_first() {
        assert!(COMMON_MTUS.windows(2).all(|w| w[0] > w[1]));
    }
}
