//! `rr --from`: one rr step driven from several client hosts at once, as a cluster's
//! sessions come from many nodes. Each host's keyed agent runs the requester toward
//! the target's agent (a third-party rr load over its own authenticated session with
//! the target, so no traffic is sent before both ends proved the key) and returns
//! everything it measured; this side merges them: counts summed, histograms merged
//! (the union's percentiles), blocks/s summed, and the target's accounts of every
//! host's session summed.
//!
//! A host that fails once every session is open (its session breaks, it answers
//! wrongly, its summary does not check, the target refuses its session) does not
//! discard the others' results: the step is their union, lists the failed host with its
//! share and error (`from_failed`), and is marked interrupted. Only when every host
//! failed is the step an error (the first host's).
//!
//! Clients and an open loop's rate are totals, split over the hosts as evenly as they
//! go (the first hosts take the remainder); `threads` is per host; `workers` is per
//! host's session on the target (each session gets its own serving threads).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::atomic::AtomicBool;
use std::thread;
use std::time::{Duration, Instant};

use mtuperf_proto::failed::Failed;
use mtuperf_proto::host::{HostSnapshot, ThreadsCpu};
use mtuperf_proto::interrupt::Interrupt;
use mtuperf_proto::msg::mesh::{
    RrLoad, RrLoadSummary, ThirdPartyRequest, ThirdPartyResult, ThirdPartyTest,
};
use mtuperf_proto::msg::rr::RrCounts;
use mtuperf_proto::msg::{ClientMsg, RrRequest, RrServed};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{hist, RrClientEnd, RrResult};
use crate::client::{resolve, ConnectOptions, Session};
use crate::config::{ConfigError, RrConfig};
use crate::control::answer_or_stop;
use crate::stamp::unix_ms;
use crate::EngineError;

/// One client host's part of an `rr --from` step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RrFromHost {
    /// The host's agent, as given.
    pub agent: String,
    /// Its share of the clients and of an open loop's rate.
    pub clients: u32,
    pub rate: Option<u64>,
    /// Blocks received per second of this host's measured phase.
    pub blocks_per_s: f64,
    /// Whether sent = answered + lost + unanswered held on this host.
    pub accounted: bool,
    /// Everything the host measured, and the target's account of its session.
    pub result: RrLoadSummary,
}

/// A client host of an `rr --from` step that measured nothing: it failed after every
/// host's session had opened. Its share is in none of the step's totals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RrFromFailed {
    /// The host's agent, as given.
    pub agent: String,
    /// Its share of the clients and of an open loop's rate.
    pub clients: u32,
    pub rate: Option<u64>,
    /// What went wrong (the host is `agent`): a refusal, the host agent's or the
    /// target's, typed; any other error as its text.
    pub error: Failed,
}

/// `share` of `total` split over `n` as evenly as it goes, the first taking the rest.
fn share(total: u64, n: u64, i: u64) -> u64 {
    total / n + u64::from(i < total % n)
}

/// How long one host may take from its request to its result: the run, its drain,
/// and the handshakes and reports of its own session with the target.
pub fn host_deadline(params: &RrConfig) -> Duration {
    params.time + params.timeout.max(Duration::from_secs(1)) * 2 + Duration::from_mins(1)
}

