//! A small fake mesh agent on loopback for the orchestrator's tests: it completes the
//! keyed handshake like a real agent, answers discovery with crafted interfaces and
//! addresses, and answers third-party tests with whatever the test scripts (honest
//! results, contradictory ones, impossible ones, refusals, or nothing at all). It can
//! also freeze, as a SIGSTOPped agent does: connections are still accepted by the
//! kernel, but nothing is answered. It sends no test traffic anywhere.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mtuperf_engine::control::Control;
use mtuperf_engine::EngineError;
use mtuperf_proto::auth::{self, Key};
use mtuperf_proto::codec::Codec;
use mtuperf_proto::host::{HostIdentity, IfaceInfo};
use mtuperf_proto::msg::doctor::{HostFacts, IfaceFacts};
use mtuperf_proto::msg::mesh::{
    DirSummary, Discovery, IfaceAddr, PathSummary, StopKind, ThirdPartyRequest, ThirdPartyResult,
};
use mtuperf_proto::msg::{AgentInfo, AgentMsg, ClientMsg, Limits, Refusal, Welcome};
use mtuperf_proto::PROTOCOL_VERSION;

pub const KEY: Key = Key([7u8; 32]);

/// What the fake answers to a third-party request.
#[allow(clippy::large_enum_variant)] // a test helper, built once per answer
pub enum Reply {
    Result(ThirdPartyResult),
    Refuse(Refusal),
    /// The peer (`req.to`) refused the test: passed on typed (protocol 19).
    PeerRefused(Refusal),
    Error(String),
    /// Nothing, ever (the session stays open until the asker goes).
    Never,
}

pub type Script = Arc<dyn Fn(&ThirdPartyRequest) -> Reply + Send + Sync>;

