//! Deadlines in the lab (issue 12): a path that drops every packet, an agent stopped
//! (SIGSTOP) or killed mid-run, and a client told to stop by SIGTERM or Ctrl-C. Each
//! time the client must end on its own within 30 s, print and store what it measured
//! (an interrupted run holding the first seconds), say what stopped it, and exit with
//! the README's code: 5 for a fault, 143 for SIGTERM, 130 for SIGINT. Scenarios run in
//! parallel threads, one lab each, to keep the wall time near the longest one.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::deadline_lab_support;

use std::thread;
use std::time::Duration;

use deadline_lab_support::{
    agent_pid, assert_schema, client_intervals, drop_all, kill, lab, lab_at, last_run, reason,
    Client, LoopbackAgent, LIVE,
};

const WITHIN: Duration = Duration::from_secs(30);

/// Runs `cmd` for 6 s, applies `fault` 2 s in, and checks the interrupted outcome.
fn faulted(cmd: &'static str, what: &'static str, fault: fn(&mtuperf_lab::LabGuard)) {
    let Some(lab) = lab() else { return };
    let client = Client::start(&lab, cmd, &[&["--time", "6s"][..], &LIVE].concat());
    client.at(2.0);
    fault(&lab);
    let (out, took, db, _dir) = client.finish(WITHIN);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let ctx = format!("{cmd} {what} after {took:?}:\n{stdout}\n{stderr}");
    eprintln!(
        "{cmd} {what}: exit {:?} after {:.1} s; {}",
        out.status.code(),
        took.as_secs_f64(),
        stderr.trim()
    );
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
    assert_schema(&doc);
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

/// With the path dead, the first SIGTERM starts a stop that waits for the agent's
/// report (bounded); a second one exits at once.
fn second_sigterm_exits_at_once() {
    let Some(lab) = lab() else { return };
    let client = Client::start(&lab, "stream", &[&["--time", "20s"][..], &LIVE].concat());
    client.at(2.0);
    drop_all(&lab);
    client.at(3.0);
    client.signal("TERM");
    client.at(4.0);
    client.signal("TERM");
    let (out, took, _db, _dir) = client.finish(WITHIN);
    assert_eq!(
        out.status.code(),
        Some(143),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        took < Duration::from_secs(6),
        "second SIGTERM after 4 s, exit at {took:?}"
    );
}

#[test]
fn a_path_dropping_everything_ends_stream_and_rr_with_their_first_seconds() {
    let twice = thread::spawn(second_sigterm_exits_at_once);
    both(drop_all, "with every packet dropped");
    if let Err(e) = twice.join() {
        std::panic::resume_unwind(e);
    }
}

#[test]
fn a_stopped_agent_ends_stream_and_rr_at_their_time() {
    both(stop_agent_15s, "with the agent stopped");
}

#[test]
fn a_killed_agent_leaves_the_client_its_side() {
    let rr = thread::spawn(|| killed_agent("rr"));
    killed_agent("stream");
    if let Err(e) = rr.join() {
        std::panic::resume_unwind(e);
    }
}

fn killed_agent(cmd: &str) {
    let Some(lab) = lab() else { return };
    let client = Client::start(&lab, cmd, &[&["--time", "6s"][..], &LIVE].concat());
    client.at(2.0);
    kill(agent_pid(&lab), "KILL");
    let (out, took, db, _dir) = client.finish(WITHIN);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{cmd} after {took:?}: {stderr}");
    assert!(stderr.contains("went away"), "{cmd}: {stderr}");
    // The agent's side is unknown, and said so: no made-up zeros.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("agent  unknown (the agent's report never came)"),
        "{cmd}: {stdout}"
    );
    if cmd == "stream" {
        assert!(
            stdout.contains("read by agent: unknown (the agent's report never came)"),
            "{stdout}"
        );
        assert!(!stdout.contains("NOT EQUAL"), "{stdout}");
    } else {
        assert!(
            stdout.contains("agent's counts unknown: its report never came"),
            "{stdout}"
        );
    }
    let (interrupted, doc) = last_run(&db);
    assert!(interrupted, "{cmd}");
    assert_schema(&doc);
    assert!(
        reason(&doc).contains("the agent went away"),
        "{cmd}: {}",
        reason(&doc)
    );
    let iv = client_intervals(&doc);
    assert!(
        iv.iter().any(|&(a, _, moved)| moved > 0 && a < 1.0),
        "{cmd}: {iv:?}"
    );
}

