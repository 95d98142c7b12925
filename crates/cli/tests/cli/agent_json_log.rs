//! `serve --log-format json`: a test's figures are fields of their own, and
//! enumerations read as on the wire ("udp", "forward"), not Rust names ("Udp").

use std::time::{Duration, Instant};

use crate::agent_support::AgentProc;
use crate::inproc::mtuperf_in;

#[test]
fn json_log_lines_carry_structured_fields_and_wire_names() {
    // The agent is a process (its log is its stderr); the clients run in-process.
    let agent = AgentProc::start(&["--log-format", "json"]);
    let json = |line: String| -> serde_json::Value {
        serde_json::from_str(&line).expect("every log line is JSON")
    };
    // The first line, which said where it listens, is JSON too.
    let first = json(agent.log_text().lines().next().unwrap().to_string());
    assert!(
        first["msg"].as_str().unwrap().contains(&agent.target()),
        "{first}"
    );
    let target = agent.target();
    let dir = tempfile::tempdir().unwrap();
    for args in [
        vec!["rr", target.as_str(), "--time", "200ms"],
        vec!["stream", target.as_str(), "--time", "200ms"],
    ] {
        let out = mtuperf_in(&dir.path().join("h.db"))
            .args(&args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    let (mut rr, mut stream) = (None, None);
    while (rr.is_none() || stream.is_none()) && Instant::now() < deadline {
        let Some(v) = agent.next_line(Duration::from_millis(200)).map(json) else {
            continue;
        };
        match v["event"].as_str() {
            Some("rr") => rr = Some(v),
            Some("stream") => stream = Some(v),
            _ => {}
        }
    }
    let rr = rr.expect("an rr log line");
    assert_eq!(rr["proto"], "udp", "{rr}");
    assert!(rr["requests"].as_u64().unwrap() > 0, "{rr}");
    assert_eq!(rr["clients"], 1);
    assert!(!rr["msg"].as_str().unwrap().contains("Udp"), "{rr}");
    let stream = stream.expect("a stream log line");
    assert_eq!(stream["direction"], "forward", "{stream}");
    assert!(stream["bytes_received"].as_u64().unwrap() > 0, "{stream}");
    assert!(
        !stream["msg"].as_str().unwrap().contains("Forward"),
        "{stream}"
    );
}
