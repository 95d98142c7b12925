//! `path`: prove that a path carries its MTU in both directions, and name what breaks
//! it. The local view (route, interface, cached PMTU), forward and reverse searches
//! against an agent, the TCP view, and the agent-less modes (`icmp`, `hops`).

pub mod agent;
mod both;
pub mod hops;
pub mod icmp;
pub mod local;
pub mod probe;
pub mod reading;
mod recv;
pub mod search;
pub mod wait;

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use mtuperf_proto::msg::path::MAX_PROBE_SIZE;
use mtuperf_proto::msg::{AgentMsg, AgentPathInfo, ClientMsg, PathOpen, PathReady};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use local::LocalView;
pub use reading::LINK_SLACK;
pub use search::{DirResult, Limit, Outcome, Prober};
pub use wait::{ProbeWait, Waited};

use crate::client::Session;
use crate::config::PathConfig;
use crate::diagnosis::pair::{self, End, Pair};
use crate::diagnosis::Diagnosis;
use crate::EngineError;

/// Safe base sizes: every IPv6 link carries 1280; IPv4 paths almost always 576+.
pub fn base_size(v6: bool) -> u32 {
    if v6 {
        1280
    } else {
        576
    }
}

/// The TCP view from the control connection's TCP_INFO.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TcpView {
    pub snd_mss: u32,
    pub rcv_mss: u32,
    pub pmtu: u32,
    /// TCP's segments fit the small side while UDP probes above it fail.
    pub hides_problem: bool,
}

/// A full `path` run against an agent.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PathResult {
    pub target: String,
    pub agent: String,
    pub v6: bool,
    pub started_unix_ms: i64,
    pub local: LocalView,
    pub agent_path: AgentPathInfo,
    pub forward: DirResult,
    pub reverse: DirResult,
    /// `forward.largest_ok` read as an interface MTU (within the link-layer slack).
    pub forward_mtu: u32,
    /// `reverse.largest_ok` read as an interface MTU, as `forward_mtu`.
    pub reverse_mtu: u32,
    /// This host's address on the path (the control connection's), and the agent's.
    pub local_addr: IpAddr,
    /// The agent's address, as this host reached it.
    pub agent_addr: IpAddr,
    /// When a direction falls short: the first router this host's packets toward the
    /// agent reach (its gateway, or the one answering a TTL-1 probe; none on one
    /// segment).
    pub first_router: Option<IpAddr>,
    /// When the forward direction falls short silently: where TTL-limited probes of
    /// the vanishing size stop being answered while the passing size still is.
    pub black_hole_hop: Option<hops::BlackHoleHop>,
    /// What keeps the path from carrying `expect`, class and location (none: it
    /// carries it both ways).
    pub faults: Vec<Diagnosis>,
    pub tcp: Option<TcpView>,
    /// The size that must pass in both directions for exit 0: `--expect`, else the
    /// larger of the two interfaces' MTUs.
    pub expect: u32,
    pub ok: bool,
    /// Wall time of the whole check, connect excluded.
    pub elapsed_ms: u64,
    pub notes: Vec<String>,
}

impl PathResult {
    /// The pair as the diagnosis reads it: this host (a), the agent (b), both ways.
    pub fn pair(&self) -> Pair {
        let peer = self.agent_path.iface.as_ref();
        let located = self.black_hole_hop.as_ref().map(|b| pair::Hop {
            ttl: b.last_ttl,
            addr: b.last_addr,
        });
        Pair {
            a: End {
                addr: self.local_addr,
                nic_mtu: Some(self.local.mtu),
                iface: Some(self.local.route.iface.clone()),
                first_router: self.first_router,
            },
            b: End {
                addr: self.agent_addr,
                nic_mtu: peer.map(|i| i.mtu),
                iface: peer.map(|i| i.name.clone()),
                first_router: None,
            },
            ab: Some(way(&self.forward, self.forward_mtu, located)),
            ba: Some(way(&self.reverse, self.reverse_mtu, None)),
            expect: self.expect,
        }
    }

    /// The smaller of the two directions' MTUs.
    pub fn carries(&self) -> u32 {
        self.forward_mtu.min(self.reverse_mtu)
    }
}

/// A direction's search as the diagnosis reads it: `mtu` its size read as an MTU,
/// `located` where TTL-limited probes saw its larger packets vanish.
pub fn way(d: &DirResult, mtu: u32, located: Option<pair::Hop>) -> pair::Way {
    pair::Way {
        mtu,
        stop: d.limit.stop(),
        icmp_from: d.limit.icmp_from(),
        vanish_after: located,
    }
}

/// Which direction a probe went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Forward,
    Reverse,
}

/// One probe of a direction's search, for a live display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub direction: Direction,
    pub size: u32,
    pub outcome: Outcome,
}

/// A prober that reports every probe to an observer.
struct Observed<'a, P: Prober> {
    inner: P,
    direction: Direction,
    observer: &'a mut dyn FnMut(Step),
}

