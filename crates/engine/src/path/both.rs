//! Both directions' searches at once. A silent direction costs its lost probes'
//! waits; searched one after the other, a pair with both directions silent paid both
//! in turn. The forward search runs on a thread of its own (its prober owns the
//! forward socket), the reverse one on the caller's (its prober asks through the
//! session's control connection); each keeps its own socket, so neither reads the
//! other's datagrams, and the observer sees every probe of both, on the caller's
//! thread, each direction's in its order.

use std::sync::mpsc;
use std::thread;

use super::search::{self, DirResult, Prober, SearchError};
use super::{Direction, Observed, Step};

/// One direction's search: its prober, where it starts (a size that must pass) and
/// its top (the sending interface's MTU).
pub struct Way<P> {
    pub prober: P,
    pub base: u32,
    pub top: u32,
}

/// What a search found, and its prober back (what its probes waited, a failure it
/// kept).
pub type Searched<P> = (Result<DirResult, SearchError>, P);

/// Runs `forward` on a thread of its own while `reverse` runs on this one; every
/// probe reaches `observer` here. None for the forward search when its thread ended
/// without a result.
pub fn search_both<F, R>(
    forward: Way<F>,
    reverse: Way<R>,
    observer: &mut dyn FnMut(Step),
) -> (Option<Searched<F>>, Searched<R>)
where
    F: Prober + Send,
    R: Prober,
{
    let (tx, rx) = mpsc::channel::<Step>();
    thread::scope(|s| {
        let fwd = s.spawn(move || {
            let mut send = |step: Step| {
                let _ = tx.send(step);
            };
            observed(forward, Direction::Forward, &mut send)
        });
        let rev = {
            // The forward probes that came meanwhile first, then this one.
            let mut relay = |step: Step| {
                rx.try_iter().for_each(&mut *observer);
                observer(step);
            };
            observed(reverse, Direction::Reverse, &mut relay)
        };
        let fwd = fwd.join().ok();
        // The forward thread is over: what it sent is all there.
        rx.try_iter().for_each(&mut *observer);
        (fwd, rev)
    })
}

/// One direction's search, each probe told to `observer`.
fn observed<P: Prober>(
    way: Way<P>,
    direction: Direction,
    observer: &mut dyn FnMut(Step),
) -> Searched<P> {
    let mut p = Observed {
        inner: way.prober,
        direction,
        observer,
    };
    let found = search::search(&mut p, way.base, way.top);
    (found, p.inner)
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::{Receiver, Sender};
    use std::time::Duration;

    use super::*;
    use crate::path::search::Outcome;

    /// A link of `mtu` whose first probe waits (bounded) for the other direction's
    /// first one, and carries nothing at all if it never comes: two searches in turn
    /// never get past their base size.
    struct Meeting {
        mtu: u32,
        tell: Option<Sender<()>>,
        hear: Option<Receiver<()>>,
    }

    impl Prober for Meeting {
        fn probe(&mut self, size: u32) -> Outcome {
            if let (Some(tell), Some(hear)) = (self.tell.take(), self.hear.take()) {
                let _ = tell.send(());
                if hear.recv_timeout(Duration::from_secs(10)).is_err() {
                    self.mtu = 0;
                }
            }
            if size <= self.mtu {
                Outcome::Passed
            } else {
                Outcome::Lost
            }
        }
    }

    fn meeting_pair(forward: u32, reverse: u32) -> (Meeting, Meeting) {
        let (to_rev, from_fwd) = mpsc::channel();
        let (to_fwd, from_rev) = mpsc::channel();
        (
            Meeting {
                mtu: forward,
                tell: Some(to_rev),
                hear: Some(from_rev),
            },
            Meeting {
                mtu: reverse,
                tell: Some(to_fwd),
                hear: Some(from_fwd),
            },
        )
    }

    #[test]
    fn the_two_directions_are_searched_at_once_and_each_finds_its_own_limit() {
        let (f, r) = meeting_pair(9000, 1500);
        let mut steps = Vec::new();
        let (fwd, rev) = search_both(
            Way {
                prober: f,
                base: 576,
                top: 9000,
            },
            Way {
                prober: r,
                base: 576,
                top: 9000,
            },
            &mut |s| steps.push(s),
        );
        let (fwd, _) = fwd.expect("the forward thread's result");
        let (fwd, rev) = (fwd.unwrap(), rev.0.unwrap());
        assert_eq!((fwd.largest_ok, rev.largest_ok), (9000, 1500));
        // Every probe of both reached the observer, each direction's in its order.
        let of = |d: Direction| steps.iter().filter(|s| s.direction == d).count();
        assert_eq!(of(Direction::Forward), fwd.probes as usize);
        assert_eq!(of(Direction::Reverse), rev.probes as usize);
        let first = |d: Direction| steps.iter().find(|s| s.direction == d).map(|s| s.size);
        assert_eq!(first(Direction::Forward), Some(576));
        assert_eq!(first(Direction::Reverse), Some(576));
    }
}
