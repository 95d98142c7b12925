//! The families fed by watch checks (one check: one peer address, both directions).
//! Labels: `peer` as the operator named it, `address` checked, `network` the local
//! interface the check left by (a node with two interconnects has two).

use prometheus::{GaugeVec, IntCounterVec, IntGaugeVec, Opts, Registry};

use crate::path::PathResult;
use crate::watch::{Check, Cycle, RrProbe};

const PATH: &[&str] = &["peer", "address", "network"];
const DIR: &[&str] = &["peer", "address", "network", "direction"];
const OUTCOME: &[&str] = &["peer", "address", "network", "outcome"];

#[derive(Clone, Debug)]
pub struct WatchMetrics {
    pub mtu: IntGaugeVec,
    pub expected: IntGaugeVec,
    pub ok: IntGaugeVec,
    pub last_check: GaugeVec,
    pub last_success: GaugeVec,
    pub checks: IntCounterVec,
    /// The last cycle's figures: without labels, absent until a cycle has ended (a
    /// history export, which has no cycles, shows none rather than zeros).
    pub cycle_duration: GaugeVec,
    pub cycle_deadline: GaugeVec,
    pub cycle_late: IntGaugeVec,
    /// The rate under CPU pressure: no labels, and the pressure by its source.
    pub rate_factor: IntGaugeVec,
    pub cycle_interval: GaugeVec,
    pub cpu_pressure: GaugeVec,
    pub rr_p50: GaugeVec,
    pub rr_p99: GaugeVec,
    pub rr_loss: GaugeVec,
    pub rr_answered: GaugeVec,
    pub rr_lost: GaugeVec,
    pub rr_reasm_fails: GaugeVec,
}

// The names are constants, valid by construction (the tests build them).
#[allow(clippy::expect_used)]
fn int_gauge(name: &str, help: &str, labels: &[&str]) -> IntGaugeVec {
    IntGaugeVec::new(Opts::new(name, help), labels).expect("a valid metric name")
}

#[allow(clippy::expect_used)]
fn gauge(name: &str, help: &str) -> GaugeVec {
    GaugeVec::new(Opts::new(name, help), PATH).expect("a valid metric name")
}

// The HELP texts below name serve's --watch-every and --watch-expect on purpose: HELP
// is part of the exposition the agent serves itself on /metrics (Prometheus scrapes it
// from the agent, no report layer in between), and it documents each metric by the
// flag that sets it. tests/cli/engine_flags.rs allows exactly these.
impl Default for WatchMetrics {
    #[allow(clippy::expect_used)]
    fn default() -> Self {
        let [rr_p50, rr_p99, rr_loss, rr_answered, rr_lost, rr_reasm_fails] = rr_probe_gauges();
        WatchMetrics {
            mtu: int_gauge(
                "mtuperf_path_mtu_bytes",
                "Largest IP packet that crossed the path in one direction (forward: this node to the peer) at the last check, read as an interface MTU",
                DIR,
            ),
            expected: int_gauge(
                "mtuperf_path_expected_mtu_bytes",
                "IP packet size the path must carry both ways (the checking interface's MTU unless --watch-expect)",
                PATH,
            ),
            ok: int_gauge(
                "mtuperf_path_ok",
                "1 if the last check found the path carries the expected MTU both ways, 0 if not or if the check failed",
                PATH,
            ),
            last_check: gauge(
                "mtuperf_watch_last_check_timestamp_seconds",
                "When the last check of this path ended (Unix time)",
            ),
            last_success: gauge(
                "mtuperf_watch_last_success_timestamp_seconds",
                "When the last check of this path that ran ended (Unix time): the peer answered and the path was measured, whatever it carried",
            ),
            cycle_duration: GaugeVec::new(Opts::new(
                "mtuperf_watch_cycle_duration_seconds",
                "How long the last watch cycle took, from its start to its last check's end (at most its deadline)",
            ), &[])
            .expect("a valid metric name"),
            cycle_deadline: GaugeVec::new(Opts::new(
                "mtuperf_watch_cycle_deadline_seconds",
                "The deadline of a watch cycle (--watch-every less the jitter, at least the rr probe and 5 s)",
            ), &[])
            .expect("a valid metric name"),
            cycle_late: int_gauge(
                "mtuperf_watch_cycle_late_checks",
                "Checks of the last cycle that had not ended at its deadline (each also counted as a failed check)",
                &[],
            ),
            rate_factor: int_gauge(
                "mtuperf_watch_rate_factor",
                "How many times --watch-every the watch now waits between cycles: 1 as asked; 2, 4 or 8 (at most) while the host is short of CPU (see mtuperf_watch_host_cpu_pressure_ratio). Never 0: checks never stop",
                &[],
            ),
            cycle_interval: GaugeVec::new(Opts::new(
                "mtuperf_watch_cycle_interval_seconds",
                "Time from one watch cycle's start to the next, before the jitter: --watch-every times mtuperf_watch_rate_factor",
            ), &[])
            .expect("a valid metric name"),
            cpu_pressure: GaugeVec::new(Opts::new(
                "mtuperf_watch_host_cpu_pressure_ratio",
                "The host's CPU pressure the watch read at its last cycle's start, by source: psi_some_avg10 (share of the last 10 s some task waited for a CPU; the rate is lowered at 0.25 or more, restored below 0.10) or, without PSI, loadavg_per_cpu (1-minute load average over the online CPUs; lowered at 1.5, restored below 1.0)",
            ), &["source"])
            .expect("a valid metric name"),
            checks: IntCounterVec::new(
                Opts::new("mtuperf_watch_checks_total", "Watch checks of this path, by outcome (ok, not_ok, error)"),
                OUTCOME,
            )
            .expect("a valid metric name"),
            rr_p50,
            rr_p99,
            rr_loss,
            rr_answered,
            rr_lost,
            rr_reasm_fails,
        }
    }
}

