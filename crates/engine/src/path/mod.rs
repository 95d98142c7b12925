//! `path`: prove that a path carries its MTU in both directions, and name what breaks
//! it. The local view (route, interface, cached PMTU), forward and reverse searches
//! against an agent, the TCP view, and the agent-less modes (`icmp`, `hops`).

pub mod agent;
pub mod hops;
pub mod icmp;
pub mod local;
pub mod probe;
mod recv;
pub mod search;
pub mod verdict;

use std::net::IpAddr;
use std::time::{Duration, Instant};

use mtuperf_proto::msg::path::MAX_PROBE_SIZE;
use mtuperf_proto::msg::{AgentMsg, AgentPathInfo, ClientMsg, PathOpen, PathReady};
use serde::{Deserialize, Serialize};

pub use local::LocalView;
pub use search::{DirResult, Limit, Outcome, Prober};
pub use verdict::{Verdict, LINK_SLACK};

use crate::client::Session;
use crate::config::PathConfig;
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TcpView {
    pub snd_mss: u32,
    pub rcv_mss: u32,
    pub pmtu: u32,
    /// TCP's segments fit the small side while UDP probes above it fail.
    pub hides_problem: bool,
}

/// A full `path` run against an agent.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PathResult {
    pub target: String,
    pub agent: String,
    pub v6: bool,
    pub started_unix_ms: i64,
    pub local: LocalView,
    pub agent_path: AgentPathInfo,
    pub forward: DirResult,
    pub reverse: DirResult,
    /// `forward.largest_ok` read as an interface MTU (within the link-layer slack);
    /// None only in documents stored before it existed.
    #[serde(default)]
    pub forward_mtu: Option<u32>,
    /// `reverse.largest_ok` read as an interface MTU, as `forward_mtu`.
    #[serde(default)]
    pub reverse_mtu: Option<u32>,
    pub verdict: Verdict,
    /// For a forward black hole on a routed path: where TTL-limited probes of the
    /// vanishing size stop being answered while the passing size still is.
    #[serde(default)]
    pub black_hole_hop: Option<hops::BlackHoleHop>,
    pub verdict_text: String,
    pub tcp: Option<TcpView>,
    /// The size that must pass in both directions for exit 0.
    pub expect: u32,
    pub ok: bool,
    pub elapsed_ms: u64,
    pub notes: Vec<String>,
}

/// Probe timeout: long enough for a LAN round trip and a router's ICMP, short enough
/// that a black-holed size costs little.
const PROBE_TIMEOUT: Duration = Duration::from_millis(100);

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

