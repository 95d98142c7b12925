//! The measured phase shared by both ends: one thread per data connection plus the
//! interval ticker on the calling thread.

use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use mtuperf_proto::msg::{ConnReport, IntervalSample};

use super::data::{recv_loop, send_loop, RecvPlan, SendPlan};
pub use super::ticker::Cut;
use super::ticker::{self, Tracked, Watch};

pub struct DataConn {
    pub index: u32,
    pub sock: TcpStream,
    pub sending: bool,
}

pub struct Phase<'a> {
    pub conns: Vec<DataConn>,
    /// What senders write: the generated payload or a file's content.
    pub data: &'a [u8],
    pub block: usize,
    /// Per-connection send plan (bytes already split per connection).
    pub plan: SendPlan,
    /// A receiver gives up after this long without data.
    pub idle: Duration,
    /// Hard end for receivers (the agent's maximum duration).
    pub recv_deadline: Instant,
    pub interval: Duration,
    pub omit: Duration,
    /// Receive coalescing of this end's receivers (see `recv_loop`).
    pub rx_coalesce: Duration,
    /// When blocked data threads are cut (see [`Cut`]).
    pub cut: Cut,
    /// The other end, for messages: "the agent" or "the client".
    pub peer: &'static str,
}

/// Runs the phase; `t0` is this end's Go instant; `stop` ends it early (senders stop
/// at once, receivers at the sender's end of stream; see [`Cut`] for those that block).
/// Returns the per-connection reports (sorted by index) and the interval samples.
pub fn run(
    phase: &Phase<'_>,
    t0: Instant,
    stop: &AtomicBool,
    emit: impl FnMut(&IntervalSample),
) -> (Vec<ConnReport>, Vec<IntervalSample>) {
    let tracked: Vec<Tracked> = phase
        .conns
        .iter()
        .filter_map(|c| {
            Some(Tracked {
                sending: c.sending,
                bytes: Arc::new(AtomicU64::new(0)),
                sock: Arc::new(c.sock.try_clone().ok()?),
                finished: Arc::new(AtomicBool::new(false)),
                cut: Arc::new(AtomicBool::new(false)),
            })
        })
        .collect();
    let remaining = AtomicUsize::new(phase.conns.len());
    let done = AtomicBool::new(phase.conns.is_empty());
    let (data, block, plan) = (phase.data, phase.block, phase.plan);
    let recv_plan = RecvPlan {
        coalesce: phase.rx_coalesce,
        idle: phase.idle,
        deadline: phase.recv_deadline,
        peer: phase.peer,
    };
    let mut reports = Vec::new();
    let intervals = thread::scope(|s| {
        let mut handles = Vec::new();
        for (conn, t) in phase.conns.iter().zip(&tracked) {
            let (remaining, done) = (&remaining, &done);
            handles.push(s.spawn(move || {
                let r = if conn.sending {
                    send_loop(&conn.sock, conn.index, data, plan, stop, t, t0)
                } else {
                    let mut buf = vec![0u8; block.max(1)];
                    recv_loop(&conn.sock, conn.index, &mut buf, recv_plan, t, t0)
                };
                t.finished.store(true, Ordering::Release);
                if remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
                    done.store(true, Ordering::Release);
                }
                r
            }));
        }
        let watch = Watch {
            cut: phase.cut,
            halt: stop,
        };
        let intervals = ticker::run(
            t0,
            phase.interval,
            phase.omit,
            &tracked,
            &done,
            &watch,
            emit,
        );
        for h in handles {
            if let Ok(r) = h.join() {
                reports.push(r);
            }
        }
        intervals
    });
    reports.sort_by_key(|r| r.index);
    (reports, intervals)
}
