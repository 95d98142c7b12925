//! Watch mode in the lab, scraped by a real Prometheus: keyed agents in the jumbo and
//! blackhole servers; the client node's agent watches both and serves its metrics on
//! its own loopback, where a Prometheus started in the same namespace (temporary data
//! directory, 1 s scrapes) scrapes it. The test reads Prometheus's HTTP API, from
//! inside that namespace too: no traffic leaves the lab, none goes to the root
//! namespace's addresses. Then the black hole is repaired (the router's and server's
//! 1500-byte segment raised to 9000, as a replaced switch would) and the next cycle
//! is seen ok through Prometheus.
// Metric values compared here are integers (MTUs, counts, 0/1) that the
// exposition writes exactly.
#![allow(clippy::float_cmp)]
use crate::lab_support;
use crate::watch_support;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use lab_support::{mtuperf, text, TestLab, BIN};

const JUMBO: &str = "198.18.2.2";
const BLACKHOLE: &str = "198.18.14.2";
const METRICS: &str = "127.0.0.1:19464";
const PROM: &str = "127.0.0.1:19090";

/// Asks Prometheus's HTTP API (from inside the client's namespace) for `query`; the
/// `data.result` array.
const QUERY: &str = r#"
import json, sys, urllib.parse, urllib.request
url = "http://" + sys.argv[1] + "/api/v1/query?" + urllib.parse.urlencode({"query": sys.argv[2]})
try:
    print(json.dumps(json.load(urllib.request.urlopen(url, timeout=5))["data"]["result"]))
except Exception as e:
    print("[]"); print(e, file=sys.stderr)
"#;

/// A process in a lab namespace, killed on drop (`ip netns exec` replaces itself with
/// the command, so the pid is the command's).
struct InNs(Child);

impl Drop for InNs {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn in_ns(lab: &TestLab, host: &str, argv: &[&str], log: &std::path::Path) -> InNs {
    let log = std::fs::File::create(log).unwrap();
    let child = Command::new("ip")
        .args(["netns", "exec", &format!("mtlab-{}-{host}", lab.name)])
        .args(argv)
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .stdin(Stdio::null())
        .spawn()
        .expect("ip netns exec");
    InNs(child)
}

/// `(labels, value)` of each series `query` returns now.
fn query(lab: &TestLab, q: &str) -> Vec<(serde_json::Value, f64)> {
    let out = lab.exec("client", &["python3", "-c", QUERY, PROM, q]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| {
            let val = s["value"][1].as_str()?.parse().ok()?;
            Some((s["metric"].clone(), val))
        })
        .collect()
}

/// Polls `q` until `ok` holds for its answer, at most `secs`.
fn wait_for(
    lab: &TestLab,
    q: &str,
    secs: u64,
    ok: impl Fn(&[(serde_json::Value, f64)]) -> bool,
) -> Vec<(serde_json::Value, f64)> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let r = query(lab, q);
        if ok(&r) || Instant::now() > deadline {
            return r;
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

#[test]
fn prometheus_sees_jumbo_ok_and_black_hole_until_repaired() {
    require_lab!(true);
    if watch_support::promtool().is_none() {
        return; // the prometheus package brings both binaries; reason printed
    }
    let dir = tempfile::tempdir().unwrap();
    let key = watch_support::keygen(dir.path(), "key");
    let key = key.to_str().unwrap();
    let lab = TestLab::up(&["--scenario", "jumbo", "--scenario", "blackhole"]);
    // The agents' own flags go after `--`.
    let out = mtuperf(&["lab", "serve", "--name", &lab.name, "--", "--key-file", key]);
    assert!(out.status.success(), "lab serve: {}", text(&out));

    let db = dir.path().join("h.db");
    let watcher = in_ns(
        &lab,
        "client",
        &[
            BIN,
            "--key-file",
            key,
            "--db",
            db.to_str().unwrap(),
            "serve",
            "--bind",
            "127.0.0.1",
            "--port",
            "0",
            "--watch",
            &format!("{JUMBO},{BLACKHOLE}"),
            "--watch-every",
            "10s",
            // The repair is awaited at the next cycle: not stretched on a busy host.
            "--watch-max-slowdown",
            "1",
            "--metrics",
            METRICS,
        ],
        &dir.path().join("watcher.log"),
    );
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: mtuperf\n    static_configs:\n      - targets: ['{METRICS}']\n"
        ),
    )
    .unwrap();
    let prom = in_ns(
        &lab,
        "client",
        &[
            "prometheus",
            &format!("--config.file={}", config.display()),
            &format!("--storage.tsdb.path={}", dir.path().join("tsdb").display()),
            &format!("--web.listen-address={PROM}"),
        ],
        &dir.path().join("prometheus.log"),
    );
    let logs = || {
        format!(
            "watcher:\n{}\nprometheus (tail):\n{}",
            std::fs::read_to_string(dir.path().join("watcher.log")).unwrap_or_default(),
            std::fs::read_to_string(dir.path().join("prometheus.log"))
                .unwrap_or_default()
                .lines()
                .rev()
                .take(10)
                .collect::<Vec<_>>()
                .join("\n")
        )
    };

