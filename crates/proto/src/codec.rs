//! Framing of control messages.
//!
//! A frame is `u32 length (big endian) | u8 flags | [32-byte tag] | JSON payload`.
//! The length covers everything after itself and is checked against a bound before
//! anything is allocated. Once a session is authenticated every frame must carry a
//! tag over (direction, sequence number, payload); an untagged or mistagged frame is
//! rejected. JSON keeps the typed messages readable in captures; the control plane
//! carries a handful of messages per test, so its cost does not matter.

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::auth::{message_tag, verify_message_tag, Key};

/// Bound on frames an agent accepts from a client.
pub const MAX_CLIENT_FRAME: usize = 64 * 1024;
/// Bound on frames a client accepts from an agent (doctor reports are the largest).
pub const MAX_AGENT_FRAME: usize = 4 * 1024 * 1024;

const FLAG_TAGGED: u8 = 1;
const TAG_LEN: usize = 32;

/// Which way a frame travels; part of every message tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    ClientToAgent = 1,
    AgentToClient = 2,
}

#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("frame of {len} bytes exceeds the limit of {max} bytes")]
    TooLarge { len: usize, max: usize },
    #[error("empty frame")]
    Empty,
    #[error("unknown frame flags {0:#x}")]
    Flags(u8),
    #[error("frame is not authenticated but the session requires it")]
    Unauthenticated,
    #[error("frame authentication failed (wrong key, replay or tampering)")]
    BadTag,
    #[error("malformed message: {0}")]
    Malformed(#[from] serde_json::Error),
}

/// One side's framing state: bounds, sequence numbers and the session key once
/// authenticated.
#[derive(Debug)]
pub struct Codec {
    out_way: Way,
    in_way: Way,
    max_in: usize,
    key: Option<Key>,
    send_seq: u64,
    recv_seq: u64,
}

impl Codec {
    /// Framing for the agent's end of a connection.
    pub fn agent() -> Codec {
        Codec {
            out_way: Way::AgentToClient,
            in_way: Way::ClientToAgent,
            max_in: MAX_CLIENT_FRAME,
            key: None,
            send_seq: 0,
            recv_seq: 0,
        }
    }

    /// Framing for the client's end of a connection.
    pub fn client() -> Codec {
        Codec {
            out_way: Way::ClientToAgent,
            in_way: Way::AgentToClient,
            max_in: MAX_AGENT_FRAME,
            key: None,
            send_seq: 0,
            recv_seq: 0,
        }
    }

    /// From now on, every frame in both directions is tagged with `session`.
    pub fn authenticate(&mut self, session: Key) {
        self.key = Some(session);
        self.send_seq = 0;
        self.recv_seq = 0;
    }

    pub fn is_authenticated(&self) -> bool {
        self.key.is_some()
    }

    /// Encodes one message into a complete frame.
    pub fn encode<T: Serialize>(&mut self, msg: &T) -> Vec<u8> {
        // Serialising our own plain data types into JSON cannot fail.
        let payload = serde_json::to_vec(msg).unwrap_or_default();
        let tagged = self.key.is_some();
        let body_len = 1 + if tagged { TAG_LEN } else { 0 } + payload.len();
        let mut out = Vec::with_capacity(4 + body_len);
        out.extend_from_slice(&(body_len as u32).to_be_bytes());
        if let Some(key) = &self.key {
            out.push(FLAG_TAGGED);
            let tag = message_tag(key, self.out_way as u8, self.send_seq, &payload);
            out.extend_from_slice(&tag);
            self.send_seq += 1;
        } else {
            out.push(0);
        }
        out.extend_from_slice(&payload);
        out
    }

    /// Reads the 4-byte length prefix and checks it against the bound.
    pub fn body_len(&self, header: [u8; 4]) -> Result<usize, FrameError> {
        let len = u32::from_be_bytes(header) as usize;
        if len == 0 {
            return Err(FrameError::Empty);
        }
        if len > self.max_in {
            return Err(FrameError::TooLarge {
                len,
                max: self.max_in,
            });
        }
        Ok(len)
    }

