//! The first frame of every connection: a control session's Hello (→ Welcome →
//! Auth → AuthOk) or a data connection's Hello carrying its session cookie.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mtuperf_proto::auth;
use mtuperf_proto::codec::Codec;
use mtuperf_proto::msg::{
    AgentInfo, AgentMsg, ClientMsg, Full, Hello, Refusal, Role, Welcome, MAGIC,
};
use mtuperf_proto::PROTOCOL_VERSION;

use super::config::AgentConfig;
use super::conns::ConnGuard;
use super::counters::AgentCounters;
use super::ctx::SessionCtx;
use super::registry::{DataConn, DataHello, DataRejection, Registry};
use crate::control::Control;
use crate::stamp::{random_bytes, SOFTWARE};

/// Reads exactly `buf.len()` bytes by `deadline`: a per-read timeout alone would let a
/// peer that trickles one byte every few seconds hold its thread forever.
fn read_by(stream: &TcpStream, buf: &mut [u8], deadline: Instant) -> std::io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        stream.set_read_timeout(Some(left))?;
        let Some(rest) = buf.get_mut(done..) else {
            break;
        };
        match (&*stream).read(rest) {
            Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            // A read timeout shows as EAGAIN ("Resource temporarily unavailable").
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                return Err(std::io::ErrorKind::TimedOut.into())
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Says why a handshake read failed: a timeout by name (not "os error 11").
fn read_error(e: &std::io::Error, what: &str, partial: bool, timeout: Duration) -> String {
    let adj = if partial { "incomplete" } else { "no" };
    match e.kind() {
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => format!(
            "{adj} {what}: handshake timed out after {:.1} s",
            timeout.as_secs_f64()
        ),
        std::io::ErrorKind::UnexpectedEof => format!("{adj} {what}: connection closed"),
        _ => format!("{adj} {what}: {e}"),
    }
}

/// Reads one whole frame by `deadline` and decodes it.
fn read_frame(
    stream: &TcpStream,
    codec: &mut Codec,
    deadline: Instant,
    timeout: Duration,
    what: &str,
) -> Result<ClientMsg, String> {
    let mut header = [0u8; 4];
    read_by(stream, &mut header, deadline).map_err(|e| read_error(&e, what, false, timeout))?;
    let len = codec.body_len(header).map_err(|e| e.to_string())?;
    let mut body = vec![0u8; len];
    read_by(stream, &mut body, deadline).map_err(|e| read_error(&e, what, true, timeout))?;
    codec.decode_body(&body).map_err(|e| e.to_string())
}

fn send_refusal(stream: &TcpStream, refusal: Refusal, counters: &AgentCounters) {
    counters.refused(&refusal);
    let frame = Codec::agent().encode(&AgentMsg::Refused(refusal));
    let _ = (&*stream).write_all(&frame);
}

// Takes the stream so that it is closed once the refusal is written.
#[allow(clippy::needless_pass_by_value)]
pub(super) fn refuse_not_allowed(stream: TcpStream, peer: SocketAddr, counters: &AgentCounters) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_write_timeout(Some(std::time::Duration::from_secs(1)));
    send_refusal(
        &stream,
        Refusal::NotAllowed {
            peer: peer.ip().to_string(),
        },
        counters,
    );
}

/// Beyond the connection cap or a handshake share: "busy", saying what is full
/// (nothing more before authentication), written without waiting, and the connection
/// closed. The client's Hello, when it has come, is read first: closing a socket with
/// unread data resets the connection, and the client would not read the refusal.
#[allow(clippy::needless_pass_by_value)]
pub(super) fn refuse_busy_at_once(stream: TcpStream, full: Full, counters: &AgentCounters) {
    let _ = stream.set_nonblocking(true);
    send_refusal(
        &stream,
        Refusal::Busy {
            active: None,
            max: None,
            full,
        },
        counters,
    );
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let mut sink = [0u8; 512];
    let _ = (&stream).read(&mut sink);
}

/// Runs the handshake; returns the session context for a control connection that
/// got through it, None for data connections (handed over) and refused ones.
pub(super) fn greet(
    stream: TcpStream,
    peer: SocketAddr,
    config: &Arc<AgentConfig>,
    registry: &Arc<Registry>,
    guard: ConnGuard,
) -> Option<SessionCtx> {
    let deadline = Instant::now() + config.handshake_timeout;
    let _ = stream.set_write_timeout(Some(config.handshake_timeout));
    let mut codec = Codec::agent();
    let hello = read_hello(&stream, &mut codec, deadline, peer, config)?;
    let hs = Handshake {
        peer,
        hello: &hello,
        deadline,
        config,
        registry,
    };
    match &hello.role {
        Role::Data { cookie, index, tag } => {
            let role = DataRole {
                cookie,
                index: *index,
                tag: tag.as_deref(),
            };
            hand_over(stream, &hs, &role, guard);
            None
        }
        Role::Control => control_handshake(stream, codec, &hs, guard),
    }
}