    // The jumbo peer carries 9000 both ways; the black-holed one is not ok.
    let jumbo = format!("mtuperf_path_mtu_bytes{{peer=\"{JUMBO}\"}}");
    let r = wait_for(&lab, &jumbo, 90, |r| r.len() == 2);
    assert_eq!(r.len(), 2, "{r:?}\n{}", logs());
    for (labels, v) in &r {
        assert_eq!(*v, 9000.0, "{labels}\n{}", logs());
        assert_eq!(labels["network"], "jumbo0", "{labels}");
    }
    let hole_ok = format!("mtuperf_path_ok{{peer=\"{BLACKHOLE}\"}}");
    let r = wait_for(&lab, &hole_ok, 60, |r| !r.is_empty());
    assert_eq!(r.len(), 1, "{r:?}\n{}", logs());
    assert_eq!(
        r[0].1,
        0.0,
        "the black hole must not be ok: {r:?}\n{}",
        logs()
    );
    let hole = query(
        &lab,
        &format!("mtuperf_path_mtu_bytes{{peer=\"{BLACKHOLE}\"}}"),
    );
    assert!(
        hole.len() == 2 && hole.iter().all(|(_, v)| *v == 1500.0),
        "measured, not failed: 1500 both ways behind the router: {hole:?}\n{}",
        logs()
    );
    let jumbo_ok = query(&lab, &format!("mtuperf_path_ok{{peer=\"{JUMBO}\"}}"));
    assert_eq!(jumbo_ok.first().map(|x| x.1), Some(1.0), "{jumbo_ok:?}");
    // The watch's rate (issue 33) reaches Prometheus with its reason: as asked here
    // (--watch-max-slowdown 1), whatever the host's CPU pressure, which is exported.
    let rate = wait_for(&lab, "mtuperf_watch_rate_factor", 30, |r| !r.is_empty());
    assert_eq!(rate.first().map(|x| x.1), Some(1.0), "{rate:?}\n{}", logs());
    let pressure = query(&lab, "mtuperf_watch_host_cpu_pressure_ratio");
    assert!(
        pressure.len() == 1 && pressure[0].1 >= 0.0,
        "{pressure:?}\n{}",
        logs()
    );

    // Repair: the 1500-byte segment behind the router becomes jumbo like the rest.
    for (host, dev) in [("blackhole-router", "eth1"), ("blackhole", "eth0")] {
        let out = lab.exec(host, &["ip", "link", "set", dev, "mtu", "9000"]);
        assert!(out.status.success(), "{host}: {}", text(&out));
    }
    let repaired = mtuperf_engine::unix_ms() as f64 / 1e3;
    // The next cycle (10 s ± 10%) shows it ok; Prometheus has it within a scrape. A
    // check already running at the repair may still fail: allow two cycles.
    let ok_now = format!("{hole_ok} == 1");
    let r = wait_for(&lab, &ok_now, 60, |r| !r.is_empty());
    assert_eq!(r.first().map(|x| x.1), Some(1.0), "{r:?}\n{}", logs());
    let last = query(
        &lab,
        &format!("mtuperf_watch_last_check_timestamp_seconds{{peer=\"{BLACKHOLE}\"}}"),
    );
    assert!(
        last.first().is_some_and(|x| x.1 > repaired),
        "the ok check ended after the repair: {last:?} vs {repaired}"
    );
    let mtus = query(
        &lab,
        &format!("mtuperf_path_mtu_bytes{{peer=\"{BLACKHOLE}\"}}"),
    );
    assert!(
        mtus.len() == 2 && mtus.iter().all(|(_, v)| *v == 9000.0),
        "{mtus:?}"
    );
    drop(prom);
    drop(watcher);
}