    /// Checks the flags and tag of a frame body and decodes its message.
    pub fn decode_body<T: DeserializeOwned>(&mut self, body: &[u8]) -> Result<T, FrameError> {
        let (&flags, rest) = body.split_first().ok_or(FrameError::Empty)?;
        let payload = match (flags, &self.key) {
            (0, None) => rest,
            (0, Some(_)) => return Err(FrameError::Unauthenticated),
            (FLAG_TAGGED, Some(key)) => {
                if rest.len() < TAG_LEN {
                    return Err(FrameError::BadTag);
                }
                let (tag, payload) = rest.split_at(TAG_LEN);
                if !verify_message_tag(key, self.in_way as u8, self.recv_seq, payload, tag) {
                    return Err(FrameError::BadTag);
                }
                self.recv_seq += 1;
                payload
            }
            (FLAG_TAGGED, None) => return Err(FrameError::BadTag),
            (f, _) => return Err(FrameError::Flags(f)),
        };
        // The one boundary where what a peer says enters: every string escaped.
        Ok(crate::text::from_peer_json(payload)?)
    }

    /// Decodes one frame from the front of `buf`: `Ok(None)` when more bytes are
    /// needed, else the message and the number of bytes consumed.
    pub fn decode<T: DeserializeOwned>(
        &mut self,
        buf: &[u8],
    ) -> Result<Option<(T, usize)>, FrameError> {
        let Some(header) = buf.get(..4) else {
            return Ok(None);
        };
        let mut h = [0u8; 4];
        h.copy_from_slice(header);
        let len = self.body_len(h)?;
        let Some(body) = buf.get(4..).and_then(|b| b.get(..len)) else {
            return Ok(None);
        };
        let msg = self.decode_body(body)?;
        Ok(Some((msg, 4 + len)))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::msg::{AgentMsg, ClientMsg, Hello, Role};

    fn hello() -> ClientMsg {
        ClientMsg::Hello(Hello::new([5; 16], Role::Control))
    }

    #[test]
    fn round_trip_plain_and_authenticated() {
        let (mut c, mut a) = (Codec::client(), Codec::agent());
        let f = c.encode(&hello());
        let (m, n): (ClientMsg, usize) = a.decode(&f).unwrap().unwrap();
        assert_eq!(n, f.len());
        assert_eq!(m, hello());

        let k = Key([1; 32]);
        c.authenticate(k.clone());
        a.authenticate(k);
        for _ in 0..3 {
            let f = c.encode(&ClientMsg::Go);
            let (m, _): (ClientMsg, usize) = a.decode(&f).unwrap().unwrap();
            assert_eq!(m, ClientMsg::Go);
        }
    }

    #[test]
    fn partial_frames_wait_for_more() {
        let mut c = Codec::client();
        let f = c.encode(&hello());
        let mut a = Codec::agent();
        for cut in 0..f.len() {
            assert!(a.decode::<ClientMsg>(&f[..cut]).unwrap().is_none());
        }
    }

    #[test]
    fn rejects_oversized_empty_garbage_and_unknown() {
        let mut a = Codec::agent();
        let big = ((MAX_CLIENT_FRAME + 1) as u32).to_be_bytes();
        assert!(matches!(
            a.decode::<ClientMsg>(&big),
            Err(FrameError::TooLarge { .. })
        ));
        assert!(matches!(
            a.decode::<ClientMsg>(&[0, 0, 0, 0]),
            Err(FrameError::Empty)
        ));
        let mut garbage = vec![0, 0, 0, 5, 0];
        garbage.extend_from_slice(b"GET /");
        assert!(matches!(
            a.decode::<ClientMsg>(&garbage),
            Err(FrameError::Malformed(_))
        ));
        let unknown = br#"{"type":"launch_missiles"}"#;
        let mut f = ((unknown.len() + 1) as u32).to_be_bytes().to_vec();
        f.push(0);
        f.extend_from_slice(unknown);
        assert!(matches!(
            a.decode::<ClientMsg>(&f),
            Err(FrameError::Malformed(_))
        ));
        let mut flags = vec![0, 0, 0, 2, 0x80, b'{'];
        assert!(matches!(
            a.decode::<ClientMsg>(&flags),
            Err(FrameError::Flags(0x80))
        ));
        flags.clear();
    }

    #[test]
    fn authenticated_session_rejects_replay_tamper_and_plain() {
        let k = Key([2; 32]);
        let (mut c, mut a) = (Codec::client(), Codec::agent());
        c.authenticate(k.clone());
        a.authenticate(k.clone());
        let f1 = c.encode(&ClientMsg::Go);
        a.decode::<ClientMsg>(&f1).unwrap().unwrap();
        // Replay of the same frame: sequence number no longer matches.
        assert!(matches!(
            a.decode::<ClientMsg>(&f1),
            Err(FrameError::BadTag)
        ));
        // Tampered payload.
        let mut f2 = c.encode(&ClientMsg::Stop);
        let last = f2.len() - 2;
        f2[last] ^= 1;
        assert!(a.decode::<ClientMsg>(&f2).is_err());
        // Untagged frame.
        let mut plain = Codec::client();
        let f3 = plain.encode(&ClientMsg::Go);
        assert!(matches!(
            a.decode::<ClientMsg>(&f3),
            Err(FrameError::Unauthenticated)
        ));
        // A frame reflected back to its sender is refused (direction is tagged).
        let mut c2 = Codec::client();
        c2.authenticate(k);
        let mut a2 = Codec::agent();
        a2.authenticate(Key([2; 32]));
        let from_agent = a2.encode(&AgentMsg::Ack);
        assert!(matches!(
            a2.decode::<ClientMsg>(&from_agent),
            Err(FrameError::BadTag)
        ));
        assert!(c2.decode::<AgentMsg>(&from_agent).unwrap().is_some());
    }

    #[test]
    fn version_mismatch_is_visible_in_hello() {
        let mut h = Hello::new([0; 16], Role::Control);
        h.version = 99;
        let mut c = Codec::client();
        let f = c.encode(&ClientMsg::Hello(h));
        let (m, _): (ClientMsg, usize) = Codec::agent().decode(&f).unwrap().unwrap();
        let ClientMsg::Hello(h) = m else {
            panic!("not a hello")
        };
        assert_ne!(h.version, crate::PROTOCOL_VERSION);
    }

    #[test]
    fn what_an_agent_says_is_escaped_when_decoded() {
        use crate::host::IfaceInfo;
        use crate::msg::stream::{ConnReport, EndReport};
        let hostile = "lo\u{202e}\x1b[2J\nwarn FORGED";
        let seen = "lo\\u{202e}\\x1b[2J\\nwarn FORGED";
        let report = EndReport {
            conns: vec![ConnReport {
                error: Some(hostile.into()),
                ..ConnReport::default()
            }],
            iface: Some(IfaceInfo {
                name: hostile.into(),
                members: vec![(hostile.into(), 9000)],
                ..IfaceInfo::default()
            }),
            ..EndReport::default()
        };
        let f = Codec::agent().encode(&AgentMsg::StreamDone(Box::new(report)));
        let (m, _): (AgentMsg, usize) = Codec::client().decode(&f).unwrap().unwrap();
        let AgentMsg::StreamDone(r) = m else {
            panic!("not a report")
        };
        assert_eq!(r.conns[0].error.as_deref(), Some(seen));
        let iface = r.iface.unwrap();
        assert_eq!(iface.name, seen);
        assert_eq!(iface.members[0].0, seen);
        // And what a client says, on the agent's side.
        let f = Codec::client().encode(&ClientMsg::Hello(Hello {
            software: hostile.into(),
            ..Hello::new([1; 16], Role::Control)
        }));
        let (m, _): (ClientMsg, usize) = Codec::agent().decode(&f).unwrap().unwrap();
        let ClientMsg::Hello(h) = m else {
            panic!("not a hello")
        };
        assert_eq!(h.software, seen);
    }
}
