//! The limiting-factor verdict in lab namespaces: each test provokes one cause and
//! checks that `stream` names it, in JSON (with the fractions behind it) and in text.
//! No assertion is on a speed; the causes come from the kernel's tcp_info clocks and
//! the CPU counters of both ends.

use std::sync::Mutex;

use mtuperf_lab::{check_environment, LabGuard, LabOptions, Scenario};

const BIN: &str = env!("CARGO_BIN_EXE_mtuperf");

/// One lab run at a time: the causes are about who saturates first, and two runs on
/// the same two cores would blur each other.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn lab(rate: Option<u64>) -> Option<LabGuard> {
    if let Err(e) = check_environment() {
        eprintln!("skipped: {e}");
        return None;
    }
    std::env::set_var("MTUPERF_BIN", BIN);
    let mut lab = LabGuard::up(LabOptions {
        scenarios: vec![Scenario::Std],
        rate,
        ..LabOptions::default()
    })
    .unwrap();
    lab.serve(&[]).unwrap();
    Some(lab)
}

/// Runs `stream --json` from the client with `extra` and returns the first run's
/// first direction's verdict, plus the text rendering of the same run.
fn verdict(lab: &LabGuard, extra: &[&str]) -> (serde_json::Value, String) {
    // One run, read twice: its JSON document, then its text from the history
    // (`show`), so both assertions judge the same measurement (two separate runs can
    // land on either side of a threshold).
    let target = lab.target(Scenario::Std).unwrap().to_string();
    let db = tempfile::tempdir().unwrap();
    let db = db.path().join("history.db");
    let db = db.to_str().unwrap();
    let mut argv: Vec<String> = [BIN, "--db", db, "stream", &target, "--time", "3s"]
        .iter()
        .map(|s| (*s).to_string())
        .collect();
    argv.extend(extra.iter().map(|s| (*s).to_string()));
    argv.push("--json".into());
    let out = lab.exec_command("client", &argv).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let v = doc["runs"][0]["metrics"]["directions"][0]["limit"].clone();
    let id = doc["runs"][0]["run_id"]
        .as_i64()
        .expect("run stored")
        .to_string();
    let text = std::process::Command::new(BIN)
        .args(["--db", db, "show", &id])
        .output()
        .unwrap();
    assert!(
        text.status.success(),
        "{}",
        String::from_utf8_lossy(&text.stderr)
    );
    (v, String::from_utf8_lossy(&text.stdout).into_owned())
}

fn share(v: &serde_json::Value, key: &str) -> f64 {
    v["shares"][key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key}: {v}"))
}

#[test]
fn a_small_window_is_named_receive_window() {
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let Some(lab) = lab(None) else { return };
    // 2 KiB asked, 4 KiB granted: far below what even a microsecond RTT needs.
    let (v, text) = verdict(&lab, &["--window", "2K"]);
    assert_eq!(v["cause"], "receive_window", "{v}");
    assert_eq!(v["evidence"], "limit_clock", "{v}");
    assert!(share(&v, "rwnd_limited") >= 0.5, "{v}");
    assert!(v["receiver_buffer"].as_u64().unwrap() <= 8192, "{v}");
    assert_eq!(v["fixes"][0]["fix"], "raise_window", "{v}");
    assert!(text.contains("raise --window (now 2048 B)"), "{text}");
    assert!(
        text.contains("limited by: client→agent: receive window limited the sender"),
        "{text}"
    );
}

#[test]
fn a_rate_shaped_link_is_named_the_network() {
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let Some(lab) = lab(Some(100_000_000)) else {
        return;
    };
    let (v, text) = verdict(&lab, &[]);
    assert_eq!(v["cause"], "network", "{v}");
    assert!(share(&v, "cwnd_limited") >= 0.5, "{v}");
    assert!(share(&v, "busy_of_lifetime") >= 0.9, "{v}");
    assert!(
        text.contains("limited by: client→agent: the network:"),
        "{text}"
    );
}

