//! The client's side of an rr run: registers its UDP ports (or opens one TCP data
//! connection per client), spreads the clients over a few threads, samples live
//! intervals, and joins both ends' accounts into one result.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use mtuperf_proto::msg::rr::RrProto;
use mtuperf_proto::msg::rr::RrReverse;
use mtuperf_proto::msg::{ClientMsg, RrReady, RrRequest, RrServed};

use super::bidir_responder::{self, Responder};
use super::observer::RrObserver;
use super::requester::{self, udp_socket, Drive};
use super::{RrBidirResult, RrClientEnd, RrInterval, RrResult};
use crate::client::Session;
use crate::config::RrConfig;
use crate::explain;
use crate::flow::DataReady;
use crate::placement::{Pinning, Watch};
use crate::sampler::Sampler;
use crate::stall::{self, Span};
use crate::stamp::unix_ms;
use crate::EngineError;

/// Runs one rr step on an open session. `stop` (Ctrl-C) ends it early.
pub fn run(
    session: &Session,
    params: &RrConfig,
    stop: &Arc<AtomicBool>,
    obs: &dyn RrObserver,
) -> Result<RrResult, EngineError> {
    let cores = thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let nthreads = params
        .threads
        .unwrap_or(cores)
        .clamp(1, params.clients.max(1));
    let local_ip = session.bind().unwrap_or(session.agent.ip());
    requester::ensure_nofile(params)?;
    let udp = if params.proto == RrProto::Udp {
        (0..requester::udp_socket_count(params.clients, nthreads))
            .map(|_| udp_socket(local_ip))
            .collect::<Result<Vec<_>, _>>()?
    } else {
        Vec::new()
    };
    let udp_ports = udp
        .iter()
        .filter_map(|s| s.local_addr().ok().map(|a| a.port()))
        .collect();
    let (listen, bidir) = if params.bidir {
        let (l, b) = bidir_responder::bind(
            local_ip,
            params.proto,
            params.clients,
            params.timeout,
            params.verify,
            |w| obs.warning(w),
        )?;
        (Some(l), Some(b))
    } else {
        (None, None)
    };
    // The wire request, whole: the config with the ports just bound.
    let req = params.wire(udp_ports, bidir);
    let started_unix_ms = unix_ms();
    let ready: RrReady = session.ask(&ClientMsg::Rr(req.clone()), "rr ready")?;
    obs.ready(&ready);
    // Serves the agent's reverse requests from before Go until its report arrived.
    let responder = match (listen, &req.bidir) {
        (Some(l), Some(b)) => {
            let max = Duration::from_millis(req.duration_ms)
                + params.timeout.max(Duration::from_secs(1))
                + session.reply_timeout()
                + Duration::from_secs(30);
            let r = Responder::start(
                l,
                &req,
                b,
                session.agent.ip(),
                ready.reverse_ports.clone(),
                nthreads,
                max,
            );
            obs.responder(SocketAddr::new(local_ip, b.port));
            Some(r)
        }
        _ => None,
    };
    let sampler = Sampler::toward(session.agent.ip());
    let transports = if udp.is_empty() {
        let mut conns = Vec::new();
        for i in 0..req.clients {
            let c = session.open_data(i, |s| {
                let _ = s.set_tcp_nodelay(true);
                super::no_time_wait(s);
            })?;
            c.set_nonblocking(true)
                .map_err(|e| EngineError::io("data connection", e))?;
            conns.push(c);
        }
        let DataReady = session
            .control
            .expect(Some(session.reply_timeout()), "data ready")?;
        requester::tcp_transports(conns, nthreads)
    } else {
        requester::udp_transports(
            udp,
            SocketAddr::new(session.agent.ip(), ready.port),
            nthreads,
        )?
    };
    let pin = Pinning::new(params.cpus.clone());
    let watch = Watch::start(&pin, sampler.iface.as_ref().map(|i| i.name.as_str()));
    let t0 = Instant::now();
    let before = sampler.snapshot(t0);
    session.control.send(&ClientMsg::Go)?;
    let drive = Drive {
        req: &req,
        token: ready.token,
        timeout_ns: params.timeout.as_nanos() as u64,
        verify: params.verify,
        stop,
        interval_ns: params.interval.as_nanos() as u64,
        pin: Some(&pin),
    };
    let (mine, intervals) = requester::run(transports, &drive, t0, obs);
    let placement = watch.finish();
    let after = sampler.snapshot(t0);
    let mut reasons = Vec::new();
    if stop.load(Ordering::Relaxed) {
        reasons.push("stopped by a signal (Ctrl-C or SIGTERM)".to_string());
    }
    // The agent reports after its own requester drained (bidir): allow for the drain.
    let mut wait = session.reply_timeout() + params.timeout;
    if req.bidir.is_some() {
        wait += Duration::from_secs(10);
    }
    let asked = Instant::now();
    let mut report_missing = false;
    let answer: Result<RrServed, EngineError> = session
        .control
        .send(&ClientMsg::Stop)
        .and_then(|()| session.control.expect(Some(wait), "the agent's rr report"));
    let mut agent = match answer {
        Ok(r) => r,
        Err(e) => {
            let at = t0.elapsed().as_secs_f64();
            reasons.push(match e {
                EngineError::Agent(message) => format!("the agent failed: {message}"),
                e @ (EngineError::Unexpected { .. } | EngineError::Refused(_)) => e.to_string(),
                EngineError::Timeout { .. } => format!(
                    "no report from the agent within {} s of this end's finish at {:.1} s",
                    asked.elapsed().as_secs(),
                    asked.saturating_duration_since(t0).as_secs_f64()
                ),
                e => format!(
                    "the agent went away at {at:.1} s ({e}); only this end's figures are complete"
                ),
            });
            // Nothing more is expected from the agent on this session.
            session.control.shutdown();
            report_missing = true;
            RrServed::default()
        }
    };
    let reverse = match (responder, agent.reverse.take()) {
        (Some(r), Some(requester)) => Some(RrBidirResult::new(requester, &r.finish())),
        (Some(r), None) => {
            let responder = r.finish();
            if reasons.is_empty() {
                return Err(EngineError::Protocol(
                    "the agent ran no reverse direction in a --bidir test".into(),
                ));
            }
            Some(RrBidirResult::new(RrReverse::default(), &responder))
        }
        _ => None,
    };
    if let Some(first) = mine.errors.first() {
        reasons.push(format!("this end: {first}"));
    }
    let gaps = quiet(&intervals, &req, params.interval);
    reasons.extend(stall::describe(&gaps, "no block came back from the agent"));
    let starved = mine.counts.blocks == 0 && mine.counts.requests_sent > 0;
    let failed = starved || report_missing || !gaps.is_empty();
    let mut result = RrResult {
        workers: ready.workers,
        target: session.agent.to_string(),
        local_addr: session
            .control
            .local()
            .map(|a| a.to_string())
            .unwrap_or_default(),
        started_unix_ms,
        client_host: mtuperf_sys::host::identity(crate::stamp::SOFTWARE),
        agent_host: session.info.host.clone(),
        client: RrClientEnd {
            counts: mine.counts,
            unanswered: mine.unanswered,
            errors: mine.errors,
            latency: mine.latency,
            threads: mine.threads,
            cpu: mine.cpu,
            timeout_ns: params.timeout.as_nanos() as u64,
            verify: params.verify,
            before,
            after,
            iface: sampler.iface.clone(),
            wall_ns: mine.wall_ns,
            intervals,
            placement: Some(placement),
        },
        agent,
        reverse,
        interrupted: !reasons.is_empty(),
        interrupt_reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
        request: req,
        from: Vec::new(),
        from_failed: Vec::new(),
        diagnosis: None,
    };
    if params.explain && failed && !stop.load(Ordering::Relaxed) {
        result.diagnosis = Some(explain::diagnose(
            session,
            &evidence(&result, report_missing),
        ));
    }
    Ok(result)
}

