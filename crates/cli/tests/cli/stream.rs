//! End-to-end tests of `mtuperf serve` + `mtuperf stream` as a user runs them.

use crate::agent_support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::inproc::{json_in, mtuperf_in};
use agent_support::AgentProc;

fn schema() -> jsonschema::Validator {
    let text = include_str!("../../../../schemas/stream.schema.json");
    let v: serde_json::Value = serde_json::from_str(text).unwrap();
    jsonschema::validator_for(&v).unwrap()
}

/// `mtuperf --no-store stream AGENT --time 300ms ARGS...`: its text, the run having
/// succeeded.
fn short_stream_text(agent: &AgentProc, args: &[&str]) -> String {
    let out = mtuperf_in(std::path::Path::new("/nonexistent/never.db"))
        .args(["--no-store", "stream", &agent.target(), "--time", "300ms"])
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{args:?}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

#[test]
fn json_output_is_valid_balanced_and_stored() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let doc = json_in(mtuperf_in(&db).args([
        "stream",
        &agent.target(),
        "--time",
        "1s",
        "--block",
        "8K",
        "--streams",
        "2",
        "--json",
    ]));
    let v = schema();
    let errors: Vec<String> = v
        .iter_errors(&doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "schema errors: {errors:?}");
    let d = &doc["runs"][0]["metrics"]["directions"][0];
    assert_eq!(d["bytes_written"], d["bytes_read"]);
    assert!(d["bytes_read"].as_u64().unwrap() > 0);
    let id = doc["runs"][0]["run_id"].as_i64().expect("stored run id");

    // The history lists the run and `show` prints it again.
    let h = mtuperf_in(&db)
        .args(["history", "--json"])
        .output()
        .unwrap();
    let rows: serde_json::Value = serde_json::from_slice(&h.stdout).unwrap();
    assert_eq!(rows[0]["id"].as_i64(), Some(id));
    assert_eq!(rows[0]["kind"], "stream");
    let s = mtuperf_in(&db)
        .args(["show", &id.to_string()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&s.stdout);
    assert!(text.contains("perl-sockets figures"), "{text}");
    assert!(text.contains("Bytes Received"), "{text}");
    // The agent logged one line for the session's test.
    std::thread::sleep(Duration::from_millis(200));
    assert!(agent
        .drain_log()
        .iter()
        .any(|l| l.contains("stream forward 2 x 8192 B")));
}

#[test]
fn reverse_and_repeat_print_statistics() {
    let agent = AgentProc::start(&[]);
    let out = mtuperf_in(std::path::Path::new("/nonexistent/never.db"))
        .args([
            "--no-store",
            "stream",
            &agent.target(),
            "--time",
            "300ms",
            "--reverse",
            "--repeat",
            "3",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.matches("run ").count() >= 3, "{text}");
    assert!(text.contains("Over 3 runs"), "{text}");
    assert!(text.contains("95% CI"), "{text}");
}

/// Receive coalescing by default below 64 KiB blocks, off from 64 KiB, and what the
/// user asks for wins: the text says which, and the request in the JSON carries it.
#[test]
fn coalescing_follows_the_block_unless_asked() {
    let agent = AgentProc::start(&[]);
    let cases: [(&[&str], Option<&str>, u64); 4] = [
        (
            &["--block", "8K"],
            Some("receive coalescing up to 200 µs"),
            200,
        ),
        (&[], Some("receive coalescing off"), 0),
        (
            &["--rx-coalesce", "150us"],
            Some("receive coalescing up to 150 µs"),
            150,
        ),
        (&["--block", "8K", "--rx-coalesce", "0"], None, 0),
    ];
    let never = std::path::Path::new("/nonexistent/never.db");
    for (args, said, us) in cases {
        let base = ["--no-store", "stream", &agent.target(), "--time", "300ms"];
        let text = short_stream_text(&agent, args);
        let want = said.unwrap_or("receive coalescing off");
        assert!(text.contains(want), "{args:?}: want {want:?} in {text}");
        let doc = json_in(mtuperf_in(never).args(base).args(args).arg("--json"));
        let asked = &doc["runs"][0]["result"]["request"]["rx_coalesce_us"];
        assert_eq!(
            asked.as_u64(),
            Some(us),
            "{args:?}: {}",
            doc["runs"][0]["result"]
        );
    }
}

#[test]
fn bad_values_name_the_flag_and_range() {
    for (args, needle) in [
        (vec!["--block", "8X"], "--block"),
        (vec!["--block", "32M"], "allowed"),
        (vec!["--time", "0s"], "--time"),
        (vec!["--streams", "0"], "--streams"),
        (vec!["--omit", "20s"], "--omit"),
        (vec!["--rx-coalesce", "20ms"], "allowed 0s to 10ms"),
        (vec!["--rx-coalesce", "soon"], "--rx-coalesce"),
    ] {
        let out = mtuperf_in(std::path::Path::new("/tmp/unused.db"))
            .arg("stream")
            .arg("127.0.0.1")
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn unreachable_agent_exits_3() {
    // A port nobody listens on: bind, note it, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = mtuperf_in(std::path::Path::new("/tmp/unused.db"))
        .args([
            "--no-store",
            "stream",
            &format!("127.0.0.1:{port}"),
            "--time",
            "1s",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot connect"));
}

#[test]
fn garbage_client_does_not_stop_a_following_test() {
    let agent = AgentProc::start(&[]);
    let mut g = TcpStream::connect(agent.addr).unwrap();
    let _ = g.write_all(b"GET / HTTP/1.0\r\n\r\n");
    let mut buf = Vec::new();
    g.set_read_timeout(Some(Duration::from_secs(6))).unwrap();
    let _ = g.read_to_end(&mut buf);
    // An oversized length prefix too.
    let mut o = TcpStream::connect(agent.addr).unwrap();
    let _ = o.write_all(&u32::MAX.to_be_bytes());
    let out = mtuperf_in(std::path::Path::new("/tmp/unused.db"))
        .args(["--no-store", "stream", &agent.target(), "--time", "300ms"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn busy_agent_answers_busy_with_exit_4() {
    let agent = AgentProc::start(&["--max-sessions", "1"]);
    let long = crate::agent_support::mtuperf(std::path::Path::new("/tmp/unused.db"))
        .args(["--no-store", "stream", &agent.target(), "--time", "3s"])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let out = mtuperf_in(std::path::Path::new("/tmp/unused.db"))
        .args(["--no-store", "stream", &agent.target(), "--time", "1s"])
        .output()
        .unwrap();
    let mut long = long;
    let _ = long.wait();
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("busy"));
}

#[test]
fn version_mismatch_is_refused_by_name() {
    let agent = AgentProc::start(&[]);
    let mut s = TcpStream::connect(agent.addr).unwrap();
    let hello = br#"{"type":"hello","magic":"mtuperf","version":99,"software":"x","nonce":"00000000000000000000000000000000","role":"control"}"#;
    let mut f = ((hello.len() + 1) as u32).to_be_bytes().to_vec();
    f.push(0);
    f.extend_from_slice(hello);
    s.write_all(&f).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    let body = String::from_utf8_lossy(&buf);
    assert!(body.contains("version_mismatch"), "{body}");
}

#[test]
fn file_content_arrives_whole() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("blob");
    // Not a multiple of the block size, so the last write is short.
    std::fs::write(&f, vec![7u8; 1_000_003]).unwrap();
    let doc = json_in(
        mtuperf_in(&dir.path().join("h.db"))
            .args([
                "stream",
                &agent.target(),
                "--block",
                "8K",
                "--json",
                "--file",
            ])
            .arg(&f),
    );
    let d = &doc["runs"][0]["metrics"]["directions"][0];
    assert_eq!(d["bytes_written"].as_u64(), Some(1_000_003));
    assert_eq!(d["bytes_read"].as_u64(), Some(1_000_003));
    assert_eq!(doc["runs"][0]["result"]["source"].as_str(), f.to_str());
}

#[test]
fn zero_copy_is_asked_by_flag_said_in_text_and_json_and_refused_with_udp() {
    let out = mtuperf_in(std::path::Path::new("/tmp/unused.db"))
        .args(["stream", "127.0.0.1", "--udp", "--zerocopy"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--zerocopy") && err.contains("--udp"), "{err}");

    let agent = AgentProc::start(&[]);
    // The agent's sender, in words.
    let text = short_stream_text(&agent, &["--reverse", "--zerocopy"]);
    assert!(
        text.contains("zero-copy sends asked: 1 of the agent's 1 connections sent with sendfile from a memory file\n"),
        "{text}"
    );
    agent
        .wait_for(
            "stream reverse 1 x 131072 B zero-copy: ",
            Duration::from_secs(10),
        )
        .unwrap_or_else(|seen| panic!("no agent log line for it: {seen:?}"));
    // The client's sender, a file's content with a short last block, in JSON.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("blob");
    let content: Vec<u8> = (0..1_000_003u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&f, &content).unwrap();
    let doc = json_in(
        mtuperf_in(&dir.path().join("h.db"))
            .args(["stream", &agent.target(), "--block", "8K", "--zerocopy"])
            .args(["--json", "--file"])
            .arg(&f),
    );
    let errors: Vec<String> = schema().iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "schema errors: {errors:?}");
    let run = &doc["runs"][0];
    assert_eq!(run["result"]["request"]["zerocopy"], true);
    assert_eq!(run["result"]["client"]["conns"][0]["zerocopy"], true);
    assert_eq!(run["result"]["agent"]["conns"][0]["zerocopy"], false);
    let d = &run["metrics"]["directions"][0];
    assert_eq!(d["sender_zerocopy"], 1);
    assert_eq!(d["bytes_written"].as_u64(), Some(1_000_003));
    assert_eq!(d["bytes_read"].as_u64(), Some(1_000_003));
}

/// --rx-poll: refused with --udp and with --rx-coalesce (naming both) and above
/// 10 ms; asked of the client's receiver (--reverse), said in the text, in the JSON
/// (valid against the schema) and in the agent's log line.
#[test]
fn receive_polling_is_asked_by_flag_said_in_text_json_and_log_and_refused_with_coalescing() {
    for (extra, names) in [
        (&["--udp"][..], &["--rx-poll", "--udp"][..]),
        (
            &["--rx-coalesce", "0"][..],
            &["--rx-poll", "--rx-coalesce"][..],
        ),
    ] {
        let out = mtuperf_in(std::path::Path::new("/tmp/unused.db"))
            .args(["stream", "127.0.0.1", "--rx-poll", "50us"])
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(names.iter().all(|n| err.contains(n)), "{extra:?}: {err}");
    }
    let out = mtuperf_in(std::path::Path::new("/tmp/unused.db"))
        .args(["stream", "127.0.0.1", "--rx-poll", "11ms"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("allowed 0s to 10ms"));

    let agent = AgentProc::start(&[]);
    let never = std::path::Path::new("/nonexistent/never.db");
    let base = ["--no-store", "stream", &agent.target(), "--time", "300ms"];
    let text = short_stream_text(&agent, &["--reverse", "--block", "8K", "--rx-poll", "50us"]);
    assert!(
        text.contains("  receive polling up to 50 µs: the client's reads found the socket empty "),
        "{text}"
    );
    // Polling replaces the 8K default's coalescing.
    assert!(!text.contains("receive coalescing"), "{text}");
    agent
        .wait_for(
            "stream reverse 1 x 8192 B polled: ",
            Duration::from_secs(10),
        )
        .unwrap_or_else(|seen| panic!("no agent log line for it: {seen:?}"));
    let doc = json_in(
        mtuperf_in(never)
            .args(base)
            .args(["--rx-poll", "1ms", "--json"]),
    );
    let errors: Vec<String> = schema().iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "schema errors: {errors:?}");
    let run = &doc["runs"][0];
    assert_eq!(run["result"]["request"]["rx_poll_us"], 1000);
    assert_eq!(run["result"]["request"]["rx_coalesce_us"], 0);
    let empty = run["result"]["agent"]["conns"][0]["empty_reads"].as_u64();
    let d = &run["metrics"]["directions"][0];
    assert_eq!(d["receiver_empty_reads"].as_u64(), empty);
    assert_eq!(run["result"]["client"]["conns"][0]["empty_reads"], 0);
    assert_eq!(d["bytes_written"], d["bytes_read"]);
}

#[test]
fn ctrl_c_prints_and_stores_the_partial_result() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    // A process: Ctrl-C is what this test sends.
    let child = crate::agent_support::mtuperf(&db)
        .args(["stream", &agent.target(), "--time", "20s"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let started = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "stopped promptly"
    );
    assert_eq!(out.status.code(), Some(130));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("INTERRUPTED"), "{text}");
    assert!(
        text.contains(", equal"),
        "bytes still balance after Ctrl-C: {text}"
    );
    let h = mtuperf_in(&db)
        .args(["history", "--json"])
        .output()
        .unwrap();
    let rows: serde_json::Value = serde_json::from_slice(&h.stdout).unwrap();
    assert_eq!(rows[0]["interrupted"], true);
}
