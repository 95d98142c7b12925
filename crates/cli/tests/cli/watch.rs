//! `serve --metrics` and `serve --watch` on loopback: the listener is off unless
//! asked; the watch checks only peers that prove they hold the key; promtool accepts
//! the exposition and the contrib rules and config. The agents are processes; the
//! clients that test, read and report run in-process.
// Metric values compared here are integers (MTUs, counts, 0/1) that the
// exposition writes exactly.
#![allow(clippy::float_cmp)]
use crate::agent_support;
use crate::watch_support;

use std::time::{Duration, Instant};

use crate::inproc::mtuperf_in;
use agent_support::{mtuperf, AgentProc};
use watch_support::{get, keygen, listening_ports, metrics_addr, promtool_ok, value};

#[test]
fn metrics_listener_is_off_unless_asked_and_counts_sessions() {
    let plain = AgentProc::start(&["--no-store"]);
    assert_eq!(
        listening_ports(plain.child.id()),
        vec![plain.addr.port()],
        "an agent without --metrics listens on its own port only"
    );
    let agent = AgentProc::start(&["--no-store", "--metrics", "127.0.0.1:0"]);
    let maddr = metrics_addr(&agent.early);
    let mut want = vec![agent.addr.port(), maddr.port()];
    want.sort_unstable();
    assert_eq!(listening_ports(agent.child.id()), want);
    let (status, body) = get(maddr, "/metrics");
    assert!(status.contains("200"), "{status}");
    assert_eq!(value(&body, "mtuperf_agent_sessions_total", &[]), Some(0.0));
    let (status, _) = get(maddr, "/other");
    assert!(status.contains("404"), "{status}");
    // One path test: one session, one test served, counted by the agent.
    let dir = tempfile::tempdir().unwrap();
    let out = mtuperf_in(&dir.path().join("h.db"))
        .args(["path", &agent.target()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let (_, body) = get(maddr, "/metrics");
    assert_eq!(value(&body, "mtuperf_agent_sessions_total", &[]), Some(1.0));
    assert_eq!(value(&body, "mtuperf_agent_tests_total", &[]), Some(1.0));
    promtool_ok(&["check", "metrics"], Some(&body));
}

#[test]
fn watch_without_a_key_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = mtuperf(&dir.path().join("h.db"))
        .args(["serve", "--bind", "127.0.0.1", "--port", "0"])
        .args(["--watch", "127.0.0.1:1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--watch") && err.contains("--key-file"),
        "{err}"
    );
    for bad in [
        ["--watch-every", "1s"],
        ["--watch-rr", "1m"],
        ["--retain", "10m"],
    ] {
        let out = mtuperf(&dir.path().join("h.db"))
            .args(["serve", "--port", "0"])
            .args(bad)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(bad[0]) && err.contains("allowed"), "{err}");
    }
}