/// [`run`], reporting every probe of both searches to `observer` as it completes.
pub fn run_observed(
    session: &Session,
    target: &str,
    config: &PathConfig,
    observer: &mut dyn FnMut(Step),
) -> Result<PathResult, EngineError> {
    config.validate()?;
    let expect = config.expect;
    let t0 = Instant::now();
    let started_unix_ms = crate::stamp::unix_ms();
    let agent = session.agent;
    let v6 = agent.is_ipv6();
    let local = LocalView::toward(agent.ip())?;
    let laddr = session
        .control
        .local()
        .ok_or_else(|| EngineError::Protocol("control socket has no local address".into()))?;
    let sock = probe::open_socket(laddr, agent)?;
    let client_port = sock
        .local_addr()
        .map_err(|e| EngineError::io("probe socket", e))?
        .port();
    let ready: PathReady =
        session.ask(&ClientMsg::PathOpen(PathOpen { client_port }), "path ready")?;
    sock.connect((agent.ip(), ready.port))
        .map_err(|e| EngineError::io("connecting the probe socket", e))?;
    let base = base_size(v6);
    let mut fwd = Observed {
        inner: probe::Forward {
            sock: &sock,
            token: ready.token,
            seq: 0,
            timeout: PROBE_TIMEOUT,
        },
        direction: Direction::Forward,
        observer: &mut *observer,
    };
    let forward = search::search(&mut fwd, base, local.max_packet())
        .map_err(|e| EngineError::Agent(format!("forward: {e}")))?;
    let peer_mtu = ready.path.iface.as_ref().map(|i| i.mtu);
    let mut rev = Observed {
        inner: probe::Reverse {
            session,
            sock: &sock,
            token: ready.token,
            seq: 1 << 32,
            timeout: PROBE_TIMEOUT,
            failure: None,
        },
        direction: Direction::Reverse,
        observer,
    };
    let reverse = search::search(
        &mut rev,
        base,
        peer_mtu.unwrap_or(local.mtu).min(MAX_PROBE_SIZE),
    );
    if let Some(e) = rev.inner.failure.take() {
        return Err(e);
    }
    let reverse = reverse.map_err(|e| EngineError::Agent(format!("reverse: {e}")))?;
    let served = match session.request(&ClientMsg::Stop, "end of path probing") {
        Ok(AgentMsg::PathServed(s)) => Some(s),
        _ => None,
    };
    let cx = verdict::Context {
        local_mtu: local.mtu,
        peer_mtu,
        same_segment: local.same_segment,
    };
    let reading = verdict::decide(&forward, &reverse, cx);
    let mut verdict = reading.verdict.clone();
    let mut notes = Vec::new();
    let black_hole_hop = if matches!(verdict, Verdict::BlackHole { .. })
        && forward.limit == Limit::Silent
        && !local.same_segment
    {
        locate(agent.ip(), forward.largest_ok, &mut verdict, &mut notes)
    } else {
        None
    };
    let mut verdict_text = verdict.text(v6);
    if let Some(d) = verdict::slack_detail(&forward, &reverse, &reading) {
        verdict_text = format!("{verdict_text}; {d}");
    }
    // An IP packet is at most 65535 bytes, whatever loopback's MTU of 65536 says.
    let expect = expect.unwrap_or(local.max_packet());
    let smallest = forward.largest_ok.min(reverse.largest_ok);
    let silent = matches!(
        verdict,
        Verdict::BlackHole { .. } | Verdict::Mismatch { .. } | Verdict::SwitchPort { .. }
    );
    let tcp = tcp_view(session, smallest, local.max_packet(), silent);
    notes.splice(0..0, local.notes(smallest));
    if let Some(n) = served.map(|s| s.other_source).filter(|&n| n > 0) {
        notes.push(format!(
            "the agent ignored {n} datagrams that came from another address or port than this client's control connection ({laddr}): a NAT, a load balancer or a second interface between the hosts; forward probes it ignored count as lost"
        ));
    }
    if tcp.as_ref().is_some_and(|t| t.hides_problem) {
        notes.push(format!(
            "TCP hides this: its MSS fits {smallest} bytes, so TCP works while UDP datagrams above {smallest} are lost"
        ));
    }
    Ok(PathResult {
        target: target.to_string(),
        agent: agent.to_string(),
        v6,
        started_unix_ms,
        verdict_text,
        ok: forward.largest_ok >= expect && reverse.largest_ok >= expect,
        local,
        agent_path: ready.path,
        forward,
        reverse,
        forward_mtu: Some(reading.forward_mtu),
        reverse_mtu: Some(reading.reverse_mtu),
        verdict,
        black_hole_hop,
        tcp,
        expect,
        elapsed_ms: t0.elapsed().as_millis() as u64,
        notes,
    })
}

/// Names the hop past which forward packets above `passes` vanish, in the verdict;
/// a failure to find it is a note, never the run's failure.
fn locate(
    agent: IpAddr,
    passes: u32,
    verdict: &mut Verdict,
    notes: &mut Vec<String>,
) -> Option<hops::BlackHoleHop> {
    match hops::locate_black_hole(agent, passes, passes + 1) {
        Ok(Some(b)) => {
            if let (Verdict::BlackHole { hop, .. }, Some(a)) = (verdict, b.last_addr) {
                *hop = Some(format!("{} {a}", b.last_ttl));
            }
            Some(b)
        }
        Ok(None) => {
            notes.push(format!(
                "TTL-limited probes of {} and {passes} bytes did not tell which hop drops the larger ones (hops that do not answer, or the drop is at the agent's host)",
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