/// What a step that failed showed, for [`explain::diagnose`].
fn evidence(r: &RrResult, report_missing: bool) -> explain::Evidence {
    let q = &r.request;
    explain::Evidence {
        test: match q.proto {
            RrProto::Udp => explain::Test::RrUdp {
                block: q.block,
                request: q.request,
            },
            RrProto::Tcp => explain::Test::RrTcp,
        },
        received: r.client.counts.blocks,
        late: r.client.counts.late,
        timeout_ns: r.client.timeout_ns,
        agent: (!report_missing).then_some(explain::Account {
            received: r.agent.requests,
            answered: r.agent.responses,
        }),
    }
}

/// The stalls of a run's intervals: spans where no block arrived at all. A block that
/// came after its request had timed out is still an answer (the agent served it, late:
/// a queue past the knee, counted lost and late), so a retry storm is not a stall.
fn quiet(intervals: &[RrInterval], req: &RrRequest, interval: Duration) -> Vec<(u64, u64)> {
    let spans: Vec<Span> = intervals
        .iter()
        .map(|i| Span {
            start_ns: i.start_ns,
            end_ns: i.end_ns,
            moved: i.blocks + i.late > 0,
        })
        .collect();
    // An open loop slower than one request per second leaves quiet intervals by
    // design: only a silence of several request spacings is a stall there.
    let spacing_ns = req.rate.filter(|&r| r > 0).map_or(0, |r| 2_000_000_000 / r);
    stall::stalls(
        &spans,
        (interval.as_nanos() as u64).max(spacing_ns),
        req.duration_ms * 1_000_000,
    )
}

