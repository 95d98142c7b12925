//! Deadlines in the lab (issue 12): a path that drops every packet, an agent stopped
//! (SIGSTOP) or killed mid-run, and a client told to stop by SIGTERM or Ctrl-C. Each
//! time the client must end on its own within 30 s, print and store what it measured
//! (an interrupted run holding the first seconds), say what stopped it, and exit with
//! the README's code: 5 for a fault, 143 for SIGTERM, 130 for SIGINT. Scenarios run in
//! parallel threads, one lab each, to keep the wall time near the longest one.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod deadline_lab_support;

use std::thread;
use std::time::Duration;

use deadline_lab_support::{
    agent_pid, client_intervals, drop_all, kill, lab, last_run, reason, Client,
};

const WITHIN: Duration = Duration::from_secs(30);

/// Runs `cmd` for 6 s, applies `fault` 2 s in, and checks the interrupted outcome.
fn faulted(cmd: &'static str, what: &'static str, fault: fn(&mtuperf_lab::LabGuard)) {
    let Some(lab) = lab() else { return };
    let client = Client::start(&lab, cmd, &["--time", "6s"]);
    client.at(2.0);
    fault(&lab);
    let (out, took, db, _dir) = client.finish(WITHIN);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let ctx = format!("{cmd} {what} after {took:?}:\n{stdout}\n{stderr}");
    assert_eq!(out.status.code(), Some(5), "{ctx}");
    assert!(
        stderr.contains("run interrupted:") && stderr.contains("agent"),
        "the message names what stopped: {ctx}"
    );
    assert!(
        stdout.contains("INTERRUPTED") || stdout.contains("(interrupted"),
        "the partial result is printed: {ctx}"
    );
    let (interrupted, doc) = last_run(&db);
    assert!(interrupted, "stored as interrupted: {ctx}");
    assert!(!reason(&doc).is_empty(), "the reason is stored: {ctx}");
    let iv = client_intervals(&doc);
    // The first seconds moved data; from a second after the fault to the end, next
    // to nothing did (a stopped agent's kernel still takes what its receive buffer
    // holds, and a write blocked since the fault returns at the cut with what it had
    // copied).
    let moved = |from: f64, to: f64| -> u64 {
        iv.iter()
            .filter(|&&(a, _, _)| a >= from && a < to)
            .map(|&(_, _, n)| n)
            .sum()
    };
    let (early, late) = (moved(0.0, 1.0), moved(3.0, 5.0));
    assert!(early > 0, "the first seconds are kept: {iv:?}\n{ctx}");
    assert!(
        late * 10 < early,
        "next to nothing moved after the fault: {iv:?}\n{ctx}"
    );
    // A stall is shown, not hidden: the run says so.
    assert!(
        reason(&doc).contains("stalled") || reason(&doc).contains("no "),
        "{}",
        reason(&doc)
    );
}

fn stop_agent_15s(lab: &mtuperf_lab::LabGuard) {
    let pid = agent_pid(lab);
    kill(pid, "STOP");
    thread::spawn(move || {
        thread::sleep(Duration::from_secs(15));
        kill(pid, "CONT");
    });
}

fn both(fault: fn(&mtuperf_lab::LabGuard), what: &'static str) {
    let stream = thread::spawn(move || faulted("stream", what, fault));
    let rr = thread::spawn(move || faulted("rr", what, fault));
    let (s, r) = (stream.join(), rr.join());
    if let Err(e) = s {
        std::panic::resume_unwind(e);
    }
    if let Err(e) = r {
        std::panic::resume_unwind(e);
    }
}

#[test]
fn a_path_dropping_everything_ends_stream_and_rr_with_their_first_seconds() {
    both(drop_all, "with every packet dropped");
}

#[test]
fn a_stopped_agent_ends_stream_and_rr_at_their_time() {
    both(stop_agent_15s, "with the agent stopped");
}

#[test]
fn a_killed_agent_leaves_the_client_its_side() {
    let Some(lab) = lab() else { return };
    let client = Client::start(&lab, "stream", &["--time", "6s"]);
    client.at(2.0);
    kill(agent_pid(&lab), "KILL");
    let (out, took, db, _dir) = client.finish(WITHIN);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "after {took:?}: {stderr}");
    assert!(stderr.contains("went away"), "{stderr}");
    let (interrupted, doc) = last_run(&db);
    assert!(interrupted);
    assert!(
        reason(&doc).contains("the agent went away"),
        "{}",
        reason(&doc)
    );
    let iv = client_intervals(&doc);
    assert!(
        iv.iter().any(|&(a, _, moved)| moved > 0 && a < 1.0),
        "{iv:?}"
    );
}

#[test]
fn sigterm_and_sigint_store_the_partial_result() {
    let Some(lab) = lab() else { return };
    for (cmd, sig, code) in [("stream", "TERM", 143), ("rr", "INT", 130)] {
        let client = Client::start(&lab, cmd, &["--time", "6s"]);
        client.at(2.0);
        client.signal(sig);
        let (out, took, db, _dir) = client.finish(WITHIN);
        let text = format!(
            "{cmd} SIG{sig} after {took:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(code), "{text}");
        assert!(
            took < Duration::from_secs(6),
            "stopped before its end: {text}"
        );
        let (interrupted, doc) = last_run(&db);
        assert!(interrupted, "{text}");
        assert!(reason(&doc).contains("signal"), "{}", reason(&doc));
        let iv = client_intervals(&doc);
        assert!(
            iv.iter().any(|&(a, _, moved)| moved > 0 && a < 1.0),
            "{iv:?}"
        );
    }
}
