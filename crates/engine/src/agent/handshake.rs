//! The first frame of every connection: a control session's Hello (→ Welcome →
//! Auth → AuthOk) or a data connection's Hello carrying its session cookie.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
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
use super::registry::{DataHello, DataRejection, Registry};
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
    let hello = match read_frame(
        &stream,
        &mut codec,
        deadline,
        config.handshake_timeout,
        "hello",
    ) {
        Ok(ClientMsg::Hello(h)) => h,
        Ok(_) => {
            config.counters.handshake_failures.inc();
            send_refusal(&stream, Refusal::NotMtuperf, &config.counters);
            config.log(
                crate::agent::LogLevel::Warn,
                Some(peer),
                "refused",
                "first message was not a hello".into(),
            );
            return None;
        }
        Err(e) => {
            config.counters.handshake_failures.inc();
            config.log(crate::agent::LogLevel::Warn, Some(peer), "refused", e);
            return None;
        }
    };
    if hello.magic != MAGIC {
        config.counters.handshake_failures.inc();
        send_refusal(&stream, Refusal::NotMtuperf, &config.counters);
        return None;
    }
    if hello.version != PROTOCOL_VERSION {
        config.log(
            crate::agent::LogLevel::Warn,
            Some(peer),
            "refused",
            format!(
                "protocol version {} (agent speaks {PROTOCOL_VERSION})",
                hello.version
            ),
        );
        send_refusal(
            &stream,
            Refusal::VersionMismatch {
                agent: PROTOCOL_VERSION,
                client: hello.version,
            },
            &config.counters,
        );
        return None;
    }
    match hello.role.clone() {
        Role::Data { cookie, index, tag } => {
            let mut nonce = [0u8; 16];
            let r = if hex::decode_to_slice(&hello.nonce, &mut nonce).is_ok() {
                let h = DataHello {
                    cookie: &cookie,
                    index,
                    nonce,
                    tag: tag.as_deref(),
                    peer: peer.ip(),
                };
                registry.deliver(&h, stream, guard, deadline)
            } else {
                Err(DataRejection::BadTag)
            };
            if let Err(why) = r {
                config.counters.refused_for("data_rejected");
                config.log(
                    crate::agent::LogLevel::Warn,
                    Some(peer),
                    "data_refused",
                    format!(
                        "data connection {index} refused and closed: {why:?} ({} refused so far)",
                        registry.rejected()
                    ),
                );
            }
            None
        }
        Role::Control => {
            let hs = Handshake {
                peer,
                hello: &hello,
                deadline,
                config,
                registry,
            };
            control_handshake(stream, codec, &hs, guard)
        }
    }
}

struct Handshake<'a> {
    peer: SocketAddr,
    hello: &'a Hello,
    deadline: Instant,
    config: &'a Arc<AgentConfig>,
    registry: &'a Arc<Registry>,
}

fn control_handshake(
    stream: TcpStream,
    mut codec: Codec,
    hs: &Handshake<'_>,
    guard: ConnGuard,
) -> Option<SessionCtx> {
    let (peer, hello, deadline, config, registry) =
        (hs.peer, hs.hello, hs.deadline, hs.config, hs.registry);
    // The counts only to an authenticated client or from an open agent.
    let busy = |authenticated: bool| {
        let tell = authenticated || config.key.is_none();
        Refusal::Busy {
            active: tell.then(|| registry.active()),
            max: tell.then_some(config.limits.max_sessions),
            full: Full::Sessions,
        }
    };
    if registry.active() >= config.limits.max_sessions {
        send_refusal(&stream, busy(false), &config.counters);
        config.log(
            crate::agent::LogLevel::Warn,
            Some(peer),
            "busy",
            "refused: all sessions in use".into(),
        );
        return None;
    }
    let mut nc = [0u8; 16];
    if hex::decode_to_slice(&hello.nonce, &mut nc).is_err() {
        config.counters.handshake_failures.inc();
        send_refusal(&stream, Refusal::NotMtuperf, &config.counters);
        return None;
    }
    let na: auth::Nonce = random_bytes();
    let cookie = hex::encode(random_bytes::<16>());
    let info = || AgentInfo {
        software: SOFTWARE.into(),
        host: mtuperf_sys::host::identity(SOFTWARE),
        capabilities: vec![
            "stream".into(),
            "rr".into(),
            "path".into(),
            "doctor".into(),
            "mesh".into(),
        ],
        limits: config.limits.clone(),
        peer: peer.to_string(),
    };
    let welcome = |proof: Option<String>, cookie: Option<String>, info: Option<AgentInfo>| {
        AgentMsg::Welcome(Box::new(Welcome {
            version: PROTOCOL_VERSION,
            nonce: hex::encode(na),
            agent_proof: proof,
            cookie,
            info,
        }))
    };
    let (data_rx, control) = if let Some(key) = &config.key {
        let proof = hex::encode(auth::agent_proof(key, &nc, &na));
        (&stream)
            .write_all(&codec.encode(&welcome(Some(proof), None, None)))
            .ok()?;
        // The whole handshake, Hello to Auth, must fit in one handshake timeout.
        let answer = read_frame(
            &stream,
            &mut codec,
            deadline,
            config.handshake_timeout,
            "auth",
        );
        let ok = matches!(&answer, Ok(ClientMsg::Auth { proof })
            if hex::decode(proof).is_ok_and(|p| auth::verify_client_proof(key, &nc, &na, &p)));
        if !ok {
            config.counters.handshake_failures.inc();
            config.counters.refused(&Refusal::AuthFailed);
            let _ = (&stream).write_all(&codec.encode(&AgentMsg::Refused(Refusal::AuthFailed)));
            let why = answer.err().unwrap_or_else(|| "wrong proof".into());
            config.log(
                crate::agent::LogLevel::Warn,
                Some(peer),
                "auth",
                format!("authentication failed: {why}"),
            );
            return None;
        }
        let session = auth::session_key(key, &nc, &na);
        codec.authenticate(session.clone());
        let control = Control::new(stream, codec).ok()?;
        let Ok(rx) = registry.admit(&cookie, peer.ip(), Some(session)) else {
            config.counters.refused(&busy(true));
            let _ = control.send(&AgentMsg::Refused(busy(true)));
            return None;
        };
        let ok = AgentMsg::AuthOk {
            cookie: cookie.clone(),
            info: Box::new(info()),
        };
        if control.send(&ok).is_err() {
            registry.release(&cookie);
            return None;
        }
        (rx, control)
    } else {
        let control = Control::new(stream, codec).ok()?;
        let Ok(rx) = registry.admit(&cookie, peer.ip(), None) else {
            config.counters.refused(&busy(true));
            let _ = control.send(&AgentMsg::Refused(busy(true)));
            return None;
        };
        if control
            .send(&welcome(None, Some(cookie.clone()), Some(info())))
            .is_err()
        {
            registry.release(&cookie);
            return None;
        }
        (rx, control)
    };
    Some(SessionCtx {
        control,
        peer,
        config: config.clone(),
        registry: registry.clone(),
        cookie,
        data_rx,
        _conn: guard,
        data_conns: std::sync::Mutex::new(Vec::new()),
        reserved: std::sync::Mutex::new(None),
        allowance: std::sync::Mutex::new(None),
    })
}
