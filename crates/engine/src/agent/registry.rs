//! Live sessions: the session count limit and the cookie → session map through which
//! data connections reach the session that asked for them.
//!
//! A data connection is bound to one use: its Hello's nonce (covered by the tag in an
//! authenticated session) is accepted once per session, only while a test of that
//! session waits for its data connections (a window opened by `accept_data`), and only
//! for an index the test asked for that is not filled yet. Anything else is closed at
//! once and counted, so a captured Hello replayed from new ports gets nothing and
//! queues nothing.

use std::collections::{HashMap, HashSet, VecDeque};
use std::net::{IpAddr, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

use mtuperf_proto::auth::{Key, Nonce};

use super::conns::ConnGuard;

/// A data connection handed to its session, with its share of the connection cap.
pub type DataConn = (u32, TcpStream, ConnGuard);

/// The test in progress waits for `filled.len()` data connections.
struct Window {
    filled: Vec<bool>,
}

struct Slot {
    peer: IpAddr,
    session_key: Option<Key>,
    data: Sender<DataConn>,
    window: Option<Window>,
    /// The data Hello nonces this session accepted (the last `MAX_SEEN`).
    seen: HashSet<Nonce>,
    seen_order: VecDeque<Nonce>,
}

/// Nonces remembered per session (1 MiB): a replay is refused unless the session has
/// accepted this many data connections since the original.
const MAX_SEEN: usize = 65_536;

impl Slot {
    fn remember(&mut self, nonce: Nonce) {
        if self.seen_order.len() >= MAX_SEEN {
            if let Some(old) = self.seen_order.pop_front() {
                self.seen.remove(&old);
            }
        }
        self.seen.insert(nonce);
        self.seen_order.push_back(nonce);
    }
}

pub struct Registry {
    max: u32,
    slots: Mutex<HashMap<String, Slot>>,
    opened: Condvar,
    rejected: AtomicU64,
}

/// Why a data connection was not taken.
#[derive(Debug, PartialEq, Eq)]
pub enum DataRejection {
    UnknownCookie,
    WrongPeer,
    BadTag,
    /// This Hello's nonce was already accepted: a replay.
    Replayed,
    /// No test of the session waited for data connections within the handshake timeout.
    NoTestWaiting,
    /// The test did not ask for this index, or it is already connected.
    Unwanted {
        index: u32,
    },
}

/// A data Hello, as the registry checks it.
pub struct DataHello<'a> {
    pub cookie: &'a str,
    pub index: u32,
    pub nonce: Nonce,
    pub tag: Option<&'a str>,
    pub peer: IpAddr,
}

