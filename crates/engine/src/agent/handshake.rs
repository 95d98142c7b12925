//! The first frame of every connection: a control session's Hello (→ Welcome →
//! Auth → AuthOk) or a data connection's Hello carrying its session cookie.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Instant;

use mtuperf_proto::auth;
use mtuperf_proto::codec::Codec;
use mtuperf_proto::msg::{AgentInfo, AgentMsg, ClientMsg, Hello, Refusal, Role, Welcome, MAGIC};
use mtuperf_proto::PROTOCOL_VERSION;

use super::registry::Registry;
use super::session::SessionCtx;
use super::AgentConfig;
use crate::control::Control;
use crate::{random_bytes, SOFTWARE};

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
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Reads one whole frame by `deadline` and decodes it.
fn read_frame(
    stream: &TcpStream,
    codec: &mut Codec,
    deadline: Instant,
    what: &str,
) -> Result<ClientMsg, String> {
    let mut header = [0u8; 4];
    read_by(stream, &mut header, deadline).map_err(|e| format!("no {what}: {e}"))?;
    let len = codec.body_len(header).map_err(|e| e.to_string())?;
    let mut body = vec![0u8; len];
    read_by(stream, &mut body, deadline).map_err(|e| format!("incomplete {what}: {e}"))?;
    codec.decode_body(&body).map_err(|e| e.to_string())
}

fn send_refusal(stream: &TcpStream, refusal: Refusal) {
    let frame = Codec::agent().encode(&AgentMsg::Refused(refusal));
    let _ = (&*stream).write_all(&frame);
}

// Takes the stream so that it is closed once the refusal is written.
#[allow(clippy::needless_pass_by_value)]
pub(super) fn refuse_not_allowed(stream: TcpStream, peer: SocketAddr) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_write_timeout(Some(std::time::Duration::from_secs(1)));
    send_refusal(
        &stream,
        Refusal::NotAllowed {
            peer: peer.ip().to_string(),
        },
    );
}

/// Runs the handshake; returns the session context for a control connection that
/// got through it, None for data connections (handed over) and refused ones.
pub(super) fn greet(
    stream: TcpStream,
    peer: SocketAddr,
    config: &Arc<AgentConfig>,
    registry: &Arc<Registry>,
) -> Option<SessionCtx> {
    let deadline = Instant::now() + config.handshake_timeout;
    let _ = stream.set_write_timeout(Some(config.handshake_timeout));
    let mut codec = Codec::agent();
    let hello = match read_frame(&stream, &mut codec, deadline, "hello") {
        Ok(ClientMsg::Hello(h)) => h,
        Ok(_) => {
            send_refusal(&stream, Refusal::NotMtuperf);
            config.log(
                "warn",
                Some(peer),
                "refused",
                "first message was not a hello".into(),
            );
            return None;
        }
        Err(e) => {
            config.log("warn", Some(peer), "refused", e);
            return None;
        }
    };
    if hello.magic != MAGIC {
        send_refusal(&stream, Refusal::NotMtuperf);
        return None;
    }
    if hello.version != PROTOCOL_VERSION {
        config.log(
            "warn",
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
        );
        return None;
    }
    match hello.role.clone() {
        Role::Data { cookie, index, tag } => {
            if let Err(why) = registry.deliver(&cookie, index, tag.as_deref(), peer.ip(), stream) {
                config.log(
                    "warn",
                    Some(peer),
                    "refused",
                    format!("data connection: {why:?}"),
                );
            }
            None
        }
        Role::Control => control_handshake(stream, peer, codec, &hello, deadline, config, registry),
    }
}

fn control_handshake(
    stream: TcpStream,
    peer: SocketAddr,
    mut codec: Codec,
    hello: &Hello,
    deadline: Instant,
    config: &Arc<AgentConfig>,
    registry: &Arc<Registry>,
) -> Option<SessionCtx> {
    let busy = || Refusal::Busy {
        active: registry.active(),
        max: config.limits.max_sessions,
    };
    if registry.active() >= config.limits.max_sessions {
        send_refusal(&stream, busy());
        config.log(
            "warn",
            Some(peer),
            "busy",
            "refused: all sessions in use".into(),
        );
        return None;
    }
    let mut nc = [0u8; 16];
    if hex::decode_to_slice(&hello.nonce, &mut nc).is_err() {
        send_refusal(&stream, Refusal::NotMtuperf);
        return None;
    }
    let na: auth::Nonce = random_bytes();
    let cookie = hex::encode(random_bytes::<16>());
    let info = || AgentInfo {
        software: SOFTWARE.into(),
        host: mtuperf_sys::host::identity(SOFTWARE),
        capabilities: vec!["stream".into(), "rr".into(), "path".into(), "doctor".into()],
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
        let answer = read_frame(&stream, &mut codec, deadline, "auth");
        let ok = matches!(&answer, Ok(ClientMsg::Auth { proof })
            if hex::decode(proof).is_ok_and(|p| auth::verify_client_proof(key, &nc, &na, &p)));
        if !ok {
            let _ = (&stream).write_all(&codec.encode(&AgentMsg::Refused(Refusal::AuthFailed)));
            let why = answer.err().unwrap_or_else(|| "wrong proof".into());
            config.log(
                "warn",
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
            let _ = control.send(&AgentMsg::Refused(busy()));
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
            let _ = control.send(&AgentMsg::Refused(busy()));
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
    })
}
