//! A hostile agent's words never reach the terminal raw (issue 28). A relay in front
//! of a real open agent on loopback rewrites what the agent says on the control
//! connection: its hostname, its interface's name and a connection's error text
//! become strings carrying a right-to-left override (U+202E), escape sequences (ESC)
//! and newlines that would forge a line. The real client runs stream, rr and UDP
//! stream through it; its text, its JSON and `show` of the stored run carry the
//! strings escaped, as the protocol's decoder leaves every string a peer sends.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::agent_support;

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Output};
use std::thread;

use agent_support::{AgentProc, BIN};
use serde_json::Value;

const HOST: &str = "h\u{202e}txt.exe\u{1b}]0;owned\u{7}\nwarn FORGED host";
const IFACE: &str = "lo\u{202e}\u{1b}[31m\nFORGED iface";
const ERROR: &str = "reset\u{202e}\u{1b}[2J\r\nmtuperf: FORGED error";

/// How each string reads once escaped.
fn escaped(s: &str) -> String {
    mtuperf_proto::text::escape_control(s).into_owned()
}

/// What the relay does to one of the agent's control messages.
fn rewrite(v: &mut Value) {
    match v {
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                match (k.as_str(), &x) {
                    ("hostname", Value::String(_)) => *x = HOST.into(),
                    ("name", Value::String(n)) if n == "lo" => *x = IFACE.into(),
                    _ => rewrite(x),
                }
            }
            if o.get("type").and_then(Value::as_str) == Some("stream_done") {
                if let Some(c) = o
                    .get_mut("conns")
                    .and_then(Value::as_array_mut)
                    .and_then(|c| c.first_mut())
                {
                    c["error"] = ERROR.into();
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(rewrite),
        _ => {}
    }
}

/// One frame (length prefix included), or None at the end of the connection.
fn read_frame(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut h = [0u8; 4];
    s.read_exact(&mut h).ok()?;
    let mut f = h.to_vec();
    f.resize(4 + u32::from_be_bytes(h) as usize, 0);
    s.read_exact(&mut f[4..]).ok()?;
    Some(f)
}

/// Relays one connection: the client's bytes as they are; the agent's frames on a
/// control connection rewritten (the open agent does not tag them), on a data
/// connection as they are.
fn relay_one(mut client: TcpStream, upstream: SocketAddr) {
    let Ok(mut agent) = TcpStream::connect(upstream) else {
        return;
    };
    let Some(hello) = read_frame(&mut client) else {
        return;
    };
    let control = String::from_utf8_lossy(&hello).contains("\"role\":\"control\"");
    agent.write_all(&hello).unwrap();
    let (mut c2, mut a2) = (client.try_clone().unwrap(), agent.try_clone().unwrap());
    thread::spawn(move || {
        let _ = std::io::copy(&mut c2, &mut a2);
        let _ = a2.shutdown(Shutdown::Write);
    });
    if control {
        while let Some(f) = read_frame(&mut agent) {
            let out = match f.get(4) {
                Some(0) => {
                    let mut v: Value = serde_json::from_slice(&f[5..]).unwrap();
                    rewrite(&mut v);
                    let payload = serde_json::to_vec(&v).unwrap();
                    let mut out = ((payload.len() + 1) as u32).to_be_bytes().to_vec();
                    out.push(0);
                    out.extend_from_slice(&payload);
                    out
                }
                _ => f,
            };
            if client.write_all(&out).is_err() {
                break;
            }
        }
    } else {
        let _ = std::io::copy(&mut agent, &mut client);
    }
    let _ = client.shutdown(Shutdown::Write);
}

/// A relay in front of `upstream`; its address.
fn relay(upstream: SocketAddr) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    thread::spawn(move || {
        for c in l.incoming() {
            let Ok(c) = c else { break };
            thread::spawn(move || relay_one(c, upstream));
        }
    });
    addr
}

fn mtuperf(db: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .env_remove("MTUPERF_KEY_FILE")
        .env_remove("MTUPERF_DB")
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap()
}

/// Nothing raw in `text`, and each hostile string that `wants` names is there
/// escaped.
fn assert_clean(what: &str, text: &str, wants: &[&str]) {
    assert!(
        !text.contains(['\u{202e}', '\u{1b}', '\u{7}']),
        "{what}: a raw override or escape: {text}"
    );
    for line in text.lines() {
        assert!(
            !line.starts_with("FORGED")
                && !line.starts_with("warn FORGED")
                && !line.starts_with("mtuperf: FORGED"),
            "{what}: a forged line: {text}"
        );
    }
    for w in wants {
        assert!(
            text.contains(&escaped(w)),
            "{what}: no {:?} in {text}",
            escaped(w)
        );
    }
}

#[test]
fn a_hostile_agents_hostname_interface_and_errors_reach_the_terminal_escaped() {
    let agent = AgentProc::start(&[]);
    let via = relay(agent.addr).to_string();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");

    // stream: the agent's interface in the header, its connection error in "why:".
    let out = mtuperf(&db, &["stream", &via, "--time", "500ms"]);
    let (text, err) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert_eq!(
        out.status.code(),
        Some(5),
        "interrupted by the error: {err}"
    );
    assert!(text.contains("  why: the agent, connection 0: "), "{text}");
    assert_clean("stream text", &text, &[IFACE, ERROR]);
    assert_clean("stream stderr", &err, &[ERROR]);

    // rr: the agent's interface in the header.
    let out = mtuperf(&db, &["rr", &via, "--time", "500ms"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_clean("rr text", &text, &[IFACE]);

    // UDP stream: the agent's hostname and interface in the header.
    let out = mtuperf(&db, &["stream", &via, "--udp", "--time", "500ms"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_clean("udp text", &text, &[HOST, IFACE]);

    // The same runs read back from the history, as text and as JSON: the escaped
    // strings are what was stored.
    for id in ["1", "2", "3"] {
        let out = mtuperf(&db, &["show", id]);
        assert!(out.status.success(), "{out:?}");
        assert_clean(
            &format!("show {id}"),
            &String::from_utf8_lossy(&out.stdout),
            &[IFACE],
        );
        let out = mtuperf(&db, &["show", id, "--json"]);
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let json = doc.to_string();
        assert!(
            !json.contains(['\u{202e}', '\u{1b}']),
            "show {id} --json: {json}"
        );
        assert!(
            json.contains(&serde_json::to_string(&escaped(IFACE)).unwrap()),
            "show {id} --json: {json}"
        );
    }
    drop(agent);
}