impl Registry {
    pub fn new(max: u32) -> Registry {
        Registry {
            max,
            slots: Mutex::new(HashMap::new()),
            opened: Condvar::new(),
            rejected: AtomicU64::new(0),
        }
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, HashMap<String, Slot>> {
        match self.slots.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Takes a session slot, or says how many are in use when all are.
    pub fn admit(
        &self,
        cookie: &str,
        peer: IpAddr,
        session_key: Option<Key>,
    ) -> Result<Receiver<DataConn>, (u32, u32)> {
        let mut slots = self.slots();
        let active = slots.len() as u32;
        if active >= self.max {
            return Err((active, self.max));
        }
        let (tx, rx) = mpsc::channel();
        slots.insert(
            cookie.to_string(),
            Slot {
                peer,
                session_key,
                data: tx,
                window: None,
                seen: HashSet::new(),
                seen_order: VecDeque::new(),
            },
        );
        Ok(rx)
    }

    pub fn release(&self, cookie: &str) {
        self.slots().remove(cookie);
        self.opened.notify_all();
    }

    pub fn active(&self) -> u32 {
        self.slots().len() as u32
    }

    pub fn max(&self) -> u32 {
        self.max
    }

    /// Data connections refused so far (replays, unknown cookies, bad tags, extras).
    pub fn rejected(&self) -> u64 {
        self.rejected.load(Ordering::Relaxed)
    }

    /// The session's test now waits for `n` data connections (indexes 0..n).
    pub fn open_window(&self, cookie: &str, n: u32) {
        if let Some(slot) = self.slots().get_mut(cookie) {
            slot.window = Some(Window {
                filled: vec![false; n as usize],
            });
        }
        self.opened.notify_all();
    }

    /// The test has its data connections (or gave up): later ones are refused.
    pub fn close_window(&self, cookie: &str) {
        if let Some(slot) = self.slots().get_mut(cookie) {
            slot.window = None;
        }
    }

    /// Hands a data connection to its session after checking cookie, source address,
    /// tag, nonce and the session's waiting test; waits until `deadline` for the test
    /// to start waiting (the client connects as soon as it reads the test's Ready).
    pub fn deliver(
        &self,
        hello: &DataHello<'_>,
        stream: TcpStream,
        guard: ConnGuard,
        deadline: Instant,
    ) -> Result<(), DataRejection> {
        let r = self.try_deliver(hello, stream, guard, deadline);
        if r.is_err() {
            self.rejected.fetch_add(1, Ordering::Relaxed);
        }
        r
    }

    fn try_deliver(
        &self,
        h: &DataHello<'_>,
        stream: TcpStream,
        guard: ConnGuard,
        deadline: Instant,
    ) -> Result<(), DataRejection> {
        let mut slots = self.slots();
        {
            let slot = slots.get(h.cookie).ok_or(DataRejection::UnknownCookie)?;
            if slot.peer != h.peer {
                return Err(DataRejection::WrongPeer);
            }
            if let Some(key) = &slot.session_key {
                let tag = h.tag.and_then(|t| hex::decode(t).ok()).unwrap_or_default();
                if !mtuperf_proto::auth::verify_data_tag(
                    key,
                    h.cookie.as_bytes(),
                    h.index,
                    &h.nonce,
                    &tag,
                ) {
                    return Err(DataRejection::BadTag);
                }
            }
        }
        loop {
            let slot = slots
                .get_mut(h.cookie)
                .ok_or(DataRejection::UnknownCookie)?;
            if slot.seen.contains(&h.nonce) {
                return Err(DataRejection::Replayed);
            }
            if let Some(w) = &mut slot.window {
                let unwanted = DataRejection::Unwanted { index: h.index };
                let filled = w.filled.get_mut(h.index as usize).ok_or(unwanted)?;
                if *filled {
                    return Err(DataRejection::Unwanted { index: h.index });
                }
                *filled = true;
                slot.remember(h.nonce);
                return slot
                    .data
                    .send((h.index, stream, guard))
                    .map_err(|_| DataRejection::UnknownCookie);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(DataRejection::NoTestWaiting);
            }
            slots = match self.opened.wait_timeout(slots, left) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
    }

    pub fn close_all(&self) {
        self.slots().clear();
        self.opened.notify_all();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::{DataHello, DataRejection, Registry};
    use crate::agent::conns::Conns;
    use mtuperf_proto::auth::{data_tag, Key};
    use std::net::{IpAddr, TcpListener, TcpStream};
    use std::time::{Duration, Instant};

    fn pair() -> TcpStream {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        TcpStream::connect(l.local_addr().unwrap()).unwrap()
    }

    #[test]
    fn a_data_hello_is_taken_once_only_for_the_waiting_test() {
        let conns = Conns::new(100);
        let reg = Registry::new(4);
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        let key = Key([3; 32]);
        let rx = reg.admit("c", ip, Some(key.clone())).unwrap();
        let tag = |i: u32, n: [u8; 16]| hex::encode(data_tag(&key, b"c", i, &n));
        let t0 = tag(0, [1; 16]);
        let h = |i, nonce, tag: &'static str| DataHello {
            cookie: "c",
            index: i,
            nonce,
            tag: Some(tag),
            peer: ip,
        };
        let t0: &'static str = Box::leak(t0.into_boxed_str());
        let soon = || Instant::now() + Duration::from_millis(50);
        // No test waiting: refused after the deadline, nothing queued.
        let r = reg.deliver(&h(0, [1; 16], t0), pair(), conns.enter().unwrap(), soon());
        assert_eq!(r, Err(DataRejection::NoTestWaiting));
        reg.open_window("c", 1);
        reg.deliver(&h(0, [1; 16], t0), pair(), conns.enter().unwrap(), soon())
            .unwrap();
        // The same Hello again (a replay), and an index the test did not ask for.
        let r = reg.deliver(&h(0, [1; 16], t0), pair(), conns.enter().unwrap(), soon());
        assert_eq!(r, Err(DataRejection::Replayed));
        let t1: &'static str = Box::leak(tag(1, [2; 16]).into_boxed_str());
        let r = reg.deliver(&h(1, [2; 16], t1), pair(), conns.enter().unwrap(), soon());
        assert_eq!(r, Err(DataRejection::Unwanted { index: 1 }));
        // A forged tag.
        let r = reg.deliver(&h(0, [9; 16], t0), pair(), conns.enter().unwrap(), soon());
        assert_eq!(r, Err(DataRejection::BadTag));
        assert_eq!(rx.try_iter().count(), 1);
        assert_eq!(reg.rejected(), 4);
        reg.close_window("c");
        // After the test: the replay is still refused at once, the guards released.
        let r = reg.deliver(&h(0, [1; 16], t0), pair(), conns.enter().unwrap(), soon());
        assert_eq!(r, Err(DataRejection::Replayed));
        assert_eq!(conns.live(), 0);
    }
}