/// Polls the watcher's metrics until `done` or 60 s.
fn wait_metrics(addr: std::net::SocketAddr, done: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_mins(1);
    loop {
        let (_, body) = get(addr, "/metrics");
        if done(&body) || Instant::now() > deadline {
            return body;
        }
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn watch_checks_only_peers_holding_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let (key, other_key) = (keygen(dir.path(), "k1"), keygen(dir.path(), "k2"));
    let (key, other_key) = (key.to_str().unwrap(), other_key.to_str().unwrap());
    let metrics = ["--metrics", "127.0.0.1:0"];
    let open = AgentProc::start(&[&["--no-store"][..], &metrics].concat());
    let stranger =
        AgentProc::start(&[&["--no-store", "--key-file", other_key][..], &metrics].concat());
    let friend = AgentProc::start(&[&["--no-store", "--key-file", key][..], &metrics].concat());
    let peers = [open.target(), stranger.target(), friend.target()].join(",");
    let db = dir.path().join("h.db");
    let db = db.to_str().unwrap();
    let watcher = AgentProc::start(
        &[
            &["--db", db, "--key-file", key, "--watch", &peers][..],
            &["--watch-every", "10s", "--watch-rr", "1s"],
            &metrics,
        ]
        .concat(),
    );
    let maddr = metrics_addr(&watcher.early);
    let all_checked = |b: &str| {
        [&open, &stranger, &friend].iter().all(|p| {
            value(
                b,
                "mtuperf_watch_last_check_timestamp_seconds",
                &[("peer", &p.target())],
            )
            .is_some()
        })
    };
    let body = wait_metrics(maddr, all_checked);
    assert!(
        all_checked(&body),
        "not every peer checked in 60 s:\n{body}"
    );
    let of = |name: &str, p: &AgentProc, extra: &[(&str, &str)]| {
        let t = p.target();
        value(&body, name, &[&[("peer", t.as_str())][..], extra].concat())
    };
    assert_eq!(of("mtuperf_path_ok", &friend, &[]), Some(1.0), "{body}");
    for d in ["forward", "reverse"] {
        assert_eq!(
            of(
                "mtuperf_path_mtu_bytes",
                &friend,
                &[("direction", d), ("network", "lo")]
            ),
            Some(65535.0),
            "{body}"
        );
    }
    assert!(of("mtuperf_rr_latency_p99_seconds", &friend, &[]).is_some_and(|v| v > 0.0));
    for p in [&open, &stranger] {
        assert_eq!(of("mtuperf_path_ok", p, &[]), Some(0.0), "{body}");
        assert_eq!(
            of("mtuperf_watch_checks_total", p, &[("outcome", "error")]),
            Some(1.0)
        );
        assert_eq!(
            of("mtuperf_path_mtu_bytes", p, &[("direction", "forward")]),
            None
        );
    }
    // The open and the differently keyed agent served no test: no probe reached them.
    for (p, why) in [(&open, "open agent"), (&stranger, "other key")] {
        let (_, b) = get(metrics_addr(&p.early), "/metrics");
        assert_eq!(
            value(&b, "mtuperf_agent_tests_total", &[]),
            Some(0.0),
            "{why}: {b}"
        );
    }
    let (_, b) = get(metrics_addr(&stranger.early), "/metrics");
    assert!(
        value(&b, "mtuperf_agent_handshake_failures_total", &[]) >= Some(1.0),
        "the stranger saw the watcher give up on its proof: {b}"
    );
    let (_, b) = get(metrics_addr(&friend.early), "/metrics");
    assert!(
        value(&b, "mtuperf_agent_tests_total", &[]) >= Some(2.0),
        "path and rr: {b}"
    );
    // The rate under CPU pressure, with its reason, once the cycle has ended: 1 to 8
    // times --watch-every (whatever this host's load is now), never 0.
    let body = wait_metrics(maddr, |b| {
        value(b, "mtuperf_watch_rate_factor", &[]).is_some()
    });
    let factor = value(&body, "mtuperf_watch_rate_factor", &[]);
    assert!(
        factor.is_some_and(|f| [1.0, 2.0, 4.0, 8.0].contains(&f)),
        "{body}"
    );
    assert_eq!(
        value(&body, "mtuperf_watch_cycle_interval_seconds", &[]),
        factor.map(|f| f * 10.0),
        "{body}"
    );
    assert!(
        body.lines().any(|l| l
            .starts_with("mtuperf_watch_host_cpu_pressure_ratio{source=\"psi_some_avg10\"}")
            || l.starts_with("mtuperf_watch_host_cpu_pressure_ratio{source=\"loadavg_per_cpu\"}")),
        "{body}"
    );
    promtool_ok(&["check", "metrics"], Some(&body));
    // The friend's check is in the history, labelled watch.
    let out = mtuperf_in(std::path::Path::new(db))
        .args(["history", "--json"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\"watch\""), "{text}");
    // Issue 30: the probe is Cache Fusion's pattern, as mesh's block test: 8 KiB UDP
    // blocks for 128 B requests, a block lost after 500 ms; its lost blocks and the
    // reassembly failures while it ran are metrics.
    let rows: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    let rr_id = rows
        .iter()
        .find(|r| r["kind"] == "rr")
        .and_then(|r| r["id"].as_i64())
        .unwrap_or_else(|| panic!("no stored rr probe: {text}"));
    let out = mtuperf_in(std::path::Path::new(db))
        .args(["show", &rr_id.to_string(), "--format", "json"])
        .output()
        .unwrap();
    let probe: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let step = &probe["steps"][0]["result"];
    assert_eq!(
        (
            &step["request"]["proto"],
            &step["request"]["block"],
            &step["request"]["request"],
            &step["client"]["timeout_ns"]
        ),
        (
            &serde_json::json!("udp"),
            &serde_json::json!(8192),
            &serde_json::json!(128),
            &serde_json::json!(500_000_000)
        ),
        "{probe}"
    );
    assert_eq!(
        of("mtuperf_rr_lost_blocks", &friend, &[]),
        Some(0.0),
        "{body}"
    );
    assert!(
        of("mtuperf_rr_reassembly_failures", &friend, &[]).is_some(),
        "{body}"
    );
    // The same families from the history, for node_exporter's textfile collector.
    let out = mtuperf_in(std::path::Path::new(db))
        .args(["export", "--format", "openmetrics"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let exported = String::from_utf8_lossy(&out.stdout);
    let f = friend.target();
    let fp = [("peer", f.as_str())];
    assert_eq!(
        value(&exported, "mtuperf_path_ok", &fp),
        Some(1.0),
        "{exported}"
    );
    assert_eq!(
        value(
            &exported,
            "mtuperf_path_mtu_bytes",
            &[("peer", f.as_str()), ("direction", "reverse")]
        ),
        Some(65535.0),
        "{exported}"
    );
    assert!(value(&exported, "mtuperf_rr_latency_p50_seconds", &fp).is_some_and(|v| v > 0.0));
    assert!(
        !exported.contains(&open.target()),
        "failed checks are not stored: {exported}"
    );
    promtool_ok(&["check", "metrics"], Some(&exported));
    // The trend page draws the friend's checks.
    let html = dir.path().join("trend.html");
    let out = mtuperf_in(std::path::Path::new(db))
        .args(["report", "--since", "1h", "-o"])
        .arg(&html)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains(&f) && !page.contains(&open.target()),
        "{page}"
    );
    assert_eq!(page.matches("<svg").count(), 2, "MTU and rr charts");
    assert!(page.contains("path MTU per peer") && page.contains("65535"));
}

#[test]
fn contrib_rules_and_config_pass_promtool() {
    let c = watch_support::contrib();
    let p = |f: &str| c.join(f).to_string_lossy().into_owned();
    promtool_ok(&["check", "config", &p("prometheus.yml")], None);
    promtool_ok(&["check", "rules", &p("mtuperf.rules.yml")], None);
    promtool_ok(
        &[
            "test",
            "rules",
            &p("mtuperf.rules.test.yml"),
            &p("mtuperf.rules.weekly.test.yml"),
        ],
        None,
    );
}

#[test]
fn a_check_due_during_a_served_test_waits_for_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let key = keygen(dir.path(), "k");
    let key = key.to_str().unwrap();
    let friend = AgentProc::start(&["--no-store", "--key-file", key]);
    let watcher = AgentProc::start(&[
        "--no-store",
        "--key-file",
        key,
        "--watch",
        &friend.target(),
        "--watch-every",
        "10s",
        // The schedule is what is tested: not stretched on a host short of CPU.
        "--watch-max-slowdown",
        "1",
        "--metrics",
        "127.0.0.1:0",
    ]);
    let maddr = metrics_addr(&watcher.early);
    let last = || {
        let (_, b) = get(maddr, "/metrics");
        value(&b, "mtuperf_watch_last_check_timestamp_seconds", &[])
    };
    let first = wait_metrics(maddr, |b| {
        value(b, "mtuperf_watch_last_check_timestamp_seconds", &[]).is_some()
    });
    let t1 = value(&first, "mtuperf_watch_last_check_timestamp_seconds", &[]).unwrap();
    // The second check falls due 9 to 11 s after the first: serve an rr test from
    // 7 s to 13 s, around it.
    let now = || mtuperf_engine::unix_ms() as f64 / 1e3;
    std::thread::sleep(Duration::from_secs_f64((t1 + 7.0 - now()).max(0.0)));
    let start = now();
    let out = mtuperf_in(&dir.path().join("h.db"))
        .args(["--no-store", "--key-file", key, "rr", &watcher.target()])
        .args(["--time", "6s", "--rate", "100"])
        .output()
        .unwrap();
    let end = now();
    assert!(out.status.success(), "{out:?}");
    assert!(end - start >= 6.0);
    let deadline = Instant::now() + Duration::from_secs(30);
    let second = loop {
        match last() {
            Some(t) if t > t1 + 1.0 => break t,
            _ if Instant::now() > deadline => panic!("no second check"),
            _ => std::thread::sleep(Duration::from_millis(200)),
        }
    };
    assert!(
        second > end - 0.5,
        "the check due at {:.1} s ended at {:.1} s, inside the test served from {:.1} to {:.1} s",
        t1 + 10.0 - start,
        second - start,
        0.0,
        end - start
    );
}