impl<P: Prober> Prober for Observed<'_, P> {
    fn probe(&mut self, size: u32) -> Outcome {
        let outcome = self.inner.probe(size);
        (self.observer)(Step {
            direction: self.direction,
            size,
            outcome,
        });
        outcome
    }
}

pub fn run(
    session: &Session,
    target: &str,
    config: &PathConfig,
) -> Result<PathResult, EngineError> {
    run_observed(session, target, config, &mut |_| {})
}

/// What the two searches found, before the diagnosis.
struct Searched {
    local: LocalView,
    laddr: std::net::SocketAddr,
    ready: PathReady,
    forward: DirResult,
    reverse: DirResult,
    served: Option<mtuperf_proto::msg::path::PathServed>,
}

/// [`run`], reporting every probe of both searches to `observer` as it completes.
pub fn run_observed(
    session: &Session,
    target: &str,
    config: &PathConfig,
    observer: &mut dyn FnMut(Step),
) -> Result<PathResult, EngineError> {
    config.validate()?;
    let t0 = Instant::now();
    let started_unix_ms = crate::stamp::unix_ms();
    let s = search_both(session, observer)?;
    let agent = session.agent;
    let peer_mtu = s.ready.path.iface.as_ref().map(|i| i.mtu);
    let (forward_mtu, reverse_mtu) = reading::mtus(&s.forward, &s.reverse, s.local.mtu, peer_mtu);
    // The network's expected MTU: the larger of the two NICs (an IP packet is at most
    // 65535 bytes, whatever loopback's MTU of 65536 says).
    let expect = config.expect.unwrap_or_else(|| {
        s.local
            .max_packet()
            .max(peer_mtu.unwrap_or(0).min(MAX_PROBE_SIZE))
    });
    let mut notes = Vec::new();
    let short = forward_mtu < expect || reverse_mtu < expect;
    let first_router = if short {
        first_router(&s.local, agent.ip(), &mut notes)
    } else {
        None
    };
    let rtt = s.forward.waited.rtt_us.map(Duration::from_micros);
    let black_hole_hop = (forward_mtu < expect && s.forward.limit == Limit::Silent)
        .then(|| locate(agent.ip(), s.forward.largest_ok, rtt, &mut notes))
        .flatten();
    let smallest = s.forward.largest_ok.min(s.reverse.largest_ok);
    let silent = short
        && [&s.forward, &s.reverse]
            .iter()
            .any(|d| d.limit == Limit::Silent);
    let tcp = tcp_view(session, smallest, s.local.max_packet(), silent);
    notes.splice(0..0, s.local.notes(smallest));
    if let Some(n) = s.served.map(|x| x.other_source).filter(|&n| n > 0) {
        notes.push(format!(
            "the agent ignored {n} datagrams that came from another address or port than this client's control connection ({}): a NAT, a load balancer or a second interface between the hosts; forward probes it ignored count as lost",
            s.laddr
        ));
    }
    if tcp.as_ref().is_some_and(|t| t.hides_problem) {
        notes.push(format!(
            "TCP hides this: its MSS fits {smallest} bytes, so TCP works while UDP datagrams above {smallest} are lost"
        ));
    }
    let mut r = PathResult {
        target: target.to_string(),
        agent: agent.to_string(),
        v6: agent.is_ipv6(),
        started_unix_ms,
        ok: forward_mtu >= expect && reverse_mtu >= expect,
        local_addr: s.local.route.source.unwrap_or_else(|| s.laddr.ip()),
        agent_addr: agent.ip(),
        local: s.local,
        agent_path: s.ready.path,
        forward: s.forward,
        reverse: s.reverse,
        forward_mtu,
        reverse_mtu,
        first_router,
        black_hole_hop,
        faults: Vec::new(),
        tcp,
        expect,
        elapsed_ms: 0,
        notes,
    };
    r.faults = pair::decide(&r.pair());
    r.elapsed_ms = t0.elapsed().as_millis() as u64;
    Ok(r)
}

/// One probe socket per direction, both named to the agent in `PathOpen`, then
/// connected to the port its `PathReady` gives.
fn open_probes(
    session: &Session,
    laddr: SocketAddr,
) -> Result<(std::net::UdpSocket, std::net::UdpSocket, PathReady), EngineError> {
    let agent = session.agent;
    let fsock = probe::open_socket(laddr, agent)?;
    let rsock = probe::open_socket(laddr, agent)?;
    let port = |s: &std::net::UdpSocket| {
        s.local_addr()
            .map(|a| a.port())
            .map_err(|e| EngineError::io("probe socket", e))
    };
    let open = PathOpen {
        client_port: port(&fsock)?,
        reverse_port: Some(port(&rsock)?),
    };
    let ready: PathReady = session.ask(&ClientMsg::PathOpen(open), "path ready")?;
    for s in [&fsock, &rsock] {
        s.connect((agent.ip(), ready.port))
            .map_err(|e| EngineError::io("connecting the probe socket", e))?;
    }
    Ok((fsock, rsock, ready))
}

