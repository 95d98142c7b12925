//! `mtuperf demo --loopback` end to end, in-process (no lab, no root): its results
//! start with the plain answer, as every demo's do (issue 29).

use crate::inproc::run_in;

/// On loopback there is no jumbo-frames answer to give, and the first line says so
/// (and why) before any figure; the stream's figures follow on stdout.
#[test]
fn the_loopback_demo_starts_with_its_plain_answer() {
    let out = run_in(&["--no-store", "demo", "--loopback", "--time", "1s"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    let first = stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(
            "Jumbo frames: not judged here (--loopback): loopback has one MTU, so this shows throughput, CPU and the measurement itself, but not what jumbo frames change"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("\nmtuperf stream: 127.0.0.1:"), "{stdout}");
    assert_eq!(stdout.matches("Jumbo frames:").count(), 1, "{stdout}");
}
