//! No hijack, no exhaustion (issue 12): a captured data-connection Hello replayed 500
//! times from new ports is closed every time, the agent's descriptors return to their
//! baseline and the real session's next test gets all its data; a keyed agent says
//! only "busy" before authentication; what a peer sends cannot forge log lines and a
//! flood of refusals is rate-limited; handshake timeouts are logged as timeouts; and a
//! client pointed at an SSH, HTTP or iperf3-like server or a silent one is told it is
//! not an mtuperf agent (exit 3). Under RLIMIT_NOFILE 200 the agent caps its
//! connections at 36 and answers the next ones "busy" instead of failing accept().
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::adversarial_support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use adversarial_support::{stderr, LiveAgent, Raw, BIN};
use mtuperf_engine::client::{ConnectOptions, Session};
use mtuperf_engine::stream::{self, StreamObserver, StreamParams};
use mtuperf_proto::msg::{
    AgentMsg, ClientMsg, Direction, Full, Hello, Refusal, Role, StreamLimit, StreamRequest,
};

struct Quiet;
impl StreamObserver for Quiet {}

/// A loopback TCP proxy to `target` that records the first frame each client sends.
struct Recorder {
    addr: SocketAddr,
    first_frames: Arc<Mutex<Vec<Vec<u8>>>>,
}

fn pump(mut from: TcpStream, mut to: TcpStream) {
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = to.shutdown(std::net::Shutdown::Write);
}

impl Recorder {
    fn start(target: SocketAddr) -> Recorder {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let first_frames = Arc::new(Mutex::new(Vec::new()));
        let frames = first_frames.clone();
        thread::spawn(move || {
            for c in l.incoming() {
                let Ok(mut c) = c else { break };
                let frames = frames.clone();
                thread::spawn(move || {
                    let up = TcpStream::connect(target).unwrap();
                    // The first frame: 4-byte length, then the body.
                    let mut header = [0u8; 4];
                    if c.read_exact(&mut header).is_err() {
                        return;
                    }
                    let mut body = vec![0u8; u32::from_be_bytes(header) as usize];
                    if c.read_exact(&mut body).is_err() {
                        return;
                    }
                    let frame = [&header[..], &body].concat();
                    frames.lock().unwrap().push(frame.clone());
                    (&up).write_all(&frame).unwrap();
                    let (c2, up2) = (c.try_clone().unwrap(), up.try_clone().unwrap());
                    thread::spawn(move || pump(up2, c2));
                    pump(c, up);
                });
            }
        });
        Recorder { addr, first_frames }
    }

    fn data_hellos(&self) -> Vec<Vec<u8>> {
        self.first_frames
            .lock()
            .unwrap()
            .iter()
            .filter(|f| String::from_utf8_lossy(f).contains("\"data\""))
            .cloned()
            .collect()
    }
}

fn fd_count(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

fn reverse_test() -> StreamParams {
    StreamParams {
        request: StreamRequest {
            streams: 1,
            direction: Direction::Reverse,
            block: 128 * 1024,
            limit: StreamLimit::Time { ms: 1000 },
            window: None,
            mss: None,
            interval_ms: 0,
            omit_ms: 0,
            rx_coalesce_us: 0,
            rx_poll_us: 0,
            zerocopy: false,
            cpus: None,
        },
        file: None,
    }
}

/// Sends `hello` from a new connection; true when the agent closes it within 2 s
/// without sending a byte of test data.
fn replay_is_closed(agent: SocketAddr, hello: &[u8]) -> bool {
    let mut s = TcpStream::connect(agent).unwrap();
    s.write_all(hello).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut b = [0u8; 1024];
    match s.read(&mut b) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
    }
}