#[test]
fn sigterm_and_sigint_store_the_partial_result() {
    let Some(lab) = lab() else { return };
    for (cmd, sig, code) in [("stream", "TERM", 143), ("rr", "INT", 130)] {
        let client = Client::start(&lab, cmd, &[&["--time", "6s"][..], &LIVE].concat());
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

/// Loopback, no lab: a --bytes transfer longer than the agent's --max-duration ends
/// cleanly at the limit with the partial result (balanced, stored, exit 5 naming
/// the limit), never a protocol error.
#[test]
fn bytes_beyond_the_agents_max_duration_end_cleanly_at_the_limit() {
    let agent = LoopbackAgent::start(&["--max-duration", "2s"]);
    let db = agent.dir.path().join("h.db");
    let started = std::time::Instant::now();
    let out = agent
        .client(&db, "stream", &["--bytes", "100000G", "--json"])
        .wait_with_output()
        .unwrap();
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(took < Duration::from_secs(15), "{took:?}");
    assert!(stderr.contains("maximum duration of 2 s"), "{stderr}");
    assert!(!stderr.contains("protocol error"), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_schema(&doc);
    let r = &doc["runs"][0]["result"];
    assert_eq!(r["interrupted"], true);
    let sent = r["client"]["conns"][0]["bytes"].as_u64().unwrap();
    let read = r["agent"]["conns"][0]["bytes"].as_u64().unwrap();
    assert!(sent > 0 && sent == read, "written {sent}, read {read}");
    let (interrupted, _) = last_run(&db);
    assert!(interrupted);
}

/// Loopback, no lab: a client stopped (SIGSTOP) 2 s into an 8 s test for 15 s does
/// not pass for a normal 17 s run: the stall is one long sample in its intervals and
/// a reason, the run is marked and exits 5, and (stream --reverse) the stopped time
/// is not counted as receive-coalescing waits. Stream and rr in parallel.
#[test]
fn a_stopped_client_shows_a_gap_not_a_normal_run() {
    let agent = std::sync::Arc::new(LoopbackAgent::start(&[]));
    let runs: Vec<_> = [
        (
            "stream",
            &[
                "--time",
                "8s",
                "--reverse",
                "--rx-coalesce",
                "200us",
                "--json",
            ][..],
        ),
        ("rr", &["--time", "8s", "--json"][..]),
    ]
    .into_iter()
    .map(|(cmd, args)| {
        let agent = agent.clone();
        thread::spawn(move || stopped_client(&agent, cmd, args))
    })
    .collect();
    for r in runs {
        if let Err(e) = r.join() {
            std::panic::resume_unwind(e);
        }
    }
}

fn stopped_client(agent: &LoopbackAgent, cmd: &str, args: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let started = std::time::Instant::now();
    let child = agent.client(&db, cmd, args);
    thread::sleep(Duration::from_secs(2));
    kill(child.id(), "STOP");
    thread::sleep(Duration::from_secs(15));
    kill(child.id(), "CONT");
    let out = child.wait_with_output().unwrap();
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{cmd} after {took:?}: {stderr}");
    assert!(took < Duration::from_secs(40), "{took:?}");
    assert!(stderr.contains("stalled"), "{cmd}: {stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_schema(&doc);
    let iv = client_intervals(&doc);
    assert!(
        iv.iter().any(|&(a, b, _)| b - a > 10.0),
        "{cmd}: the stop is one long sample: {iv:?}"
    );
    if cmd == "stream" {
        let r = &doc["runs"][0]["result"];
        assert_eq!(r["interrupted"], true);
        let waited = r["client"]["conns"][0]["wait_ns"].as_u64().unwrap_or(0);
        assert!(
            waited < 5_000_000_000,
            "a stopped process counted as {} s of coalescing waits",
            waited as f64 / 1e9
        );
    }
    let (interrupted, _) = last_run(&db);
    assert!(interrupted, "{cmd}");
}

/// The cuts must not fire on a healthy slow link: at 20 Mbit/s a writer blocked at
/// the end (flow control, nothing copied yet) or a receiver still draining the queue
/// is normal, and the run ends unmarked with its bytes balanced, both ways.
#[test]
fn a_slow_link_is_not_a_stall() {
    let Some(lab) = lab_at(Some(20_000_000)) else {
        return;
    };
    for extra in [&[][..], &["--reverse"][..]] {
        let args = [&["--time", "3s", "--json"][..], extra].concat();
        let client = Client::start(&lab, "stream", &args);
        let (out, took, _db, _dir) = client.finish(WITHIN);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{extra:?} after {took:?}: {stderr}"
        );
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let r = &doc["runs"][0]["result"];
        assert_eq!(r["interrupted"], false, "{}", r["interrupted_by"]);
        let sent: u64 = r["client"]["conns"][0]["bytes"].as_u64().unwrap();
        let read: u64 = r["agent"]["conns"][0]["bytes"].as_u64().unwrap();
        assert!(sent > 0 && sent == read, "{extra:?}: {sent} vs {read}");
    }
}
