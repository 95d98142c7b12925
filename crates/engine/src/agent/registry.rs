//! Live sessions: the session count limit and the cookie → session map through which
//! data connections reach the session that asked for them.

use std::collections::HashMap;
use std::net::{IpAddr, TcpStream};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Mutex;

use mtuperf_proto::auth::Key;

struct Slot {
    peer: IpAddr,
    session_key: Option<Key>,
    data: Sender<(u32, TcpStream)>,
}

pub struct Registry {
    max: u32,
    slots: Mutex<HashMap<String, Slot>>,
}

/// Why a data connection was not taken.
#[derive(Debug, PartialEq, Eq)]
pub enum DataRejection {
    UnknownCookie,
    WrongPeer,
    BadTag,
}

impl Registry {
    pub fn new(max: u32) -> Registry {
        Registry {
            max,
            slots: Mutex::new(HashMap::new()),
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
    ) -> Result<Receiver<(u32, TcpStream)>, (u32, u32)> {
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
            },
        );
        Ok(rx)
    }

    pub fn release(&self, cookie: &str) {
        self.slots().remove(cookie);
    }

    pub fn active(&self) -> u32 {
        self.slots().len() as u32
    }

    /// Hands a data connection to its session after checking cookie, source address
    /// and (in authenticated sessions) the tag.
    pub fn deliver(
        &self,
        cookie: &str,
        index: u32,
        tag: Option<&str>,
        peer: IpAddr,
        stream: TcpStream,
    ) -> Result<(), DataRejection> {
        let slots = self.slots();
        let slot = slots.get(cookie).ok_or(DataRejection::UnknownCookie)?;
        if slot.peer != peer {
            return Err(DataRejection::WrongPeer);
        }
        if let Some(key) = &slot.session_key {
            let tag = tag.and_then(|t| hex::decode(t).ok()).unwrap_or_default();
            if !mtuperf_proto::auth::verify_data_tag(key, cookie.as_bytes(), index, &tag) {
                return Err(DataRejection::BadTag);
            }
        }
        slot.data
            .send((index, stream))
            .map_err(|_| DataRejection::UnknownCookie)
    }

    pub fn close_all(&self) {
        self.slots().clear();
    }
}