#[test]
fn a_replayed_data_hello_is_closed_and_the_next_test_gets_all_its_data() {
    let agent = LiveAgent::start(&[]);
    let pid = agent.child.id();
    let proxy = Recorder::start(agent.addr);
    let opts = ConnectOptions {
        key: Some(agent.key.clone()),
        ..ConnectOptions::default()
    };
    let session = Session::connect(&proxy.addr.to_string(), &opts).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let first = stream::run(&session, &reverse_test(), &stop, &Quiet).unwrap();
    assert!(first.client.conns[0].bytes > 0);
    let captured = proxy.data_hellos();
    assert_eq!(captured.len(), 1, "one data connection captured");
    let hello = captured[0].clone();
    thread::sleep(Duration::from_millis(300));
    let baseline = fd_count(pid);

    // 500 replays from new source ports, 20 at a time: every one closed.
    let closed: usize = (0..25)
        .map(|_| {
            let hs: Vec<_> = (0..20)
                .map(|_| {
                    let (a, h) = (agent.addr, hello.clone());
                    thread::spawn(move || replay_is_closed(a, &h))
                })
                .collect();
            hs.into_iter()
                .map(|h| usize::from(h.join().unwrap()))
                .sum::<usize>()
        })
        .sum();
    assert_eq!(closed, 500, "replays left open; log: {}", agent.log_text());

    // The agent's descriptors return to their baseline.
    let deadline = Instant::now() + Duration::from_secs(10);
    while fd_count(pid) > baseline && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(50));
    }
    assert!(
        fd_count(pid) <= baseline,
        "agent holds {} descriptors, baseline {baseline}",
        fd_count(pid)
    );

    // The same session's next test, with replays arriving while it waits for its
    // data connection and while it runs: the real connection gets everything the
    // agent sent.
    let (a, h) = (agent.addr, hello.clone());
    let hammer = thread::spawn(move || (0..100).filter(|_| replay_is_closed(a, &h)).count());
    let second = stream::run(&session, &reverse_test(), &stop, &Quiet).unwrap();
    assert_eq!(hammer.join().unwrap(), 100);
    let sent: u64 = second.agent.conns.iter().map(|c| c.bytes).sum();
    let got: u64 = second.client.conns.iter().map(|c| c.bytes).sum();
    assert!(sent > 0);
    assert_eq!(got, sent, "the client received all the agent sent");
    assert_eq!(second.agent.conns.len(), 1);
    session.close();
    let log = agent.log_text();
    assert!(
        log.contains("Replayed"),
        "replays are counted in the log: {log}"
    );
    // 600 refusals, but the log is rate-limited.
    let lines = log.lines().filter(|l| l.contains("data_refused")).count();
    assert!(lines <= 25, "{lines} data_refused lines");
}

