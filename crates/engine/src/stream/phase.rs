//! The measured phase shared by both ends: one thread per data connection plus the
//! interval ticker on the calling thread.

use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use mtuperf_proto::msg::{ConnReport, IntervalSample, StreamLimit, StreamRequest};

use super::data::{recv_loop, send_loop, RecvPlan, SendPlan};
pub use super::ticker::Cut;
use super::ticker::{self, Tracked, Watch};
use crate::tick::Running;

/// Receivers give up on a sender that sends nothing for this long, and senders on a
/// receiver that takes nothing (the write timeout).
pub const IDLE: Duration = Duration::from_secs(10);

/// A sender still blocked in a write this long after the test's planned end is cut.
/// A blocked write that has copied nothing yet is normal flow control: the kernel
/// wakes a writer only once a good part of the send buffer is free, which at a slow
/// rate takes a while; two seconds of it is a stall, not a slow link.
pub const SEND_GRACE: Duration = Duration::from_secs(2);

/// A receiver still reading this long after the test's planned end is cut: beyond
/// the sender's own grace and the two ends' clock offset (the client starts its
/// clock before the agent sees Go), the last bytes are late by far more than any
/// queue explains.
pub const END_GRACE: Duration = Duration::from_secs(5);

/// After a stop (Ctrl-C, a deadline), senders still blocked this long, and receivers
/// that received nothing in such a span, are cut.
pub const HALT_GRACE: Duration = Duration::from_secs(2);

/// Requests `req`'s socket buffers (`--window`) and segment size (`--mss`) on a
/// data socket; both ends do, and report what the kernel granted.
pub fn socket_options(s: &socket2::Socket, req: &StreamRequest) {
    if let Some(w) = req.window {
        let _ = s.set_send_buffer_size(w as usize);
        let _ = s.set_recv_buffer_size(w as usize);
    }
    if let Some(m) = req.mss {
        let _ = s.set_tcp_mss(m);
    }
}

/// The live interval a request asks for (one second when it asks for none: the
/// agent still reports per second).
pub fn interval(req: &StreamRequest) -> Duration {
    Duration::from_millis(if req.interval_ms == 0 {
        1000
    } else {
        req.interval_ms
    })
}

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
    /// Receive polling of this end's receivers (see `recv_loop`).
    pub rx_poll: Duration,
    /// When blocked data threads are cut (see [`Cut`]).
    pub cut: Cut,
    /// The other end, for messages: "the agent" or "the client".
    pub peer: &'static str,
    /// Pins the data threads and registers them for placement sampling.
    pub pin: Option<std::sync::Arc<crate::placement::Pinning>>,
}

impl<'a> Phase<'a> {
    /// The phase `req` asks of this end: senders write `data` until `end` (or their
    /// share of the bytes), receivers give up at `recv_deadline`; `cycle` repeats
    /// `data` (generated payload) rather than sending it once (a file).
    pub fn new(
        req: &StreamRequest,
        conns: Vec<DataConn>,
        data: &'a [u8],
        end: Instant,
        recv_deadline: Instant,
        cycle: bool,
        peer: &'static str,
    ) -> Phase<'a> {
        Phase {
            conns,
            data,
            block: req.block as usize,
            plan: SendPlan {
                deadline: Some(end),
                bytes: match req.limit {
                    StreamLimit::Bytes { total } => Some(total / u64::from(req.streams)),
                    StreamLimit::Time { .. } => None,
                },
                block: req.block as usize,
                cycle,
                peer,
                zerocopy: req.zerocopy,
            },
            idle: IDLE,
            recv_deadline,
            interval: interval(req),
            omit: Duration::from_millis(req.omit_ms),
            rx_coalesce: Duration::from_micros(req.rx_coalesce_us.into()),
            rx_poll: Duration::from_micros(req.rx_poll_us.into()),
            cut: Cut {
                send_at: Some(end + SEND_GRACE),
                recv_at: Some(end + END_GRACE),
                after_halt: HALT_GRACE,
            },
            peer,
            pin: None,
        }
    }
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
    // A connection whose socket cannot be shared with the ticker (no descriptor left)
    // is not run; each connection keeps its own Tracked, and the ticker waits for
    // exactly the threads started.
    let (conns, tracked): (Vec<&DataConn>, Vec<Tracked>) = phase
        .conns
        .iter()
        .filter_map(|c| {
            let t = Tracked {
                sending: c.sending,
                bytes: Arc::new(AtomicU64::new(0)),
                sock: Arc::new(c.sock.try_clone().ok()?),
                finished: Arc::new(AtomicBool::new(false)),
                cut: Arc::new(AtomicBool::new(false)),
            };
            Some((c, t))
        })
        .unzip();
    let running = Running::new(conns.len());
    let recv_plan = RecvPlan {
        coalesce: phase.rx_coalesce,
        poll: phase.rx_poll,
        idle: phase.idle,
        deadline: phase.recv_deadline,
        peer: phase.peer,
    };
    let mut reports = Vec::new();
    let intervals = thread::scope(|s| {
        let mut handles = Vec::new();
        for (&conn, t) in conns.iter().zip(&tracked) {
            let (running, recv_plan) = (&running, &recv_plan);
            handles.push(s.spawn(move || {
                let r = data_thread(phase, conn, t, recv_plan, stop, t0);
                t.finished.store(true, Ordering::Release);
                running.finish_one();
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
            &running,
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

/// One data connection's thread: pinned and registered, then its send or receive loop.
fn data_thread(
    phase: &Phase<'_>,
    conn: &DataConn,
    t: &Tracked,
    recv_plan: &RecvPlan,
    stop: &AtomicBool,
    t0: Instant,
) -> ConnReport {
    if let Some(p) = phase.pin.as_deref() {
        p.enter(if conn.sending {
            mtuperf_proto::placement::ThreadRole::Sender
        } else {
            mtuperf_proto::placement::ThreadRole::Receiver
        });
    }
    if conn.sending {
        // The generated block is copied here, on the sending thread, so its pages are
        // allocated and first written by the thread that reads them (and on its NUMA
        // node). Sending from the one block the phase's caller made cost a 128K stream
        // 15-25% on the two-CPU lab (BENCHMARKS.md §19). A file is sent from the
        // caller's copy: it is read once.
        let own = phase.plan.cycle.then(|| phase.data.to_vec());
        let data = own.as_deref().unwrap_or(phase.data);
        send_loop(&conn.sock, conn.index, data, phase.plan, stop, t, t0)
    } else {
        let mut buf = vec![0u8; phase.block.max(1)];
        recv_loop(&conn.sock, conn.index, &mut buf, *recv_plan, t, t0)
    }
}