/// The series of the watch's rr probe: p50, p99, loss, answered, lost, reassembly
/// failures (in that order).
fn rr_probe_gauges() -> [GaugeVec; 6] {
    [
        gauge(
            "mtuperf_rr_latency_p50_seconds",
            "Median request-to-block round trip of the last watch rr probe, on the checking node's clock",
        ),
        gauge(
            "mtuperf_rr_latency_p99_seconds",
            "99th percentile request-to-block round trip of the last watch rr probe, on the checking node's clock",
        ),
        gauge(
            "mtuperf_rr_loss_ratio",
            "Requests lost over requests sent in the last watch rr probe",
        ),
        gauge(
            "mtuperf_rr_answered_blocks",
            "Blocks answered in time in the last watch rr probe (0: the path answered nothing, and the latency series are absent)",
        ),
        gauge(
            "mtuperf_rr_lost_blocks",
            "8 KiB blocks lost in the last watch rr probe: unanswered within 500 ms, or never (RAC's gc blocks lost)",
        ),
        gauge(
            "mtuperf_rr_reassembly_failures",
            "IP reassembly failures this node's kernel counted during the last watch rr probe (Ip ReasmFails delta, whole host; absent when unread): blocks return as IP fragments on a path below their size",
        ),
    ]
}

impl WatchMetrics {
    pub fn register(&self, r: &Registry) {
        let _ = r.register(Box::new(self.mtu.clone()));
        let _ = r.register(Box::new(self.expected.clone()));
        let _ = r.register(Box::new(self.ok.clone()));
        let _ = r.register(Box::new(self.last_check.clone()));
        let _ = r.register(Box::new(self.last_success.clone()));
        let _ = r.register(Box::new(self.cycle_duration.clone()));
        let _ = r.register(Box::new(self.cycle_deadline.clone()));
        let _ = r.register(Box::new(self.cycle_late.clone()));
        let _ = r.register(Box::new(self.rate_factor.clone()));
        let _ = r.register(Box::new(self.cycle_interval.clone()));
        let _ = r.register(Box::new(self.cpu_pressure.clone()));
        let _ = r.register(Box::new(self.checks.clone()));
        let _ = r.register(Box::new(self.rr_p50.clone()));
        let _ = r.register(Box::new(self.rr_p99.clone()));
        let _ = r.register(Box::new(self.rr_loss.clone()));
        let _ = r.register(Box::new(self.rr_answered.clone()));
        let _ = r.register(Box::new(self.rr_lost.clone()));
        let _ = r.register(Box::new(self.rr_reasm_fails.clone()));
    }

