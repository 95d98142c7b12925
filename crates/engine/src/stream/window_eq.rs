//! The window equation as evidence for the verdict: a TCP connection cannot carry more
//! than its window per round trip, rate ≤ window / RTT. When a direction's goodput is
//! what its send buffer (or receive buffer) allows per round trip, and the path could
//! carry far more, that buffer is the limit, whatever the kernel's limit clocks say.
//!
//! Why this is needed: the kernel's send-buffer clock (`tcpi_sndbuf_limited`) starts
//! only when a transmission empties the write queue while the writer is blocked. A
//! pacing sender (BBR) spreads each buffer's worth over the round trip, and the kernel
//! books that time as plain busy: on a 4 KiB send buffer behind a 15–23 ms round trip
//! the clock reads only 31–36% (docs/stream.md, "Send buffer").
//!
//! The thresholds, and why:
//! * [`HELD`] = 0.5: the buffer is "in use" when the run carried at least half of
//!   window / min RTT. The kernel charges a buffer with the memory its packets take
//!   (`sk_wmem_queued` against `sk_sndbuf`; the receive window is what is left of
//!   `sk_rcvbuf` after the same overhead, `tcp_adv_win_scale`/`scaling_ratio`), and
//!   doubles a `SO_SNDBUF`/`SO_RCVBUF` request for that bookkeeping (socket(7)): the
//!   payload a buffer holds is at least about half the value getsockopt reports. A
//!   flow below half of it is held by something else (congestion control, the
//!   application). The run can also carry *more* than window / RTT: `tcp_sendmsg`
//!   checks the buffer only before it starts a new skb, so one skb of the size goal
//!   always passes a full buffer; that is why the bound is one-sided.
//! * The min RTT, not the smoothed RTT: a flow that builds its own queue inflates its
//!   smoothed RTT until any window looks "full"; window / min RTT is the most the
//!   buffer allows on the emptiest path, so the test is the strict one.
//! * [`ROOM`] = 4: the path carries at least 4× what the buffer allows (link speed ×
//!   min RTT ≥ 4 × the buffers): with goodput up to ~2× window / RTT (one skb past
//!   the buffer), that still leaves the link at least twice the run's rate, so the
//!   link is not what held it. Unknown link speed: no verdict from this rule.

use super::End;

/// The run carried at least this share of window / min RTT.
pub const HELD: f64 = 0.5;
/// Link speed × min RTT is at least this many times the buffers.
pub const ROOM: f64 = 4.0;

/// What the window equation says about one buffer.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowBound {
    /// The buffers of all connections of the direction, bytes.
    pub window: f64,
    /// window / min RTT, bit/s.
    pub allows_bps: f64,
    pub goodput_bps: f64,
    /// Link speed × min RTT, bytes.
    pub link_bdp: f64,
}

/// The window equation for `buffer` bytes per connection over `conns` connections:
/// `Some` when the goodput is at least [`HELD`] of what the buffers allow per min
/// round trip and the link carries at least [`ROOM`] times that.
pub fn bound(
    buffer: Option<u32>,
    conns: usize,
    min_rtt_us: Option<u32>,
    goodput_bps: Option<f64>,
    link_bps: Option<f64>,
) -> Option<WindowBound> {
    let window = f64::from(buffer.filter(|b| *b > 0)?) * conns.max(1) as f64;
    let rtt_s = f64::from(min_rtt_us.filter(|r| *r > 0)?) / 1e6;
    let goodput_bps = goodput_bps.filter(|g| *g > 0.0)?;
    let link_bdp = link_bps? / 8.0 * rtt_s;
    let allows_bps = window * 8.0 / rtt_s;
    (goodput_bps >= HELD * allows_bps && link_bdp >= ROOM * window).then_some(WindowBound {
        window,
        allows_bps,
        goodput_bps,
        link_bdp,
    })
}

/// Which buffer the window equation blames: the send buffer's, the receive buffer's,
/// or, when both are in use, the one whose kernel clock (`sndbuf`, `rwnd` share of
/// the busy time) ran longer, and the smaller one when the clocks do not tell.
pub fn pick(
    send: Option<WindowBound>,
    recv: Option<WindowBound>,
    clocks: (Option<f64>, Option<f64>),
    sender: End,
    receiver: End,
) -> Option<(bool, WindowBound, End)> {
    match (send, recv) {
        (Some(s), Some(r)) => {
            let send_wins = match clocks {
                (Some(sc), Some(rc)) if (sc - rc).abs() >= 0.1 => sc > rc,
                _ => s.window <= r.window,
            };
            Some(if send_wins {
                (true, s, sender)
            } else {
                (false, r, receiver)
            })
        }
        (Some(s), None) => Some((true, s, sender)),
        (None, Some(r)) => Some((false, r, receiver)),
        (None, None) => None,
    }
}