/// Runs one rr step from every host in `hosts` toward `target` at once.
pub fn run_from(
    hosts: &[String],
    target: &str,
    opts: &ConnectOptions,
    params: &RrConfig,
    stop: &AtomicBool,
) -> Result<RrResult, EngineError> {
    let n = hosts.len() as u64;
    if n == 0 || u64::from(params.clients) < n || params.rate.is_some_and(|r| r < n) {
        return Err(EngineError::Config(ConfigError::FromHosts {
            hosts: n,
            clients: params.clients,
            rate: params.rate,
        }));
    }
    params.check_shape()?;
    let to = resolve(target)?;
    let from = if to.is_ipv4() {
        IpAddr::V4(Ipv4Addr::UNSPECIFIED)
    } else {
        IpAddr::V6(Ipv6Addr::UNSPECIFIED)
    };
    let open = open_sessions(hosts, opts)?;
    let started_unix_ms = unix_ms();
    let loads: Vec<RrLoad> = (0..n).map(|i| load(params, n, i)).collect();
    let ask = Ask {
        from,
        to,
        until: Instant::now() + host_deadline(params),
        stop,
    };
    let ask = &ask;
    let results: Vec<Result<ThirdPartyResult, EngineError>> = thread::scope(|s| {
        let joins: Vec<_> = open
            .iter()
            .zip(&loads)
            .map(|(session, &rr)| s.spawn(move || ask.one(session, rr)))
            .collect();
        joins.into_iter().map(joined).collect()
    });
    open.into_iter().for_each(Session::close);
    let (parts, failed, first_error) = sort(hosts, &loads, results);
    // What the hosts that succeeded measured is kept; only none at all is an error.
    match first_error {
        Some(e) if parts.is_empty() => Err(e),
        _ => Ok(merge(target, params, started_unix_ms, parts, failed)),
    }
}

/// A session with every host, all admitted before any is asked to send: a host
/// that cannot be reached ends the step before any traffic.
fn open_sessions(hosts: &[String], opts: &ConnectOptions) -> Result<Vec<Session>, EngineError> {
    let sessions: Vec<Result<Session, EngineError>> = thread::scope(|s| {
        let joins: Vec<_> = hosts
            .iter()
            .map(|h| s.spawn(move || Session::connect(h, opts)))
            .collect();
        joins.into_iter().map(joined).collect()
    });
    let mut open = Vec::new();
    let mut failed = None;
    for (host, s) in hosts.iter().zip(sessions) {
        match s {
            Ok(s) => open.push(s),
            Err(e) => {
                failed.get_or_insert(from_host(host, e));
            }
        }
    }
    match failed {
        Some(e) => {
            open.into_iter().for_each(Session::close);
            Err(e)
        }
        None => Ok(open),
    }
}

/// Host `i`'s load of `n`: its share of the clients and of an open loop's rate.
fn load(params: &RrConfig, n: u64, i: u64) -> RrLoad {
    RrLoad {
        proto: params.proto,
        block: params.block,
        request: params.request,
        clients: share(params.clients.into(), n, i) as u32,
        workers: params.workers.unwrap_or(0),
        threads: params.threads.unwrap_or(0),
        duration_ms: params.time.as_millis() as u64,
        rate: params.rate.map(|r| share(r, n, i)),
        timeout_ms: params.timeout.as_millis() as u64,
        verify: params.verify,
    }
}

/// What every host is asked: its load from `from` toward `to`, answered by `until`.
struct Ask<'a> {
    from: IpAddr,
    to: std::net::SocketAddr,
    until: Instant,
    /// Ctrl-C: each host is told to stop, and still sends what it measured.
    stop: &'a AtomicBool,
}

impl Ask<'_> {
    fn one(&self, session: &Session, rr: RrLoad) -> Result<ThirdPartyResult, EngineError> {
        let req = ThirdPartyRequest {
            test: ThirdPartyTest::RrLoad { rr },
            from: self.from,
            to: self.to,
            mss: None,
        };
        let sock = session.control.socket();
        session.control.send(&ClientMsg::ThirdParty(req))?;
        if answer_or_stop(sock, self.until, self.stop).is_err() {
            session.control.send(&ClientMsg::Stop)?;
            answer_or_stop(sock, self.until, &AtomicBool::new(false))?;
        }
        session.control.expect::<ThirdPartyResult>(
            Some(self.until.saturating_duration_since(Instant::now())),
            "its rr load's result",
        )
    }
}

