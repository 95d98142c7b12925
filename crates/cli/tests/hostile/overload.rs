//! The agent under overload and attack, end to end on loopback (issue 28): its
//! handshake slots flooded from several source addresses; concurrent tests larger
//! than its connection cap; and peer-sent format characters on the way to a
//! terminal or a log. Its metrics port under attack: `overload_metrics`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::adversarial_support;

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::process::Command;
use std::thread;
use std::time::Duration;

use crate::agent_support::AgentProc;
use adversarial_support::{stderr, LiveAgent, BIN};
use mtuperf_proto::codec::Codec;
use mtuperf_proto::msg::{AgentMsg, Full, Refusal};

/// Opens `n` silent connections to `to` from `from`; returns those the agent keeps
/// (in handshake) and the refusals it sent to the others.
fn flood(to: SocketAddr, from: IpAddr, n: usize) -> (Vec<TcpStream>, Vec<Option<AgentMsg>>) {
    let socks: Vec<TcpStream> = (0..n)
        .map(|_| {
            let s =
                socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
            s.bind(&SocketAddr::new(from, 0).into()).unwrap();
            s.connect(&to.into()).unwrap();
            s.into()
        })
        .collect();
    thread::sleep(Duration::from_millis(500));
    let (mut held, mut refused) = (Vec::new(), Vec::new());
    for mut s in socks {
        s.set_nonblocking(true).unwrap();
        let mut buf = [0u8; 256];
        match s.read(&mut buf) {
            Err(e) if e.kind() == ErrorKind::WouldBlock => held.push(s),
            Ok(n) => refused.push(
                Codec::agent()
                    .decode::<AgentMsg>(buf.get(..n).unwrap())
                    .ok()
                    .flatten()
                    .map(|(m, _)| m),
            ),
            Err(_) => refused.push(None),
        }
    }
    (held, refused)
}

fn ip(last: u8) -> IpAddr {
    IpAddr::from([127, 0, 0, last])
}

#[test]
fn two_sources_flooding_the_handshake_slots_leave_room_for_a_third_client() {
    let agent = LiveAgent::start(&[]);
    // 1024 slots: one source alone holds half, the second a third.
    let (a, refused) = flood(agent.addr, ip(2), 600);
    assert_eq!(a.len(), 512);
    let busy = Some(AgentMsg::Refused(Refusal::Busy {
        active: None,
        max: None,
        full: Full::Handshakes,
    }));
    assert!(refused.iter().all(|r| *r == busy), "{:?}", refused.first());
    let (b, _) = flood(agent.addr, ip(3), 600);
    assert_eq!(b.len(), 341);
    // A third client gets in and measures.
    let out = agent.stream(
        Some(&agent.key_file),
        &["--bind", "127.0.0.4", "--time", "1s"],
    );
    assert!(
        out.status.success(),
        "{}\nagent log: {}",
        stderr(&out),
        agent.log_text()
    );
    drop((a, b));
}

#[test]
fn a_client_of_an_agent_whose_handshake_slots_are_full_is_told_busy_by_name() {
    let agent = LiveAgent::start(&[]);
    let floods: Vec<_> = [2, 3, 5].map(|i| flood(agent.addr, ip(i), 600).0).into();
    let held: Vec<usize> = floods.iter().map(Vec::len).collect();
    assert_eq!(held, [512, 341, 171], "the shares");
    let out = agent.stream(
        Some(&agent.key_file),
        &["--bind", "127.0.0.6", "--time", "1s"],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("agent busy: too many connections in handshake"),
        "{err}"
    );
    for wrong in ["not an mtuperf agent", "connection closed while waiting"] {
        assert!(!err.contains(wrong), "{err}");
    }
    drop(floods);
}

#[test]
fn a_connection_closed_before_the_welcome_is_told_as_seen_not_as_not_an_agent() {
    // What an agent out of descriptors looks like from the client: the connection is
    // accepted by the kernel, then closed (or reset, with the hello unread) before a
    // byte comes back. It may well be an mtuperf agent, so the client must not say
    // it is not one.
    for (reset, seen) in [(false, "closed"), (true, "reset")] {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let fake = thread::spawn(move || {
            let (s, _) = l.accept().unwrap();
            if reset {
                // Closing with the hello unread makes the kernel answer with a reset.
                thread::sleep(Duration::from_millis(200));
            } else {
                let mut s = s;
                let mut hello = [0u8; 512];
                let _ = s.read(&mut hello);
            }
        });
        let out = Command::new(BIN)
            .env_remove("MTUPERF_KEY_FILE")
            .args(["--no-store", "stream", &addr.to_string(), "--time", "1s"])
            .output()
            .unwrap();
        fake.join().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{err}");
        assert!(
            err.contains(&format!(
                "{addr} {seen} the connection before sending a single byte in answer to the hello"
            )),
            "{err}"
        );
        assert!(err.contains("too short of descriptors"), "{err}");
        assert!(!err.contains("not an mtuperf agent"), "{err}");
    }
}