/// Opens the probing session (a socket per direction) and runs both directions'
/// searches at once.
fn search_both(session: &Session, observer: &mut dyn FnMut(Step)) -> Result<Searched, EngineError> {
    let agent = session.agent;
    let local = LocalView::toward(agent.ip())?;
    let laddr = session
        .control
        .local()
        .ok_or_else(|| EngineError::Protocol("control socket has no local address".into()))?;
    let (fsock, rsock, ready) = open_probes(session, laddr)?;
    let base = base_size(agent.is_ipv6());
    // Each probe's wait starts from the control connection's round trip.
    let tcp_rtt = mtuperf_sys::sockopt::tcp_info(session.control.socket())
        .ok()
        .map(|t| t.rtt_us.saturating_add(t.rttvar_us));
    let peer_mtu = ready.path.iface.as_ref().map(|i| i.mtu);
    // The session failing ends both searches, not only the reverse one.
    let gone = std::sync::atomic::AtomicBool::new(false);
    let rtt = probe::PairRtt::default();
    let forward = both::Way {
        prober: probe::Forward {
            sock: &fsock,
            token: ready.token,
            seq: 0,
            wait: ProbeWait::from_tcp(tcp_rtt),
            sent: std::collections::VecDeque::new(),
            gone: &gone,
            rtt: &rtt,
        },
        base,
        top: local.max_packet(),
    };
    let reverse = both::Way {
        prober: probe::Reverse {
            session,
            sock: &rsock,
            token: ready.token,
            seq: 1 << 32,
            wait: ProbeWait::from_tcp(tcp_rtt),
            failure: None,
            gone: &gone,
            rtt: &rtt,
        },
        base,
        top: peer_mtu.unwrap_or(local.mtu).min(MAX_PROBE_SIZE),
    };
    let (fwd, (reverse, mut rev)) = both::search_both(forward, reverse, observer);
    let (forward, fwd) = fwd.ok_or_else(|| {
        EngineError::Protocol("the forward search's thread ended without its result".into())
    })?;
    let mut forward = forward.map_err(|e| EngineError::Agent(format!("forward: {e}")))?;
    forward.waited = Waited::from(&fwd.wait);
    if let Some(e) = rev.failure.take() {
        return Err(e);
    }
    let mut reverse = reverse.map_err(|e| EngineError::Agent(format!("reverse: {e}")))?;
    reverse.waited = Waited::from(&rev.wait);
    let served = match session.request(&ClientMsg::Stop, "end of path probing") {
        Ok(AgentMsg::PathServed(s)) => Some(s),
        _ => None,
    };
    Ok(Searched {
        local,
        laddr,
        ready,
        forward,
        reverse,
        served,
    })
}

/// The first router toward `agent`: the route's gateway, or on an on-link route the
/// router answering a TTL-1 probe (proxy ARP puts routers inside a subnet); a failure
/// to ask is a note, never the run's failure.
fn first_router(local: &LocalView, agent: IpAddr, notes: &mut Vec<String>) -> Option<IpAddr> {
    if let Some(g) = local.route.gateway {
        return Some(g);
    }
    match hops::first_router(agent) {
        Ok(r) => r,
        Err(e) => {
            notes.push(format!("a TTL-1 probe toward {agent} failed: {e}"));
            None
        }
    }
}

/// Where forward packets above `passes` vanish; a failure to find it is a note, never
/// the run's failure.
fn locate(
    agent: IpAddr,
    passes: u32,
    rtt: Option<Duration>,
    notes: &mut Vec<String>,
) -> Option<hops::BlackHoleHop> {
    match hops::locate_black_hole(agent, passes, passes + 1, rtt) {
        Ok(Some(b)) => Some(b),
        Ok(None) => {
            notes.push(format!(
                "TTL-limited probes of {} and {passes} bytes did not tell which hop drops the larger ones (hops that do not answer)",
                passes + 1
            ));
            None
        }
        Err(e) => {
            notes.push(format!("locating the black hole's hop failed: {e}"));
            None
        }
    }
}

fn tcp_view(session: &Session, smallest: u32, local_mtu: u32, silent: bool) -> Option<TcpView> {
    let t = mtuperf_sys::sockopt::tcp_info(session.control.socket()).ok()?;
    let v6 = session.agent.is_ipv6();
    let tcp_hdr = if v6 { 60 } else { 40 };
    Some(TcpView {
        snd_mss: t.snd_mss,
        rcv_mss: t.rcv_mss,
        pmtu: t.pmtu,
        hides_problem: silent && smallest < local_mtu && t.snd_mss + tcp_hdr <= smallest,
    })
}

/// The interface MTU toward `ip` (the search's upper bound in agent-less modes).
pub fn iface_mtu(ip: IpAddr) -> Result<u32, EngineError> {
    Ok(LocalView::toward(ip)?.mtu)
}