/// The hosts' answers as the parts that measured, the hosts that failed, and the
/// first failure (the step's error when no host measured).
fn sort(
    hosts: &[String],
    loads: &[RrLoad],
    results: Vec<Result<ThirdPartyResult, EngineError>>,
) -> (Vec<RrFromHost>, Vec<RrFromFailed>, Option<EngineError>) {
    let mut parts = Vec::new();
    let mut failed = Vec::new();
    let mut first_error = None;
    for ((host, load), r) in hosts.iter().zip(loads).zip(results) {
        match checked(r) {
            Ok(summary) => parts.push(host_part(host, load, summary)),
            Err(e) => {
                failed.push(RrFromFailed {
                    agent: host.clone(),
                    clients: load.clients,
                    rate: load.rate,
                    error: e.failed(),
                });
                first_error.get_or_insert(from_host(host, e));
            }
        }
    }
    (parts, failed, first_error)
}

/// A host's answer as its rr load's summary, checked.
fn checked(r: Result<ThirdPartyResult, EngineError>) -> Result<RrLoadSummary, EngineError> {
    let ThirdPartyResult::RrLoad(summary) = r? else {
        return Err(EngineError::Protocol(
            "answered with another test's result".into(),
        ));
    };
    summary
        .check()
        .map_err(|m| EngineError::Protocol(format!("its rr load's result: {m}")))?;
    Ok(*summary)
}

fn joined<T>(h: thread::ScopedJoinHandle<'_, Result<T, EngineError>>) -> Result<T, EngineError> {
    h.join()
        .unwrap_or_else(|_| Err(EngineError::Protocol("a host's thread panicked".into())))
}

fn from_host(host: &str, e: EngineError) -> EngineError {
    EngineError::FromHost {
        host: host.to_string(),
        source: Box::new(e),
    }
}

fn host_part(host: &str, load: &RrLoad, s: RrLoadSummary) -> RrFromHost {
    let q = &s.requester;
    let c = &q.counts;
    RrFromHost {
        agent: host.to_string(),
        clients: load.clients,
        rate: load.rate,
        blocks_per_s: if q.wall_ns > 0 {
            c.blocks as f64 / (q.wall_ns as f64 / 1e9)
        } else {
            0.0
        },
        accounted: c.requests_sent == c.blocks + c.lost + q.unanswered,
        result: s,
    }
}

fn add_cpu(sum: &mut Option<ThreadsCpu>, o: Option<ThreadsCpu>) {
    match (sum.as_mut(), o) {
        (Some(a), Some(b)) => a.add(&b),
        (None, b) => *sum = b,
        (Some(_), None) => {}
    }
}

/// Why a step with failed hosts is incomplete: how many measured, and each failure.
fn failed_reasons(measured: usize, failed: &[RrFromFailed]) -> Vec<Interrupt> {
    if failed.is_empty() {
        return Vec::new();
    }
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    let mut out = vec![Interrupt::FromHostsMissing {
        measured: count(measured),
        hosts: count(measured + failed.len()),
    }];
    out.extend(failed.iter().map(|f| Interrupt::FromHostFailed {
        host: f.agent.clone(),
        error: f.error.clone(),
    }));
    out
}

/// The hosts' parts summed: the requesters' counts, threads, CPU and errors, the
/// target's accounts of their sessions, and the reasons a part was interrupted.
struct Sums {
    counts: RrCounts,
    unanswered: u64,
    threads: u32,
    workers: u32,
    wall_ns: u64,
    cpu: Option<ThreadsCpu>,
    errors: Vec<String>,
    reasons: Vec<Interrupt>,
    served: RrServed,
}

