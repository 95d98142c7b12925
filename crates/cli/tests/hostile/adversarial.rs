//! Adversarial clients against a live agent (the real binary, keyed, on 127.0.0.1):
//! wrong keys, replayed handshakes, garbage, oversized lengths, slow and silent
//! peers, hundreds of idle connections, requests beyond each limit, tampered and
//! reordered frames. After each attack a legitimate test must still complete.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::adversarial_support;

use std::io::Write;
use std::net::TcpStream;
use std::thread;
use std::time::{Duration, Instant};

use adversarial_support::{stderr, LiveAgent, Raw};
use mtuperf_proto::auth::Key;
use mtuperf_proto::codec::Codec;
use mtuperf_proto::msg::{AgentMsg, ClientMsg, Hello, Refusal, Role};

#[test]
fn wrong_key_and_missing_key_are_refused_with_exit_4_and_agent_stays_up() {
    let mut agent = LiveAgent::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.key");
    std::fs::write(&other, Key([0x42; 32]).to_file()).unwrap();
    let out = agent.stream(Some(&other), &["--time", "1s"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(stderr(&out).contains("key"), "{}", stderr(&out));
    let out = agent.stream(None, &["--time", "1s"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    agent.assert_alive();
    agent.stream_ok();
}

#[test]
fn a_keyed_agent_tells_nothing_about_itself_before_authentication() {
    let agent = LiveAgent::start(&[]);
    let mut raw = Raw::connect(agent.addr);
    raw.send(&ClientMsg::Hello(Hello::new([0x22; 16], Role::Control)));
    let Some(AgentMsg::Welcome(w)) = raw.recv() else {
        panic!("no welcome")
    };
    assert!(w.agent_proof.is_some());
    assert!(w.info.is_none(), "host details before auth: {w:?}");
    assert!(w.cookie.is_none());
    // A client that cannot prove the key gets a refusal, still nothing else.
    raw.send(&ClientMsg::Auth {
        proof: "00".repeat(32),
    });
    assert_eq!(raw.recv(), Some(AgentMsg::Refused(Refusal::AuthFailed)));
    // After authentication the details come with AuthOk.
    let mut ok = Raw::connect(agent.addr);
    ok.handshake(&agent.key);
    match ok.last_auth_ok.take() {
        Some(info) => {
            assert!(!info.software.is_empty());
            assert!(info.limits.max_sessions > 0);
            assert!(info.capabilities.iter().any(|c| c == "stream"));
        }
        None => panic!("AuthOk without details"),
    }
}

#[test]
fn replayed_handshake_is_refused() {
    let agent = LiveAgent::start(&[]);
    let mut first = Raw::connect(agent.addr);
    first.handshake(&agent.key);
    let captured: Vec<Vec<u8>> = first.sent.clone();
    assert_eq!(captured.len(), 2, "hello and auth");
    // Same Hello and Auth bytes on a new connection: the agent's fresh nonce makes
    // the captured proof worthless.
    let mut replay = Raw::connect(agent.addr);
    replay.send_raw(&captured[0]);
    assert!(matches!(replay.recv(), Some(AgentMsg::Welcome(_))));
    replay.send_raw(&captured[1]);
    assert_eq!(
        replay.recv(),
        Some(AgentMsg::Refused(Refusal::AuthFailed)),
        "replayed auth must be refused"
    );
    assert!(replay.closed_within(Duration::from_secs(2)));
    agent.stream_ok();
}

#[test]
fn garbage_oversized_truncated_and_silent_connections_do_not_block() {
    let mut agent = LiveAgent::start(&[]);
    let t0 = Instant::now();
    // HTTP request, an oversized length, an empty frame, a frame cut off mid-body,
    // a bare length prefix, and random bytes: each is closed quickly.
    let mut attacks: Vec<Vec<u8>> = vec![
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        vec![0xff, 0xff, 0xff, 0xff, 0],
        vec![0, 0, 0, 0],
        vec![0, 0x01, 0, 1, 0, b'{', b'"'], // 65537 bytes announced: over the bound
        vec![0, 0, 0, 9, 0x80, 1, 2, 3, 4, 5, 6, 7, 8],
    ];
    attacks.push(
        (0..4096u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect(),
    );
    for a in &attacks {
        let mut r = Raw::connect(agent.addr);
        let _ = r.sock.write_all(a);
        assert!(
            r.closed_within(Duration::from_secs(3)),
            "agent kept a connection open after {:?}",
            a.get(..8)
        );
    }
    assert!(t0.elapsed() < Duration::from_secs(10));
    // Stop mid-message and disconnect; connect and send nothing.
    for _ in 0..20 {
        let mut s = TcpStream::connect(agent.addr).unwrap();
        let _ = s.write_all(&[0, 0, 0, 100, 0, b'{']);
    }
    let silent: Vec<TcpStream> = (0..20)
        .map(|_| TcpStream::connect(agent.addr).unwrap())
        .collect();
    agent.stream_ok();
    drop(silent);
    agent.assert_alive();
}

#[test]
fn slow_sender_is_cut_off_at_the_handshake_timeout_while_a_real_test_runs() {
    let agent = LiveAgent::start(&[]);
    let mut slow = Raw::connect(agent.addr);
    let frame = Codec::client().encode(&ClientMsg::Hello(Hello::new([3; 16], Role::Control)));
    let sock = slow.sock.try_clone().unwrap();
    let started = Instant::now();
    let dripper = thread::spawn(move || {
        // One byte per second, as a slowloris would.
        for b in frame {
            if (&sock).write_all(&[b]).is_err() {
                return;
            }
            thread::sleep(Duration::from_secs(1));
        }
    });
    agent.stream_ok();
    assert!(
        slow.closed_within(Duration::from_secs(10)),
        "a 1 byte/s hello was not cut off"
    );
    let held = started.elapsed();
    assert!(
        held >= Duration::from_secs(4) && held < Duration::from_secs(8),
        "cut off after {held:?}, expected about the 5 s handshake timeout"
    );
    let _ = dripper.join();
}

#[test]
fn five_hundred_idle_connections_do_not_block_a_real_test() {
    let agent = LiveAgent::start(&[]);
    let idle: Vec<TcpStream> = (0..500)
        .map(|_| TcpStream::connect(agent.addr).unwrap())
        .collect();
    agent.stream_ok();
    for proto in ["udp", "tcp"] {
        let out = agent.rr(&["--proto", proto, "--time", "1s", "--clients", "2"]);
        assert!(
            out.status.success(),
            "rr {proto} beside 500 idle connections: {}",
            stderr(&out)
        );
    }
    drop(idle);
}

#[test]
fn requests_beyond_each_limit_are_refused_naming_the_limit() {
    let agent = LiveAgent::start(&[
        "--max-sessions",
        "1",
        "--max-duration",
        "2s",
        "--max-streams",
        "2",
    ]);
    let out = agent.stream(Some(&agent.key_file), &["--time", "5s"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(stderr(&out).contains("max-duration"), "{}", stderr(&out));
    let out = agent.stream(Some(&agent.key_file), &["--time", "1s", "--streams", "4"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(stderr(&out).contains("max-streams"), "{}", stderr(&out));
    // Hold the only session open: the next client is told the agent is busy. The
    // refused clients' slot is released by the agent's session thread, which on a
    // loaded host can take a moment after the client has gone.
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut holder = loop {
        let mut raw = Raw::connect(agent.addr);
        if raw.try_handshake(&agent.key).is_some() {
            break raw;
        }
        assert!(Instant::now() < deadline, "the only slot never freed");
        thread::sleep(Duration::from_millis(50));
    };
    let out = agent.stream(Some(&agent.key_file), &["--time", "1s"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(stderr(&out).contains("busy"), "{}", stderr(&out));
    holder.send(&ClientMsg::Bye);
    assert!(holder.closed_within(Duration::from_secs(3)));
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let out = agent.stream(Some(&agent.key_file), &["--time", "1s"]);
        if out.status.success() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "slot not released: {}",
            stderr(&out)
        );
        thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn tampered_and_reordered_session_frames_end_the_session() {
    let agent = LiveAgent::start(&[]);
    // Tampered: flip one payload byte of a tagged frame.
    let mut a = Raw::connect(agent.addr);
    a.handshake(&agent.key);
    let mut f = a.codec.encode(&ClientMsg::Bye);
    let last = f.len() - 2;
    f[last] ^= 0x01;
    a.send_raw(&f);
    assert!(
        a.closed_within(Duration::from_secs(3)),
        "tampered frame accepted"
    );
    // Reordered: the second frame sent first.
    let mut b = Raw::connect(agent.addr);
    b.handshake(&agent.key);
    let _first = b.codec.encode(&ClientMsg::Go);
    let second = b.codec.encode(&ClientMsg::Bye);
    b.send_raw(&second);
    assert!(
        b.closed_within(Duration::from_secs(3)),
        "reordered frame accepted"
    );
    // Untagged frame after authentication.
    let mut c = Raw::connect(agent.addr);
    c.handshake(&agent.key);
    let plain = Codec::client().encode(&ClientMsg::Go);
    c.send_raw(&plain);
    assert!(
        c.closed_within(Duration::from_secs(3)),
        "untagged frame accepted"
    );
    // A well-tagged message that makes no sense now is refused, not obeyed.
    let mut d = Raw::connect(agent.addr);
    d.handshake(&agent.key);
    d.send(&ClientMsg::Go);
    let answer = d.recv();
    assert!(
        matches!(answer, Some(AgentMsg::Refused(_))),
        "go outside a test must be refused: {answer:?}"
    );
    agent.stream_ok();
}

#[test]
fn data_connection_with_forged_cookie_or_tag_is_not_taken() {
    let agent = LiveAgent::start(&[]);
    let mut s = Raw::connect(agent.addr);
    let cookie = s.handshake(&agent.key);
    for (cookie, tag) in [
        (cookie.clone(), Some("00".repeat(32))),
        (cookie.clone(), None),
        ("ab".repeat(16), Some("00".repeat(32))),
    ] {
        let mut d = Raw::connect(agent.addr);
        let hello = ClientMsg::Hello(Hello::new(
            [1; 16],
            Role::Data {
                cookie,
                index: 0,
                tag,
            },
        ));
        d.send(&hello);
        assert!(
            d.closed_within(Duration::from_secs(3)),
            "forged data connection kept"
        );
    }
    agent.stream_ok();
}

#[test]
fn rr_requests_beyond_workers_clients_and_rate_are_refused_naming_the_limit() {
    let agent = LiveAgent::start(&[
        "--max-workers",
        "2",
        "--max-clients",
        "4",
        "--max-rate",
        "10mbit",
    ]);
    for (args, limit) in [
        (
            vec!["--workers", "8", "--clients", "2", "--time", "1s"],
            "max-workers",
        ),
        (vec!["--clients", "16", "--time", "1s"], "max-clients"),
        (
            vec!["--rate", "100000", "--clients", "2", "--time", "1s"],
            "max-rate",
        ),
    ] {
        let out = agent.rr(&args);
        assert_eq!(out.status.code(), Some(4), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(limit), "{args:?}: {}", stderr(&out));
    }
    let out = agent.rr(&["--workers", "2", "--clients", "2", "--time", "1s"]);
    assert!(out.status.success(), "within the limits: {}", stderr(&out));
}

/// More silent connections than the agent's whole handshake cap (1024), all from one
/// "host" (127.0.0.2): that host gets at most half the slots, so a client from
/// another address (127.0.0.1) still gets through at once.
#[test]
fn one_flooding_host_cannot_take_every_handshake_slot() {
    let agent = LiveAgent::start(&[]);
    let mut flood = Vec::new();
    for _ in 0..1100 {
        let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None);
        let Ok(s) = s else {
            eprintln!("skipped: out of file descriptors after {}", flood.len());
            return;
        };
        let local: std::net::SocketAddr = "127.0.0.2:0".parse().unwrap();
        s.bind(&local.into()).unwrap();
        if s.connect(&agent.addr.into()).is_ok() {
            flood.push(s);
        }
    }
    assert!(
        flood.len() > 1024,
        "only {} connections opened",
        flood.len()
    );
    let t0 = Instant::now();
    agent.stream_ok();
    assert!(
        t0.elapsed() < Duration::from_secs(4),
        "legitimate client waited for the flood to time out"
    );
    drop(flood);
}