#[test]
fn concurrent_large_rr_tests_run_what_fits_and_the_rest_is_refused_by_name() {
    // 600 descriptors: a cap of 236 connections, of which tests may hold 166
    // (59 kept for handshakes, 4 for sessions, 7 for /metrics): two tests of 64 TCP
    // clients fit, a third does not.
    let agent = LiveAgent::start_under(&["prlimit", "--nofile=600:600"], &[]);
    if let Err(log) = agent.wait_for("tests may hold", Duration::from_secs(5)) {
        panic!("no connection cap in the log: {log:?}");
    }
    let log = agent.log_text();
    assert!(log.contains("tests may hold 166 of them together"), "{log}");
    let runs: Vec<_> = (0..3)
        .map(|_| {
            let args = [
                "--proto",
                "tcp",
                "--clients",
                "64",
                "--time",
                "3s",
                // Open loop: the connections are what is tested, not the CPU they burn.
                "--rate",
                "2000",
                "--workers",
                "2",
            ];
            let addr = agent.addr.to_string();
            let key = agent.key_file.clone();
            thread::spawn(move || {
                Command::new(BIN)
                    .env_remove("MTUPERF_KEY_FILE")
                    .arg("--no-store")
                    .arg("--key-file")
                    .arg(key)
                    .args(["rr", &addr])
                    .args(args)
                    .output()
                    .unwrap()
            })
        })
        .collect();
    let outs: Vec<_> = runs.into_iter().map(|h| h.join().unwrap()).collect();
    let codes: Vec<_> = outs.iter().map(|o| o.status.code()).collect();
    let all = outs.iter().map(stderr).collect::<Vec<_>>().join("\n---\n");
    assert_eq!(
        codes.iter().filter(|c| **c == Some(0)).count(),
        2,
        "{codes:?}: {all}\nagent log: {}",
        agent.log_text()
    );
    let refused = outs
        .iter()
        .find(|o| o.status.code() == Some(4))
        .expect(&all);
    let err = stderr(refused);
    assert!(
        err.contains(
            "request beyond what the agent can hold now: asked 64 data connections, 38 free"
        ),
        "{err}"
    );
    assert!(
        agent
            .log_text()
            .contains("refused a test of 64 connections: 38 free"),
        "{}",
        agent.log_text()
    );
}

#[test]
fn a_right_to_left_override_from_a_peer_is_escaped_on_the_terminal_and_in_the_log() {
    // A fake agent refusing with a detail that would show "exe.txt" as "txt.exe".
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let fake = thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut hello = [0u8; 512];
        let _ = s.read(&mut hello);
        let refusal = AgentMsg::Refused(Refusal::BadRequest {
            detail: "evil\u{202e}exe.txt\u{2066}\u{200b}".into(),
        });
        s.write_all(&Codec::agent().encode(&refusal)).unwrap();
        thread::sleep(Duration::from_millis(300));
    });
    let out = Command::new(BIN)
        .env_remove("MTUPERF_KEY_FILE")
        .args(["--no-store", "stream", &addr.to_string(), "--time", "1s"])
        .output()
        .unwrap();
    fake.join().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("evil\\u{202e}exe.txt\\u{2066}\\u{200b}"),
        "{err}"
    );
    assert!(!err.contains(['\u{202e}', '\u{2066}', '\u{200b}']), "{err}");

    // A client whose first message names an unknown type with an override in it: the
    // agent's log quotes it escaped, as text and as JSON.
    for format in ["text", "json"] {
        let mut agent = AgentProc::start(&["--log-format", format]);
        let mut s = TcpStream::connect(agent.addr).unwrap();
        let payload = "{\"type\":\"he\u{202e}llo\"}".as_bytes();
        let mut frame = ((payload.len() + 1) as u32).to_be_bytes().to_vec();
        frame.push(0);
        frame.extend_from_slice(payload);
        s.write_all(&frame).unwrap();
        // Text: the escape as is; JSON: its backslash doubled by the encoding.
        let want = if format == "text" {
            "he\\u{202e}llo"
        } else {
            "he\\\\u{202e}llo"
        };
        let _ = agent.wait_for(want, Duration::from_secs(10));
        let _ = agent.child.kill();
        let _ = agent.child.wait();
        let all = agent.log_text();
        assert!(all.contains(want), "{format}: {all}");
        assert!(!all.contains('\u{202e}'), "{format}: {all}");
        if format == "json" {
            for line in all.lines() {
                serde_json::from_str::<serde_json::Value>(line).unwrap();
            }
        }
    }
}