/// One interface of the fake host: (name, address, prefix, MTU).
pub type Iface = (&'static str, IpAddr, u8, u32);

pub struct FakeAgent {
    pub addr: SocketAddr,
    pub frozen: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
}

impl Drop for FakeAgent {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

pub fn dir(mtu: u32, stop: StopKind) -> DirSummary {
    DirSummary {
        largest_ok: mtu,
        mtu,
        stop,
        icmp_from: (stop == StopKind::Icmp).then(|| "198.18.9.9".into()),
        probes: 20,
        lost: 0,
        rtt_us: None,
        wait_us: None,
    }
}

/// A path result: `forward` from the asked node toward its peer, `reverse` back.
pub fn path(forward: DirSummary, reverse: DirSummary) -> ThirdPartyResult {
    ThirdPartyResult::Path(PathSummary {
        forward,
        reverse,
        local_mtu: 9000,
        peer_mtu: Some(9000),
        same_segment: true,
        first_router: None,
        vanish_after: None,
        elapsed_ms: 100,
    })
}

fn discovery(host: &str, ifaces: &[Iface]) -> Discovery {
    Discovery {
        down: Vec::new(),
        facts: HostFacts {
            hostname: host.into(),
            ifaces: ifaces
                .iter()
                .map(|(name, _, _, mtu)| IfaceFacts {
                    info: IfaceInfo {
                        name: (*name).into(),
                        mtu: *mtu,
                        ..IfaceInfo::default()
                    },
                    up: true,
                    pause: None,
                    counters: None,
                    counters_delta: None,
                    rp_filter: Some(0),
                    steering: None,
                })
                .collect(),
            ..HostFacts::default()
        },
        addrs: ifaces
            .iter()
            .map(|(name, addr, prefix, _)| IfaceAddr {
                iface: (*name).into(),
                addr: *addr,
                prefix: *prefix,
            })
            .collect(),
    }
}

impl FakeAgent {
    /// A fake agent on 127.0.0.1, host `host` with `ifaces`, answering third-party
    /// requests by `script` after `delay` (the test's length), discovery at once.
    pub fn start(host: &str, ifaces: &[Iface], delay: Duration, script: Script) -> FakeAgent {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let frozen = Arc::new(AtomicBool::new(false));
        let disc = Arc::new(discovery(host, ifaces));
        let (s, f) = (stop.clone(), frozen.clone());
        std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((sock, _)) => {
                        let (s, f, d, sc) = (s.clone(), f.clone(), disc.clone(), script.clone());
                        std::thread::spawn(move || serve(sock, &s, &f, &d, delay, &sc));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        FakeAgent { addr, frozen, stop }
    }
}

/// Holds the connection without a word while frozen; false once stopped.
fn thaw(stop: &AtomicBool, frozen: &AtomicBool) -> bool {
    while frozen.load(Ordering::Relaxed) {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    !stop.load(Ordering::Relaxed)
}

fn handshake(control: &Control) -> Option<()> {
    let ClientMsg::Hello(h) = control
        .recv::<ClientMsg>(Some(Duration::from_secs(5)), "hello")
        .ok()?
    else {
        return None;
    };
    let mut nc = [0u8; 16];
    hex::decode_to_slice(&h.nonce, &mut nc).ok()?;
    let na: [u8; 16] = mtuperf_engine::random_bytes();
    control
        .send(&AgentMsg::Welcome(Box::new(Welcome {
            version: PROTOCOL_VERSION,
            nonce: hex::encode(na),
            agent_proof: Some(hex::encode(auth::agent_proof(&KEY, &nc, &na))),
            cookie: None,
            info: None,
        })))
        .ok()?;
    let ClientMsg::Auth { proof } = control
        .recv::<ClientMsg>(Some(Duration::from_secs(5)), "auth")
        .ok()?
    else {
        return None;
    };
    let proof = hex::decode(proof).ok()?;
    if !auth::verify_client_proof(&KEY, &nc, &na, &proof) {
        return None;
    }
    control.authenticate(auth::session_key(&KEY, &nc, &na));
    control
        .send(&AgentMsg::AuthOk {
            cookie: "fake".into(),
            info: Box::new(AgentInfo {
                software: "fake".into(),
                host: HostIdentity::default(),
                capabilities: vec!["mesh".into()],
                limits: Limits::default(),
                peer: String::new(),
            }),
        })
        .ok()
}

fn serve(
    sock: TcpStream,
    stop: &AtomicBool,
    frozen: &AtomicBool,
    disc: &Discovery,
    delay: Duration,
    script: &Script,
) {
    let _ = sock.set_nonblocking(false);
    if !thaw(stop, frozen) {
        return;
    }
    let Ok(control) = Control::new(sock, Codec::agent()) else {
        return;
    };
    if handshake(&control).is_none() {
        return;
    }
    loop {
        let Ok(msg) = control.recv::<ClientMsg>(Some(Duration::from_mins(2)), "request") else {
            return;
        };
        if matches!(msg, ClientMsg::ThirdParty(_)) {
            std::thread::sleep(delay);
        }
        if !thaw(stop, frozen) {
            return;
        }
        let answer = match msg {
            ClientMsg::Discover(_) => AgentMsg::Discovery(Box::new(disc.clone())),
            ClientMsg::Counters(_) => AgentMsg::Counters(Box::default()),
            ClientMsg::ThirdParty(req) => match script(&req) {
                Reply::Result(r) => AgentMsg::ThirdPartyDone(Box::new(r)),
                Reply::Refuse(r) => AgentMsg::Refused(r),
                Reply::PeerRefused(refusal) => AgentMsg::PeerRefused {
                    peer: req.to.to_string(),
                    refusal,
                },
                Reply::Error(message) => AgentMsg::Error { message },
                Reply::Never => loop {
                    match control.recv::<ClientMsg>(Some(Duration::from_millis(200)), "bye") {
                        Err(EngineError::Timeout { .. }) if !stop.load(Ordering::Relaxed) => {}
                        _ => return,
                    }
                },
            },
            _ => return,
        };
        if control.send(&answer).is_err() {
            return;
        }
    }
}