fn sum(parts: &[RrFromHost]) -> Sums {
    let first = parts.first().map(|p| &p.result);
    let mut t = Sums {
        counts: RrCounts::default(),
        unanswered: 0,
        threads: 0,
        workers: 0,
        wall_ns: 0,
        cpu: None,
        errors: Vec::new(),
        reasons: Vec::new(),
        served: RrServed {
            before: first.map(|s| s.served.before.clone()).unwrap_or_default(),
            after: first.map(|s| s.served.after.clone()).unwrap_or_default(),
            iface: first.and_then(|s| s.served.iface.clone()),
            ..RrServed::default()
        },
    };
    for p in parts {
        let (s, q) = (&p.result, &p.result.requester);
        t.counts.add(&q.counts);
        t.unanswered += q.unanswered;
        t.threads += q.threads;
        t.workers += s.workers;
        t.wall_ns = t.wall_ns.max(q.wall_ns);
        add_cpu(&mut t.cpu, q.cpu);
        add_cpu(&mut t.served.cpu, s.served.cpu);
        t.errors
            .extend(q.errors.iter().map(|e| format!("{}: {e}", p.agent)));
        if !s.interrupted_by.is_empty() {
            t.reasons.push(Interrupt::FromHost {
                host: p.agent.clone(),
                causes: s.interrupted_by.clone(),
            });
        }
        t.served.requests += s.served.requests;
        t.served.responses += s.served.responses;
        t.served.bytes_sent += s.served.bytes_sent;
        t.served.rejected += s.served.rejected;
        t.served.wall_ns = t.served.wall_ns.max(s.served.wall_ns);
    }
    t
}

/// The union of the hosts' parts as one rr result (`from` keeps each part,
/// `from_failed` the hosts that measured nothing).
fn merge(
    target: &str,
    params: &RrConfig,
    started_unix_ms: i64,
    parts: Vec<RrFromHost>,
    failed: Vec<RrFromFailed>,
) -> RrResult {
    let t = sum(&parts);
    let mut reasons = failed_reasons(parts.len(), &failed);
    reasons.extend(t.reasons);
    let first = parts.first().map(|p| &p.result);
    RrResult {
        // The clients and rate that ran: the measured hosts' shares.
        request: RrRequest {
            clients: parts.iter().map(|p| p.clients).sum(),
            rate: params
                .rate
                .map(|_| parts.iter().filter_map(|p| p.rate).sum()),
            ..params.wire(Vec::new(), None)
        },
        workers: t.workers,
        target: target.to_string(),
        local_addr: parts
            .iter()
            .map(|p| p.agent.as_str())
            .collect::<Vec<_>>()
            .join(","),
        started_unix_ms,
        client_host: first.map(|s| s.host.clone()).unwrap_or_default(),
        agent_host: first.map(|s| s.peer_host.clone()).unwrap_or_default(),
        client: RrClientEnd {
            counts: t.counts,
            unanswered: t.unanswered,
            errors: t.errors,
            latency: hist::merge(parts.iter().map(|p| &p.result.requester.latency)),
            threads: t.threads,
            cpu: t.cpu,
            timeout_ns: params.timeout.as_nanos() as u64,
            verify: params.verify,
            // Several hosts' system-wide figures do not add up to one host's: each
            // host's are in its part.
            before: HostSnapshot::default(),
            after: HostSnapshot::default(),
            iface: None,
            wall_ns: t.wall_ns,
            intervals: Vec::new(),
            placement: None,
        },
        agent: t.served,
        reverse: None,
        interrupted: !reasons.is_empty(),
        interrupted_by: reasons,
        from: parts,
        from_failed: failed,
        diagnosis: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_to_the_total() {
        for (total, n) in [(1u64, 1u64), (5, 2), (7, 3), (4096, 3), (10, 10)] {
            let s: Vec<u64> = (0..n).map(|i| share(total, n, i)).collect();
            assert_eq!(s.iter().sum::<u64>(), total, "{total}/{n}: {s:?}");
            assert!(s.iter().max().unwrap() - s.iter().min().unwrap() <= 1);
        }
    }

    #[test]
    fn too_few_clients_for_the_hosts_is_refused_before_connecting() {
        let cfg = RrConfig {
            clients: 1,
            ..RrConfig::default()
        };
        let hosts = ["192.0.2.1".to_string(), "192.0.2.2".to_string()];
        let r = run_from(
            &hosts,
            "192.0.2.3",
            &ConnectOptions::default(),
            &cfg,
            &AtomicBool::new(false),
        );
        assert!(
            matches!(
                &r,
                Err(EngineError::Config(ConfigError::FromHosts {
                    hosts: 2,
                    clients: 1,
                    rate: None
                }))
            ),
            "{r:?}"
        );
    }
}
