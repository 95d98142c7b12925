//! Issue 33, the agent's budget: an idle agent does not wake. Its threads sleep in
//! poll(2) on their sockets and the stop (the accept loop, the metrics listener) or
//! on the stop with the next cycle as timeout (the watch between cycles), where they
//! used to wake several times a second to look at a shutdown flag. Counted as the
//! voluntary context switches of its threads (/proc/PID/task/*/status) over 3 s; a
//! SIGTERM still ends it at once.
use crate::agent_support;
use crate::watch_support;

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use agent_support::AgentProc;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// Each thread's (name, voluntary context switches) by thread id.
fn switches(pid: u32) -> BTreeMap<String, (String, u64)> {
    let mut out = BTreeMap::new();
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for t in dir.flatten() {
        let status = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
        let field = |k: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(k))
                .map(|v| v.trim().to_string())
        };
        if let (Some(name), Some(n)) = (field("Name:"), field("voluntary_ctxt_switches:")) {
            out.insert(
                t.file_name().to_string_lossy().into_owned(),
                (name, n.parse().unwrap_or(0)),
            );
        }
    }
    out
}

/// Wake-ups of the threads alive at both ends of `over`, with each thread's share.
fn wakeups(pid: u32, over: Duration) -> (u64, Vec<String>) {
    let before = switches(pid);
    std::thread::sleep(over);
    let after = switches(pid);
    let mut total = 0;
    let mut each = Vec::new();
    for (tid, (name, n)) in &after {
        if let Some((_, m)) = before.get(tid) {
            total += n.saturating_sub(*m);
            each.push(format!("{tid} {name}: {}", n.saturating_sub(*m)));
        }
    }
    (total, each)
}

/// SIGTERM, then the exit within `within`.
fn terminate(agent: &mut AgentProc, within: Duration) -> (Option<i32>, Duration) {
    let t0 = Instant::now();
    kill(Pid::from_raw(agent.child.id() as i32), Signal::SIGTERM).unwrap();
    loop {
        if let Some(status) = agent.child.try_wait().unwrap() {
            return (status.code(), t0.elapsed());
        }
        assert!(
            t0.elapsed() < within,
            "the agent still runs {within:?} after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits for a log line containing `what`, at most 20 s.
fn wait_log(agent: &AgentProc, what: &str) -> String {
    agent
        .wait_for(what, Duration::from_secs(20))
        .unwrap_or_else(|seen| panic!("no log line with {what:?} in 20 s: {seen:?}"))
}

#[test]
fn an_idle_agent_does_not_wake_and_sigterm_still_stops_it_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let key = watch_support::keygen(dir.path(), "key");
    // A refused peer: the first cycle ends at once, the next is an hour away.
    let closed = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().to_string()
    };
    let plain = AgentProc::start(&["--no-store"]);
    let watching = AgentProc::start(&[
        "--no-store",
        "--key-file",
        key.to_str().unwrap(),
        "--metrics",
        "127.0.0.1:0",
        "--watch",
        &closed,
        "--watch-every",
        "1h",
    ]);
    wait_log(&watching, "check failed");
    // The check's own thread ends just after its result.
    std::thread::sleep(Duration::from_millis(300));
    let over = Duration::from_secs(3);
    let (plain_n, plain_each) = wakeups(plain.child.id(), over);
    let (watch_n, watch_each) = wakeups(watching.child.id(), over);
    eprintln!(
        "idle over {over:?}: plain {plain_n} {plain_each:?}; watching {watch_n} {watch_each:?}"
    );
    // Before: 6 (the accept loop's 500 ms poll) and 15 (with the metrics
    // listener's and the watch thread's looks at the flag).
    assert!(
        plain_n <= 1,
        "plain agent woke {plain_n} times: {plain_each:?}"
    );
    assert!(
        watch_n <= 1,
        "watching agent woke {watch_n} times between cycles: {watch_each:?}"
    );
    assert!(
        watch_each.iter().any(|t| t.contains("mtuperf-watch"))
            && watch_each.iter().any(|t| t.contains("mtuperf-metrics")),
        "the sleepers were there: {watch_each:?}"
    );
    for (mut agent, what) in [(plain, "plain"), (watching, "watching")] {
        let (code, took) = terminate(&mut agent, Duration::from_secs(1));
        assert_eq!(code, Some(0), "{what} agent after SIGTERM");
        eprintln!("{what} agent stopped {took:?} after SIGTERM");
        // The rest of its log (it has exited) says so.
        if let Err(rest) = agent.wait_for("agent stopped", Duration::from_secs(5)) {
            panic!("{what}: no \"agent stopped\" in {rest:?}");
        }
    }
}