#[test]
fn a_keyed_agent_says_only_busy_before_authentication() {
    let agent = LiveAgent::start(&["--max-sessions", "1"]);
    let mut holder = Raw::connect(agent.addr);
    holder.handshake(&agent.key);
    let mut late = Raw::connect(agent.addr);
    late.send(&ClientMsg::Hello(Hello::new([7; 16], Role::Control)));
    match late.recv() {
        Some(AgentMsg::Refused(Refusal::Busy { active, max, full })) => {
            assert_eq!((active, max), (None, None), "counts leaked before auth");
            assert_eq!(full, Full::Sessions);
        }
        other => panic!("expected busy, got {other:?}"),
    }
    let out = agent.stream(Some(&agent.key_file), &["--time", "1s"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("agent busy: all sessions in use"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn peer_text_cannot_forge_log_lines_and_timeouts_are_named() {
    let agent = LiveAgent::start(&[]);
    // A first frame whose JSON names a variant with a newline and an escape sequence:
    // the decoder's error quotes it.
    let forged = "x\nwarn 1.2.3.4:5 session: FORGED\r\x1b[2J";
    let body = serde_json::to_vec(&serde_json::json!({ "type": forged })).unwrap();
    let mut frame = ((body.len() + 1) as u32).to_be_bytes().to_vec();
    frame.push(0);
    frame.extend_from_slice(&body);
    let mut s = TcpStream::connect(agent.addr).unwrap();
    s.write_all(&frame).unwrap();
    let mut b = [0u8; 256];
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = s.read(&mut b);
    // A silent connection: cut at the 5 s handshake timeout.
    let mut silent = Raw::connect(agent.addr);
    assert!(silent.closed_within(Duration::from_secs(8)));
    thread::sleep(Duration::from_millis(200));
    let log = agent.log_text();
    assert!(
        log.contains("FORGED"),
        "the refusal quotes the frame: {log}"
    );
    assert!(
        !log.lines().any(|l| l.starts_with("warn 1.2.3.4"))
            && !log.contains('\x1b')
            && !log.contains('\r'),
        "a peer forged a log line: {log:?}"
    );
    assert!(log.contains("x\\nwarn 1.2.3.4"), "{log}");
    assert!(log.contains("handshake timed out after 5.0 s"), "{log}");
    assert!(!log.contains("os error 11"), "{log}");
}

type Behaviour = fn(TcpStream);

/// A fake server on loopback that answers each connection with `behaviour`.
fn fake_server(behaviour: Behaviour) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    thread::spawn(move || {
        for c in l.incoming().flatten() {
            thread::spawn(move || behaviour(c));
        }
    });
    addr
}

fn ssh(mut c: TcpStream) {
    let _ = c.write_all(b"SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13.5\r\n");
    thread::sleep(Duration::from_secs(15));
}

fn http(mut c: TcpStream) {
    let mut b = [0u8; 1024];
    let _ = c.read(&mut b);
    let _ =
        c.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
}

/// iperf3's server reads a 37-byte cookie, then sends one state byte and waits.
fn iperf3(mut c: TcpStream) {
    let mut b = [0u8; 37];
    let _ = c.read_exact(&mut b);
    let _ = c.write_all(&[9]);
    thread::sleep(Duration::from_secs(15));
}

fn silent(c: TcpStream) {
    thread::sleep(Duration::from_secs(15));
    drop(c);
}

/// Reads the client's first frame, then answers it with an agent `error` frame whose
/// message carries a forged line and a terminal escape.
fn forging_agent(mut c: TcpStream) {
    let mut len = [0u8; 4];
    if c.read_exact(&mut len).is_err() {
        return;
    }
    let mut frame = vec![0u8; u32::from_be_bytes(len) as usize];
    let _ = c.read_exact(&mut frame);
    let msg = AgentMsg::Error {
        message: "boom\nmtuperf: error: FORGED\r\x1b[2J".into(),
    };
    let payload = serde_json::to_vec(&msg).unwrap();
    let mut out = ((payload.len() + 1) as u32).to_be_bytes().to_vec();
    out.push(0);
    out.extend_from_slice(&payload);
    let _ = c.write_all(&out);
    thread::sleep(Duration::from_secs(2));
}

#[test]
fn an_error_a_peer_sent_is_printed_on_one_line_with_its_control_characters_escaped() {
    let addr = fake_server(forging_agent);
    let out = Command::new(BIN)
        .env_remove("MTUPERF_KEY_FILE")
        .args(["--no-store", "stream", &addr.to_string(), "--time", "1s"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_ne!(out.status.code(), Some(0), "{err}");
    let errors: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("mtuperf: error:"))
        .collect();
    assert_eq!(errors.len(), 1, "a peer forged an error line: {err:?}");
    assert!(
        errors[0].contains("boom\\nmtuperf: error: FORGED\\r\\x1b[2J"),
        "{err:?}"
    );
    assert!(!err.contains('\x1b') && !err.contains('\r'), "{err:?}");
}

#[test]
fn a_client_pointed_at_something_else_is_told_it_is_not_an_agent() {
    // (server, what the error must quote, seconds it may take)
    let cases: [(Behaviour, &str, u64); 4] = [
        (ssh, "it sent 'SSH-2.0-OpenSSH_9.6p1", 5),
        (http, "it sent 'HTTP/1.1 400 Bad Request\\r\\n", 5),
        (iperf3, "it sent '\\t'", 5),
        (silent, "answered nothing within 10 s", 14),
    ];
    let runs: Vec<_> = cases
        .into_iter()
        .map(|(b, want, secs)| {
            let addr = fake_server(b);
            thread::spawn(move || {
                let t0 = Instant::now();
                let out = Command::new(BIN)
                    .env_remove("MTUPERF_KEY_FILE")
                    .args(["--no-store", "stream", &addr.to_string(), "--time", "1s"])
                    .output()
                    .unwrap();
                (addr, out, t0.elapsed(), want, secs)
            })
        })
        .collect();
    for r in runs {
        let (addr, out, took, want, secs) = r.join().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{err}");
        assert!(
            err.contains(&format!("{addr} is not an mtuperf agent")) && err.contains(want),
            "{err}"
        );
        assert!(took < Duration::from_secs(secs), "took {took:?}: {err}");
        assert!(!err.contains("exceeds the limit"), "{err}");
    }
}

#[test]
fn beyond_the_connection_cap_a_connection_is_refused_by_name_not_by_emfile() {
    // 200 descriptors: the agent allows (200 - 128) / 2 = 36 connections.
    let agent = LiveAgent::start_under(&["prlimit", "--nofile=200:200"], &[]);
    let held: Vec<TcpStream> = (0..36)
        .map(|_| TcpStream::connect(agent.addr).unwrap())
        .collect();
    thread::sleep(Duration::from_millis(300));
    for _ in 0..10 {
        let mut late = Raw::connect(agent.addr);
        match late.recv() {
            Some(AgentMsg::Refused(Refusal::Busy { active, max, full })) => {
                assert_eq!((active, max, full), (None, None, Full::Connections));
            }
            other => panic!("expected busy, got {other:?}; log: {}", agent.log_text()),
        }
    }
    drop(held);
    thread::sleep(Duration::from_millis(300));
    agent.stream_ok();
    let log = agent.log_text();
    assert!(
        log.contains("at most 36 connections at once (RLIMIT_NOFILE 200)"),
        "{log}"
    );
    assert!(
        log.contains("connection cap reached: 36 connections open, at most 36"),
        "{log}"
    );
    assert!(!log.contains("accept failed"), "{log}");
}