/// The rr kind: one load step on an open session.
#[derive(Debug, Clone, Copy, Default)]
pub struct Rr;

impl crate::kind::Measurement for Rr {
    type Config = RrConfig;
    type Result = RrResult;
    type Observer = dyn RrObserver;
    type Handler = super::agent::RrHandler;
    const NAME: &'static str = "rr";

    fn run(
        &self,
        session: &Session,
        config: &RrConfig,
        stop: &Arc<AtomicBool>,
        obs: &dyn RrObserver,
    ) -> Result<RrResult, EngineError> {
        run(session, config, stop, obs)
    }
}

impl crate::kind::Outcome for RrResult {
    fn target(&self) -> &str {
        &self.target
    }

    fn interrupt_reason(&self) -> Option<&str> {
        self.interrupt_reason.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn iv(k: u64, blocks: u64, late: u64) -> RrInterval {
        RrInterval {
            start_ns: k * S,
            end_ns: (k + 1) * S,
            blocks,
            lost: 40_000,
            late,
            mean_ns: (blocks > 0).then_some(150_000_000),
            max_ns: (blocks > 0).then_some(390_000_000),
        }
    }

    fn request() -> RrRequest {
        crate::config::RrConfig {
            time: Duration::from_secs(10),
            ..crate::config::RrConfig::default()
        }
        .wire(Vec::new(), None)
    }

    #[test]
    fn answers_later_than_the_timeout_are_no_stall() {
        // Issue 28's 4096-client UDP step: after the first second every block came
        // after its request had timed out (the agent answered all 403,591 requests),
        // so no block was "on time" for five seconds. That is loss, not a stall.
        let mut storm = vec![iv(0, 9498, 0)];
        storm.extend((1..6).map(|k| iv(k, 0, 38_000)));
        storm.extend((6..10).map(|k| iv(k, 30_000, 1_000)));
        assert!(quiet(&storm, &request(), Duration::from_secs(1)).is_empty());
        // Nothing at all for those five seconds is one.
        let mut silent = vec![iv(0, 9498, 0)];
        silent.extend((1..6).map(|k| iv(k, 0, 0)));
        silent.extend((6..10).map(|k| iv(k, 30_000, 0)));
        assert_eq!(
            quiet(&silent, &request(), Duration::from_secs(1)),
            vec![(S, 6 * S)]
        );
    }
}
