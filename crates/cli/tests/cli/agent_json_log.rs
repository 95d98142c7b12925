//! `serve --log-format json`: a test's figures are fields of their own, and
//! enumerations read as on the wire ("udp", "forward"), not Rust names ("Udp").

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_mtuperf");

struct Kill(std::process::Child);
impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn json_log_lines_carry_structured_fields_and_wire_names() {
    let mut child = Command::new(BIN)
        .args([
            "serve",
            "--bind",
            "127.0.0.1",
            "--port",
            "0",
            "--log-format",
            "json",
        ])
        .env_remove("MTUPERF_KEY_FILE")
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let _guard = Kill(child);
    let (tx, rx) = mpsc::channel::<serde_json::Value>();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let v = serde_json::from_str(&line).expect("every log line is JSON");
            if tx.send(v).is_err() {
                break;
            }
        }
    });
    let first = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    let target = first["msg"]
        .as_str()
        .unwrap()
        .rsplit("listening on ")
        .next()
        .unwrap()
        .to_string();
    let dir = tempfile::tempdir().unwrap();
    for args in [
        vec!["rr", target.as_str(), "--time", "200ms"],
        vec!["stream", target.as_str(), "--time", "200ms"],
    ] {
        let out = Command::new(BIN)
            .arg("--db")
            .arg(dir.path().join("h.db"))
            .args(&args)
            .env_remove("MTUPERF_KEY_FILE")
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
        let Ok(v) = rx.recv_timeout(Duration::from_millis(200)) else {
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