    /// Records one check: MTUs and ok when measured; ok 0 and no MTU when it failed.
    pub fn observe(&self, c: &Check) {
        let l = [c.peer.as_str(), c.address.as_str(), c.network.as_str()];
        self.observe_path(l, c.path.as_ref().ok(), c.ended_unix_ms);
        match &c.rr {
            Some(Ok(rr)) => self.observe_rr(l, rr),
            Some(Err(_)) => {
                for g in [
                    &self.rr_p50,
                    &self.rr_p99,
                    &self.rr_loss,
                    &self.rr_answered,
                    &self.rr_lost,
                    &self.rr_reasm_fails,
                ] {
                    let _ = g.remove_label_values(&l);
                }
            }
            None => {}
        }
    }

    /// One cycle ended.
    pub fn observe_cycle(&self, c: &Cycle) {
        self.cycle_duration
            .with_label_values(&[] as &[&str])
            .set(c.duration.as_secs_f64());
        self.cycle_deadline
            .with_label_values(&[] as &[&str])
            .set(c.deadline.as_secs_f64());
        self.cycle_late
            .with_label_values(&[] as &[&str])
            .set(c.late.len() as i64);
        self.rate_factor
            .with_label_values(&[] as &[&str])
            .set(i64::from(c.rate.factor));
        self.cycle_interval
            .with_label_values(&[] as &[&str])
            .set(c.interval.as_secs_f64());
        // One series: the source read last (a host does not switch, but an unread
        // pressure shows none rather than a stale value).
        self.cpu_pressure.reset();
        if let Some(p) = c.rate.pressure {
            self.cpu_pressure
                .with_label_values(&[p.kind.name()])
                .set(p.value);
        }
    }

    /// One path check of `l` (peer, address, network): None when it could not run.
    pub fn observe_path(&self, l: [&str; 3], path: Option<&PathResult>, ended_unix_ms: i64) {
        let dir = |d: &'static str| [l[0], l[1], l[2], d];
        let outcome = if let Some(p) = path {
            for (d, mtu) in [("forward", p.forward_mtu), ("reverse", p.reverse_mtu)] {
                self.mtu.with_label_values(&dir(d)).set(i64::from(mtu));
            }
            self.expected.with_label_values(&l).set(i64::from(p.expect));
            self.ok.with_label_values(&l).set(i64::from(p.ok));
            self.last_success
                .with_label_values(&l)
                .set(ended_unix_ms as f64 / 1e3);
            if p.ok {
                "ok"
            } else {
                "not_ok"
            }
        } else {
            let _ = self.mtu.remove_label_values(&dir("forward"));
            let _ = self.mtu.remove_label_values(&dir("reverse"));
            self.ok.with_label_values(&l).set(0);
            "error"
        };
        self.checks
            .with_label_values(&[l[0], l[1], l[2], outcome])
            .inc();
        self.last_check
            .with_label_values(&l)
            .set(ended_unix_ms as f64 / 1e3);
    }

    /// One rr probe of `l` (peer, address, network). A latency with no block
    /// answered is absent (its series removed), never 0: a p99 of 0 s would read as
    /// the best path in the cluster. `mtuperf_rr_answered_blocks` 0 says why.
    pub fn observe_rr(&self, l: [&str; 3], rr: &RrProbe) {
        for (g, v) in [(&self.rr_p50, rr.p50_ns), (&self.rr_p99, rr.p99_ns)] {
            match v {
                Some(ns) => g.with_label_values(&l).set(ns as f64 / 1e9),
                None => {
                    let _ = g.remove_label_values(&l);
                }
            }
        }
        self.rr_loss.with_label_values(&l).set(rr.loss_ratio());
        self.rr_answered
            .with_label_values(&l)
            .set(rr.answered() as f64);
        self.rr_lost.with_label_values(&l).set(rr.lost() as f64);
        match rr.reasm_fails {
            Some(n) => self.rr_reasm_fails.with_label_values(&l).set(n as f64),
            None => {
                let _ = self.rr_reasm_fails.remove_label_values(&l);
            }
        }
    }
}
