//! Issue 30: `serve --watch-rr` probes with Cache Fusion's pattern, end to end in a
//! cluster lab (root needed; otherwise the test prints why and passes). n1's kernel
//! cannot reassemble IP fragments (`--fault reasm=n1`); a watching agent on n1 probes
//! n2 over the public network at 1500, where every 8 KiB block returns as 6
//! fragments, and over the private one at 9000, where it is one datagram. Its
//! metrics carry the lost blocks and the reassembly failures of the first, and no
//! lost block on the second.
// Metric values compared here are counts the exposition writes exactly.
#![allow(clippy::float_cmp)]
use crate::lab_support;
use crate::watch_support;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use lab_support::{mtuperf, text, TestLab, BIN};
use watch_support::value;

const PUBLIC: &str = "198.19.100.2";
const PRIVATE: &str = "198.19.1.2";
const METRICS: &str = "127.0.0.1:19465";
const GET: &str = r#"
import sys, urllib.request
try:
    print(urllib.request.urlopen("http://" + sys.argv[1] + "/metrics", timeout=5).read().decode())
except Exception as e:
    print(e, file=sys.stderr)
"#;

/// The watcher, killed on drop (`ip netns exec` replaces itself with it).
struct Watcher(Child);

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_watch_probe_counts_lost_blocks_and_reassembly_failures() {
    require_lab!(false);
    let lab = TestLab::up(&[
        "--scenario",
        "cluster",
        "--nodes",
        "2",
        "--nets",
        "1",
        "--public",
        "--fault",
        "reasm=n1",
    ]);
    let serve = mtuperf(&["lab", "serve", "--name", &lab.name]);
    assert!(serve.status.success(), "lab serve: {}", text(&serve));
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("watcher.log");
    let key = format!("/run/mtuperf/lab/{}/key", lab.name);
    let out = std::fs::File::create(&log).unwrap();
    let _watcher = Watcher(
        Command::new("ip")
            .args(["netns", "exec", &format!("mtlab-{}-n1", lab.name)])
            .args([
                BIN,
                "--key-file",
                &key,
                "--no-store",
                "serve",
                "--bind",
                "127.0.0.1",
                "--port",
                "0",
                "--watch",
                &format!("{PUBLIC},{PRIVATE}"),
                "--watch-parallel",
                "1",
                "--watch-every",
                "10s",
                "--watch-rr",
                "1s",
                "--metrics",
                METRICS,
            ])
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .stdin(Stdio::null())
            .spawn()
            .expect("ip netns exec"),
    );
    let probed = |b: &str| {
        [PUBLIC, PRIVATE]
            .iter()
            .all(|p| value(b, "mtuperf_rr_lost_blocks", &[("peer", p)]).is_some())
    };
    let deadline = Instant::now() + Duration::from_secs(90);
    let body = loop {
        let out = lab.exec("n1", &["python3", "-c", GET, METRICS]);
        let b = String::from_utf8_lossy(&out.stdout).into_owned();
        if probed(&b) || Instant::now() > deadline {
            break b;
        }
        std::thread::sleep(Duration::from_secs(1));
    };
    let logs = || std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        probed(&body),
        "no probe of both peers in 90 s:\n{body}\n{}",
        logs()
    );
    let of = |name: &str, peer: &str| value(&body, name, &[("peer", peer)]);
    // At 1500 the blocks come back as fragments n1 cannot reassemble: every one lost.
    assert_eq!(
        of("mtuperf_rr_answered_blocks", PUBLIC),
        Some(0.0),
        "{body}"
    );
    assert!(
        of("mtuperf_rr_lost_blocks", PUBLIC).is_some_and(|v| v >= 1.0),
        "{body}"
    );
    assert!(
        of("mtuperf_rr_reassembly_failures", PUBLIC).is_some_and(|v| v >= 6.0),
        "one lost block is 6 fragments that fail: {body}"
    );
    assert_eq!(of("mtuperf_rr_latency_p99_seconds", PUBLIC), None, "{body}");
    // At 9000 each block is one datagram: answered, none lost.
    assert!(
        of("mtuperf_rr_answered_blocks", PRIVATE).is_some_and(|v| v > 0.0),
        "{body}"
    );
    assert_eq!(of("mtuperf_rr_lost_blocks", PRIVATE), Some(0.0), "{body}");
}