/// The connection's first frame: a Hello of mtuperf in this protocol version.
/// Anything else is refused (and logged).
fn read_hello(
    stream: &TcpStream,
    codec: &mut Codec,
    deadline: Instant,
    peer: SocketAddr,
    config: &AgentConfig,
) -> Option<Hello> {
    let first = read_frame(stream, codec, deadline, config.handshake_timeout, "hello");
    let hello = match first {
        Ok(ClientMsg::Hello(h)) if h.magic == MAGIC => h,
        Ok(m) => {
            config.counters.handshake_failures.inc();
            send_refusal(stream, Refusal::NotMtuperf, &config.counters);
            if !matches!(m, ClientMsg::Hello(_)) {
                let why: String = "first message was not a hello".into();
                config.log(crate::agent::LogLevel::Warn, Some(peer), "refused", why);
            }
            return None;
        }
        Err(e) => {
            config.counters.handshake_failures.inc();
            config.log(crate::agent::LogLevel::Warn, Some(peer), "refused", e);
            return None;
        }
    };
    if hello.version != PROTOCOL_VERSION {
        let v = hello.version;
        let why = format!("protocol version {v} (agent speaks {PROTOCOL_VERSION})");
        config.log(crate::agent::LogLevel::Warn, Some(peer), "refused", why);
        let refusal = Refusal::VersionMismatch {
            agent: PROTOCOL_VERSION,
            client: v,
        };
        send_refusal(stream, refusal, &config.counters);
        return None;
    }
    Some(hello)
}

/// What a data connection's Hello names: its session, its index, its tag.
struct DataRole<'a> {
    cookie: &'a str,
    index: u32,
    tag: Option<&'a str>,
}

/// Hands a data connection to the session its cookie names (which checks its
/// tag); a refused one is closed, counted and logged.
fn hand_over(stream: TcpStream, hs: &Handshake<'_>, role: &DataRole<'_>, guard: ConnGuard) {
    let mut nonce = [0u8; 16];
    let r = if hex::decode_to_slice(&hs.hello.nonce, &mut nonce).is_ok() {
        let h = DataHello {
            cookie: role.cookie,
            index: role.index,
            nonce,
            tag: role.tag,
            peer: hs.peer.ip(),
        };
        hs.registry.deliver(&h, stream, guard, hs.deadline)
    } else {
        Err(DataRejection::BadTag)
    };
    if let Err(why) = r {
        hs.config.counters.refused_for("data_rejected");
        hs.config.log(
            crate::agent::LogLevel::Warn,
            Some(hs.peer),
            "data_refused",
            format!(
                "data connection {} refused and closed: {why:?} ({} refused so far)",
                role.index,
                hs.registry.rejected()
            ),
        );
    }
}

struct Handshake<'a> {
    peer: SocketAddr,
    hello: &'a Hello,
    deadline: Instant,
    config: &'a Arc<AgentConfig>,
    registry: &'a Arc<Registry>,
}

/// The nonces and the cookie of one control handshake.
struct Nonces {
    /// The client's.
    client: auth::Nonce,
    /// The agent's.
    agent: auth::Nonce,
    cookie: String,
}

fn control_handshake(
    stream: TcpStream,
    codec: Codec,
    hs: &Handshake<'_>,
    guard: ConnGuard,
) -> Option<SessionCtx> {
    let config = hs.config;
    if hs.registry.active() >= config.limits.max_sessions {
        send_refusal(&stream, hs.busy(false), &config.counters);
        let why: String = "refused: all sessions in use".into();
        config.log(crate::agent::LogLevel::Warn, Some(hs.peer), "busy", why);
        return None;
    }
    let mut client = [0u8; 16];
    if hex::decode_to_slice(&hs.hello.nonce, &mut client).is_err() {
        config.counters.handshake_failures.inc();
        send_refusal(&stream, Refusal::NotMtuperf, &config.counters);
        return None;
    }
    let n = Nonces {
        client,
        agent: random_bytes(),
        cookie: hex::encode(random_bytes::<16>()),
    };
    let (data_rx, control) = match &config.key {
        Some(key) => authenticate(stream, codec, hs, &n, key)?,
        None => open(stream, codec, hs, &n)?,
    };
    Some(SessionCtx {
        control,
        peer: hs.peer,
        config: config.clone(),
        registry: hs.registry.clone(),
        cookie: n.cookie,
        data_rx,
        _conn: guard,
        data_conns: std::sync::Mutex::new(Vec::new()),
        reserved: std::sync::Mutex::new(None),
        allowance: std::sync::Mutex::new(None),
    })
}