#[test]
fn an_unshaped_veth_pair_is_named_cpu() {
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let Some(lab) = lab(None) else { return };
    // Both ends share this machine's cores: nothing but the CPU limits a veth pair.
    let (v, text) = verdict(&lab, &[]);
    assert_eq!(v["cause"], "cpu", "{v}");
    assert!(v["cpu"]["what"]["kind"].as_str().is_some(), "{v}");
    assert!(share(&v, "rwnd_limited") < 0.5, "{v}");
    assert!(text.contains("limited by: client→agent: CPU:"), "{text}");
}

#[test]
fn a_small_tcp_rmem_on_the_agent_is_named_and_doctor_quotes_the_run() {
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Err(e) = check_environment() {
        eprintln!("skipped: {e}");
        return;
    }
    std::env::set_var("MTUPERF_BIN", BIN);
    let mut lab = LabGuard::up(LabOptions {
        scenarios: vec![Scenario::Std],
        ..LabOptions::default()
    })
    .unwrap();
    // Before the agent starts, so its sockets are born under the small maximum:
    // autotuned buffers, no --window.
    let set: Vec<String> = ["sysctl", "-w", "net.ipv4.tcp_rmem=4096 4096 4096"]
        .iter()
        .map(|s| (*s).to_string())
        .collect();
    assert!(lab.exec_command("std", &set).status().unwrap().success());
    lab.serve(&[]).unwrap();
    let db = tempfile::tempdir().unwrap();
    let db_path = db.path().join("history.db");
    let target = lab.target(Scenario::Std).unwrap().to_string();
    let run = |args: &[&str]| {
        let argv: Vec<String> = [BIN].iter().chain(args).map(|s| (*s).to_string()).collect();
        let out = lab
            .exec_command("client", &argv)
            .env("MTUPERF_DB", &db_path)
            .output()
            .unwrap();
        serde_json::from_slice::<serde_json::Value>(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
    };
    // 8K blocks: read with receive coalescing by default, so the reader does not
    // chase each 2 KiB window with a wakeup and the CPU of both ends stays below a
    // core (from 64 KiB blocks a reader reads at once, and on this veth pair the
    // wakeups per tiny window can take the CPU: BENCHMARKS §17).
    let doc = run(&["stream", &target, "--time", "3s", "--block", "8K", "--json"]);
    let v = &doc["runs"][0]["metrics"]["directions"][0]["limit"];
    assert_eq!(v["cause"], "receive_window", "{v}");
    assert_eq!(v["sysctl"], "net.ipv4.tcp_rmem", "{v}");
    assert_eq!(v["sysctl_end"], "agent", "{v}");
    assert_eq!(
        v["fixes"],
        serde_json::json!([{"fix": "raise_sysctl_max", "sysctl": "net.ipv4.tcp_rmem", "end": "agent"}]),
        "{v}"
    );
    let doctor = run(&[
        "doctor",
        "--peer",
        &target,
        "--profile",
        "generic",
        "--json",
    ]);
    let finding = |host: &str| {
        doctor[host]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"] == "sysctl.net.ipv4.tcp_rmem")
            .cloned()
            .unwrap()
    };
    // The agent's host is blamed, with the stored run quoted; this host is not.
    let peer = finding("peer");
    assert_eq!(peer["status"], "WARN", "{peer}");
    // Quoted in `why` when doctor has a bandwidth-delay product to compare with, in
    // `expected` when it has none (a veth's speed is none).
    assert!(
        format!("{}{}", peer["why"], peer["expected"]).contains("stream run 1 to"),
        "{peer}"
    );
    let local = finding("local");
    assert!(
        !local["why"].as_str().unwrap().contains("stream run"),
        "{local}"
    );
}

/// Runs `argv` in lab host `host` and fails the test if it does not succeed.
fn must(lab: &LabGuard, host: &str, argv: &[&str]) {
    let argv: Vec<String> = argv.iter().map(|s| (*s).to_string()).collect();
    let out = lab.exec_command(host, &argv).output().unwrap();
    assert!(
        out.status.success(),
        "{argv:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A small send buffer named (see docs/stream.md, "Send buffer"): a 4 KiB send buffer
/// on a path whose ACKs wait ~10–25 ms behind a standing queue. The lab has no
/// netem, so the delay is a reno flow from the agent (`--reverse`, started first so
/// the sender's min RTT already includes it) filling a 20 Mbit/s tbf on the agent's
/// egress. The forward sender is BBR (this kernel's default), which paces at buffer ÷
/// RTT, so the kernel's send-buffer clock reads only about a third of the busy time
/// (31–36% in four manual runs) and the rest is booked as busy. The verdict names
/// the send buffer from the window equation (goodput ≥ half of buffer ÷ min RTT, on
/// a link that carries ≥ 4× that) and still prints the kernel's clock.
#[test]
fn a_small_send_buffer_behind_a_delayed_ack_path_is_named_by_the_window_equation() {
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Err(e) = check_environment() {
        eprintln!("skipped: {e}");
        return;
    }
    std::env::set_var("MTUPERF_BIN", BIN);
    let mut lab = LabGuard::up(LabOptions {
        scenarios: vec![Scenario::Std],
        ..LabOptions::default()
    })
    .unwrap();
    // Before the agent starts, so its sockets fill the queue (BBR would keep it short).
    must(
        &lab,
        "std",
        &["sysctl", "-w", "net.ipv4.tcp_congestion_control=reno"],
    );
    must(
        &lab,
        "std",
        &[
            "tc", "qdisc", "replace", "dev", "eth0", "root", "tbf", "rate", "20mbit", "burst",
            "16kb", "latency", "50ms",
        ],
    );
    must(
        &lab,
        "client",
        &["sysctl", "-w", "net.ipv4.tcp_wmem=4096 4096 4096"],
    );
    lab.serve(&[]).unwrap();
    let target = lab.target(Scenario::Std).unwrap().to_string();
    let filler: Vec<String> = [
        BIN,
        "--no-store",
        "stream",
        &target,
        "--reverse",
        "--time",
        "14s",
    ]
    .iter()
    .map(|s| (*s).to_string())
    .collect();
    let mut filler = lab
        .exec_command("client", &filler)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let (v, text) = verdict(&lab, &[]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(45);
    while filler.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = filler.kill();
            panic!("the filler stream did not end within 45 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // The queue really delayed the ACKs: the min RTT is milliseconds, not the
    // microseconds of a bare veth pair.
    assert!(v["min_rtt_us"].as_u64().unwrap() >= 1000, "{v}");
    assert!(v["sender_buffer"].as_u64().unwrap() <= 8192, "{v}");
    assert!(share(&v, "sndbuf_limited") >= 0.1, "{v}");
    assert!(share(&v, "rwnd_limited") < 0.1, "{v}");
    assert!(
        text.lines()
            .any(|l| l.contains("client sender busy") && !l.contains("send buffer 0%")),
        "{text}"
    );
    assert_eq!(v["cause"], "send_buffer", "{v}");
    assert_eq!(v["sysctl"], "net.ipv4.tcp_wmem", "{v}");
    assert_eq!(v["sysctl_end"], "client", "{v}");
    // The kernel's send-buffer clock reads about a third: when it does not reach the
    // threshold with the receive clock, the window equation names the buffer, with
    // the veth's nominal speed as its (labelled) estimate of the room the path leaves.
    assert!(
        v["evidence"] == "window_equation" || v["evidence"] == "limit_clock",
        "{v}"
    );
    if v["evidence"] == "window_equation" {
        assert!(v["window_allows_bps"].as_f64().unwrap() > 0.0, "{v}");
        assert!(v["nominal_link_bps"].as_f64().is_some(), "{v}");
    }
    assert!(
        text.lines().any(|l| l
            .starts_with("limited by: client→agent: send buffer limited the sender")
            && l.ends_with("raise net.ipv4.tcp_wmem's maximum on the client")),
        "{text}"
    );
}
