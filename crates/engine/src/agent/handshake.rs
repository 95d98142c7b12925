//! The first frame of every connection: a control session's Hello (→ Welcome →
//! Auth → AuthOk) or a data connection's Hello carrying its session cookie.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;

use mtuperf_proto::auth;
use mtuperf_proto::codec::Codec;
use mtuperf_proto::msg::{AgentMsg, ClientMsg, Hello, Refusal, Role, Welcome, MAGIC};
use mtuperf_proto::PROTOCOL_VERSION;

use super::registry::Registry;
use super::session::SessionCtx;
use super::AgentConfig;
use crate::control::Control;
use crate::{random_bytes, SOFTWARE};

fn read_first(stream: &TcpStream, codec: &mut Codec) -> Result<ClientMsg, String> {
    let mut header = [0u8; 4];
    (&*stream)
        .read_exact(&mut header)
        .map_err(|e| format!("no hello: {e}"))?;
    let len = codec.body_len(header).map_err(|e| e.to_string())?;
    let mut body = vec![0u8; len];
    (&*stream)
        .read_exact(&mut body)
        .map_err(|e| format!("incomplete hello: {e}"))?;
    codec.decode_body(&body).map_err(|e| e.to_string())
}

fn send_refusal(stream: &TcpStream, refusal: Refusal) {
    let frame = Codec::agent().encode(&AgentMsg::Refused(refusal));
    let _ = (&*stream).write_all(&frame);
}

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
    let _ = stream.set_read_timeout(Some(config.handshake_timeout));
    let _ = stream.set_write_timeout(Some(config.handshake_timeout));
    let mut codec = Codec::agent();
    let hello = match read_first(&stream, &mut codec) {
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
        Role::Control => control_handshake(stream, peer, codec, &hello, config, registry),
    }
}

fn control_handshake(
    stream: TcpStream,
    peer: SocketAddr,
    codec: Codec,
    hello: &Hello,
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
    let control = Control::new(stream, codec).ok()?;
    let welcome = |cookie: Option<String>, proof: Option<String>| {
        AgentMsg::Welcome(Box::new(Welcome {
            version: PROTOCOL_VERSION,
            software: SOFTWARE.into(),
            nonce: hex::encode(na),
            agent_proof: proof,
            cookie,
            host: mtuperf_sys::host::identity(SOFTWARE),
            capabilities: vec!["stream".into(), "rr".into(), "path".into(), "doctor".into()],
            limits: config.limits.clone(),
            peer: peer.to_string(),
        }))
    };
    let (data_rx, session_key) = if let Some(key) = &config.key {
        let proof = hex::encode(auth::agent_proof(key, &nc, &na));
        control.send(&welcome(None, Some(proof))).ok()?;
        let answer = control.recv::<ClientMsg>(Some(config.handshake_timeout), "auth");
        let ok = matches!(&answer, Ok(ClientMsg::Auth { proof })
            if hex::decode(proof).is_ok_and(|p| auth::verify_client_proof(key, &nc, &na, &p)));
        if !ok {
            let _ = control.send(&AgentMsg::Refused(Refusal::AuthFailed));
            config.log("warn", Some(peer), "auth", "authentication failed".into());
            return None;
        }
        let session = auth::session_key(key, &nc, &na);
        control.authenticate(session.clone());
        let Ok(rx) = registry.admit(&cookie, peer.ip(), Some(session.clone())) else {
            let _ = control.send(&AgentMsg::Refused(busy()));
            return None;
        };
        control
            .send(&AgentMsg::AuthOk {
                cookie: cookie.clone(),
            })
            .ok()?;
        (rx, Some(session))
    } else {
        let Ok(rx) = registry.admit(&cookie, peer.ip(), None) else {
            let _ = control.send(&AgentMsg::Refused(busy()));
            return None;
        };
        if control.send(&welcome(Some(cookie.clone()), None)).is_err() {
            registry.release(&cookie);
            return None;
        }
        (rx, None)
    };
    let _ = session_key;
    Some(SessionCtx {
        control,
        peer,
        config: config.clone(),
        registry: registry.clone(),
        cookie,
        data_rx,
    })
}