/// An agent with a key: Welcome with its proof, the client's Auth checked (within
/// the same handshake timeout), the session key, then AuthOk with the cookie.
fn authenticate(
    stream: TcpStream,
    mut codec: Codec,
    hs: &Handshake<'_>,
    n: &Nonces,
    key: &auth::Key,
) -> Option<(Receiver<DataConn>, Control)> {
    let config = hs.config;
    let proof = hex::encode(auth::agent_proof(key, &n.client, &n.agent));
    (&stream)
        .write_all(&codec.encode(&welcome(n, Some(proof), None, None)))
        .ok()?;
    // The whole handshake, Hello to Auth, must fit in one handshake timeout.
    let answer = read_frame(
        &stream,
        &mut codec,
        hs.deadline,
        config.handshake_timeout,
        "auth",
    );
    let ok = matches!(&answer, Ok(ClientMsg::Auth { proof })
        if hex::decode(proof).is_ok_and(|p| auth::verify_client_proof(key, &n.client, &n.agent, &p)));
    if !ok {
        config.counters.handshake_failures.inc();
        config.counters.refused(&Refusal::AuthFailed);
        let _ = (&stream).write_all(&codec.encode(&AgentMsg::Refused(Refusal::AuthFailed)));
        let why = answer.err().unwrap_or_else(|| "wrong proof".into());
        let why = format!("authentication failed: {why}");
        config.log(crate::agent::LogLevel::Warn, Some(hs.peer), "auth", why);
        return None;
    }
    let session = auth::session_key(key, &n.client, &n.agent);
    codec.authenticate(session.clone());
    let control = Control::new(stream, codec).ok()?;
    let ok = AgentMsg::AuthOk {
        cookie: n.cookie.clone(),
        info: Box::new(hs.info()),
    };
    let rx = admit(&control, hs, &n.cookie, Some(session), &ok)?;
    Some((rx, control))
}

/// An open agent (no key): the Welcome carries the cookie and the agent's info.
fn open(
    stream: TcpStream,
    codec: Codec,
    hs: &Handshake<'_>,
    n: &Nonces,
) -> Option<(Receiver<DataConn>, Control)> {
    let control = Control::new(stream, codec).ok()?;
    let w = welcome(n, None, Some(n.cookie.clone()), Some(hs.info()));
    let rx = admit(&control, hs, &n.cookie, None, &w)?;
    Some((rx, control))
}

/// Registers the session (refused as busy when every session is taken) and sends
/// `ready`, the handshake's last message; a failed send releases it.
fn admit(
    control: &Control,
    hs: &Handshake<'_>,
    cookie: &str,
    session: Option<auth::Key>,
    ready: &AgentMsg,
) -> Option<Receiver<DataConn>> {
    let Ok(rx) = hs.registry.admit(cookie, hs.peer.ip(), session) else {
        hs.config.counters.refused(&hs.busy(true));
        let _ = control.send(&AgentMsg::Refused(hs.busy(true)));
        return None;
    };
    if control.send(ready).is_err() {
        hs.registry.release(cookie);
        return None;
    }
    Some(rx)
}

fn welcome(
    n: &Nonces,
    proof: Option<String>,
    cookie: Option<String>,
    info: Option<AgentInfo>,
) -> AgentMsg {
    AgentMsg::Welcome(Box::new(Welcome {
        version: PROTOCOL_VERSION,
        nonce: hex::encode(n.agent),
        agent_proof: proof,
        cookie,
        info,
    }))
}

impl Handshake<'_> {
    /// All sessions taken; the counts only to an authenticated client or from an
    /// open agent.
    fn busy(&self, authenticated: bool) -> Refusal {
        let tell = authenticated || self.config.key.is_none();
        Refusal::Busy {
            active: tell.then(|| self.registry.active()),
            max: tell.then_some(self.config.limits.max_sessions),
            full: Full::Sessions,
        }
    }

    /// What the agent tells a client it admitted.
    fn info(&self) -> AgentInfo {
        AgentInfo {
            software: SOFTWARE.into(),
            host: mtuperf_sys::host::identity(SOFTWARE),
            capabilities: vec![
                "stream".into(),
                "rr".into(),
                "path".into(),
                "doctor".into(),
                "mesh".into(),
            ],
            limits: self.config.limits.clone(),
            peer: self.peer.to_string(),
        }
    }
}
