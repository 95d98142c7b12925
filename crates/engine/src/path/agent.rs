//! The agent's side of `path`: a UDP responder that acknowledges forward probes from
//! the registered client address only, and reverse probes sent on request (to the
//! client's second port when it registered one, so that its two searches run at
//! once: the responder answers forward probes while a reverse one is out).

use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mtuperf_proto::dgram::{Header, Kind, HEADER_LEN};
use mtuperf_proto::msg::path::{MAX_PROBE_SIZE, MAX_REVERSE_PROBES, MAX_WAIT_MS};
use mtuperf_proto::msg::{
    AgentMsg, AgentPathInfo, ClientMsg, PathOpen, PathProbeResult, PathReady, PathReverseProbe,
    PathServed, Refusal,
};
use mtuperf_sys::sockopt::{self, ErrQueueEntry, Origin, PmtuMode};

use super::probe::{dgram, overhead};
use crate::serve::{AgentHandler, ServeCtx};
use crate::stamp::random_bytes;
use crate::EngineError;

/// What the responder thread answered and ignored, read when the session ends.
#[derive(Default)]
struct Tally {
    answered: AtomicU64,
    other_source: AtomicU64,
    bad_token: AtomicU64,
    malformed: AtomicU64,
}

impl Tally {
    fn served(&self) -> PathServed {
        PathServed {
            answered: self.answered.load(Ordering::Relaxed),
            other_source: self.other_source.load(Ordering::Relaxed),
            bad_token: self.bad_token.load(Ordering::Relaxed),
            malformed: self.malformed.load(Ordering::Relaxed),
        }
    }

    fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// The client's two UDP addresses: where forward probes come from (their acks go
/// there), and where reverse probes go (their acks come from there). The same
/// address when the client registered one port.
#[derive(Debug, Clone, Copy)]
struct Client {
    forward: SocketAddr,
    reverse: SocketAddr,
}

impl Client {
    fn is(&self, from: SocketAddr) -> bool {
        from == self.forward || from == self.reverse
    }
}

enum Event {
    Ack(u64),
    Err(ErrQueueEntry),
}

/// The agent's egress interface and address toward `peer`.
pub fn path_info(peer: IpAddr, fallback: IpAddr) -> AgentPathInfo {
    let route = mtuperf_sys::route::route_to(peer).ok();
    let iface = route
        .as_ref()
        .and_then(|r| mtuperf_sys::netdev::iface_info(&r.iface).ok());
    AgentPathInfo {
        iface,
        addr: route.and_then(|r| r.source).unwrap_or(fallback).to_string(),
    }
}

pub fn serve(ctx: &dyn ServeCtx, open: &PathOpen) -> Result<(), EngineError> {
    let local = ctx
        .control()
        .local()
        .ok_or_else(|| EngineError::Protocol("control socket has no local address".into()))?;
    let v6 = local.is_ipv6();
    let client = Client {
        forward: SocketAddr::new(ctx.peer().ip(), open.client_port),
        reverse: SocketAddr::new(
            ctx.peer().ip(),
            open.reverse_port.unwrap_or(open.client_port),
        ),
    };
    let sock = UdpSocket::bind(SocketAddr::new(local.ip(), 0))
        .map_err(|e| EngineError::io("binding the path probe socket", e))?;
    sockopt::set_pmtu_discover(&sock, v6, PmtuMode::Probe)
        .and_then(|()| sockopt::set_recverr(&sock, v6))
        .and_then(|()| sock.set_read_timeout(Some(Duration::from_millis(50))))
        .map_err(|e| EngineError::io("setting path probe socket options", e))?;
    let port = sock
        .local_addr()
        .map_err(|e| EngineError::io("path socket", e))?
        .port();
    let token = u64::from_be_bytes(random_bytes());
    let (tx, rx) = mpsc::channel();
    let stop = Arc::new(AtomicBool::new(false));
    let rsock = sock
        .try_clone()
        .map_err(|e| EngineError::io("cloning the path socket", e))?;
    let rstop = stop.clone();
    let tally = Arc::new(Tally::default());
    let rtally = tally.clone();
    let responder = std::thread::spawn(move || {
        respond(&rsock, client, token, v6, &tx, &rstop, &rtally);
    });
    ctx.log_fields(
        "path",
        format!("path probing for {} on UDP port {port}", client.forward),
        serde_json::json!({ "client": client.forward.to_string(), "udp_port": port }),
    );
    ctx.control().send(&AgentMsg::PathReady(PathReady {
        port,
        token,
        path: path_info(ctx.peer().ip(), local.ip()),
    }))?;
    let outcome = control_loop(ctx, &sock, client, token, &rx, &tally);
    stop.store(true, Ordering::Relaxed);
    let _ = responder.join();
    let t = tally.served();
    let client = client.forward;
    ctx.log_fields(
        "path",
        format!(
            "path session for {client}: answered {} forward probes; ignored {} datagrams from other sources, {} with a wrong token, {} malformed",
            t.answered, t.other_source, t.bad_token, t.malformed
        ),
        serde_json::json!({
            "client": client.to_string(), "answered": t.answered,
            "other_source": t.other_source, "bad_token": t.bad_token, "malformed": t.malformed,
        }),
    );
    outcome
}

fn control_loop(
    ctx: &dyn ServeCtx,
    sock: &UdpSocket,
    client: Client,
    token: u64,
    rx: &Receiver<Event>,
    tally: &Tally,
) -> Result<(), EngineError> {
    let mut count = 0u64;
    loop {
        match ctx
            .control()
            .recv::<ClientMsg>(Some(ctx.idle_timeout()), "path probe request")?
        {
            ClientMsg::PathReverseProbe(req) => {
                count += 1;
                if count > MAX_REVERSE_PROBES {
                    ctx.refuse_limit("path-reverse-probes", count, MAX_REVERSE_PROBES)?;
                    return Ok(());
                }
                if req.size > MAX_PROBE_SIZE {
                    ctx.refuse_limit(
                        "path-probe-size",
                        u64::from(req.size),
                        u64::from(MAX_PROBE_SIZE),
                    )?;
                    continue;
                }
                let r = reverse(sock, client.reverse, token, &req, rx);
                ctx.control().send(&AgentMsg::PathProbeResult(r))?;
            }
            ClientMsg::Stop => return ctx.control().send(&AgentMsg::PathServed(tally.served())),
            ClientMsg::Bye => return ctx.control().send(&AgentMsg::Ack),
            other => {
                return ctx.refuse(Refusal::BadRequest {
                    detail: format!("unexpected message during path probing: {other:?}"),
                })
            }
        }
    }
}

fn reverse(
    sock: &UdpSocket,
    client: SocketAddr,
    token: u64,
    req: &PathReverseProbe,
    rx: &Receiver<Event>,
) -> PathProbeResult {
    while rx.try_recv().is_ok() {}
    let mut out = PathProbeResult {
        seq: req.seq,
        sent: false,
        local_mtu: None,
        icmp_from: None,
        icmp_mtu: None,
        acked: false,
    };
    let v6 = client.is_ipv6();
    let min = overhead(v6) + HEADER_LEN as u32;
    let buf = dgram(
        Kind::PathProbe,
        token,
        req.seq,
        req.size.max(min) - overhead(v6),
    );
    match sock.send_to(&buf, client) {
        Ok(_) => out.sent = true,
        Err(e) if e.raw_os_error() == Some(libc::EMSGSIZE) => {
            out.local_mtu = sockopt::recv_err(sock, v6).ok().flatten().map(|e| e.info);
            return out;
        }
        Err(_) => return out,
    }
    let deadline =
        Instant::now() + Duration::from_millis(u64::from(req.wait_ms.clamp(10, MAX_WAIT_MS)));
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(Event::Ack(seq)) if seq == req.seq => {
                out.acked = true;
                break;
            }
            Ok(Event::Err(e)) if e.errno == libc::EMSGSIZE => {
                if e.origin == Origin::Local {
                    out.local_mtu = Some(e.info);
                } else {
                    out.icmp_from = e.offender.map(|a| a.to_string());
                    out.icmp_mtu = Some(e.info);
                }
                break;
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    out
}

/// Acknowledges forward probes (a 40-byte header, never larger than the probe) and
/// passes the client's acks of reverse probes and error-queue entries to `tx`.
fn respond(
    sock: &UdpSocket,
    client: Client,
    token: u64,
    v6: bool,
    tx: &Sender<Event>,
    stop: &AtomicBool,
    tally: &Tally,
) {
    let mut buf = vec![0u8; 65_536];
    while !stop.load(Ordering::Relaxed) {
        match sock.recv_from(&mut buf) {
            Ok((n, from)) => {
                if !client.is(from) {
                    Tally::bump(&tally.other_source);
                    continue;
                }
                let Ok(h) = Header::read(buf.get(..n).unwrap_or_default()) else {
                    Tally::bump(&tally.malformed);
                    continue;
                };
                if h.token != token {
                    Tally::bump(&tally.bad_token);
                    continue;
                }
                match h.kind {
                    Kind::PathProbe => {
                        let ack = dgram(Kind::PathAck, token, h.seq, 0);
                        if ack.len() <= n && sock.send_to(&ack, from).is_ok() {
                            Tally::bump(&tally.answered);
                        }
                    }
                    Kind::PathAck => {
                        let _ = tx.send(Event::Ack(h.seq));
                    }
                    _ => {}
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => {
                while let Ok(Some(e)) = sockopt::recv_err(sock, v6) {
                    let _ = tx.send(Event::Err(e));
                }
            }
        }
    }
}

/// The agent's path handler: a path session opened by `PathOpen`.
pub struct PathHandler;

impl AgentHandler for PathHandler {
    type Request = PathOpen;
    fn request(msg: &ClientMsg) -> Option<&PathOpen> {
        match msg {
            ClientMsg::PathOpen(req) => Some(req),
            _ => None,
        }
    }

    fn serve(&self, ctx: &dyn ServeCtx, req: &PathOpen) -> Result<(), EngineError> {
        serve(ctx, req)
    }
}
