//! True numbers under faults, in lab namespaces (issues 28 and 29): a test that gets
//! nothing back names its likely cause; no latency without an answer; an interrupted
//! stream is headlined over what was measured; answers that came late are a served
//! step, not a stall.

use crate::lab_support;

use lab_support::{text, TestLab, BIN};

const SWITCHPORT: &str = "198.18.6.2";
const JUMBO: &str = "198.18.2.2";

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
}

fn assert_schema(doc: &serde_json::Value, schema: &str) {
    let v: serde_json::Value = serde_json::from_str(schema).unwrap();
    let validator = jsonschema::validator_for(&v).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "schema errors: {errors:?}");
}

/// NICs at 9000, a switch port at 1500: 8K UDP blocks never arrive. The step is all
/// lost (not 95%), has no latency (null, "no block answered"), and names the path, in
/// its JSON and in its text (the stored run, shown: one run on the dead path, which
/// costs the agent's report deadline, serves both).
#[test]
fn a_switch_port_at_1500_is_named_when_8k_blocks_get_no_answer() {
    require_lab!(false);
    let lab = TestLab::up(&["--scenario", "switchport", "--offload", "off"]);
    let out = lab_support::mtuperf(&["lab", "serve", "--name", &lab.name]);
    assert!(out.status.success(), "lab serve: {}", text(&out));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let db = db.to_str().unwrap();
    let out = lab.exec(
        "client",
        &[BIN, "--db", db, "rr", SWITCHPORT, "--time", "2s", "--json"],
    );
    // The agent's report is lost on the same path: interrupted, exit 5.
    assert_eq!(out.status.code(), Some(5), "{}", text(&out));
    let doc = json(&out);
    assert_schema(&doc, include_str!("../../../../schemas/rr.schema.json"));
    let r = &doc["steps"][0]["result"];
    let c = &r["client"]["counts"];
    assert_eq!(c["blocks"], 0, "{c}");
    assert_eq!(c["lost"], c["requests_sent"], "everything lost: {c}");
    assert!(c["lost_at_end"].as_u64().unwrap() >= 1, "{c}");
    assert!(
        r["client"]["latency"]["p50"].is_null(),
        "{}",
        r["client"]["latency"]
    );
    assert_eq!(doc["steps"][0]["metrics"]["lost_pct"], 100.0);
    let cause = &r["diagnosis"]["cause"];
    assert_eq!(cause["cause"], "path_mtu", "{cause}");
    assert_eq!(cause["carries"], 1500, "{cause}");
    assert_eq!(cause["packet"]["way"], "from_agent", "{cause}");
    assert_eq!(cause["packet"]["kind"]["kind"], "udp_block", "{cause}");
    assert_eq!(r["diagnosis"]["path"]["faults"][0]["class"], "switch_port");

    let id = doc["steps"][0]["run_id"].as_i64().expect("stored");
    let shown = lab_support::mtuperf(&["--db", db, "show", &id.to_string()]);
    let all = text(&shown);
    assert!(shown.status.success(), "{all}");
    assert!(
        all.contains("no block answered: no latency to show"),
        "{all}"
    );
    assert!(!all.contains("0.0 µs"), "{all}");
    assert!(
        all.contains("likely cause: the path carries 1500 of 9000 agent → client: 8 KiB blocks (8260-byte datagrams) cannot pass"),
        "{all}"
    );
}

/// A TCP stream over a switch port at 1500 between NICs at 9000: its 9000-byte
/// segments cannot pass; the run names the path, and gives no limit verdict.
#[test]
fn a_tcp_stream_through_a_switch_port_at_1500_names_it() {
    require_lab!(false);
    let lab = TestLab::up(&["--scenario", "switchport", "--offload", "off"]);
    let out = lab_support::mtuperf(&["lab", "serve", "--name", &lab.name]);
    assert!(out.status.success(), "lab serve: {}", text(&out));
    let out = lab.exec(
        "client",
        &[BIN, "--no-store", "stream", SWITCHPORT, "--time", "2s"],
    );
    let all = text(&out);
    assert!(
        all.contains(
            "likely cause: the path carries 1500 of 9000 client → agent: 9000-byte TCP segments"
        ),
        "{all}"
    );
    assert!(
        !all.contains("limited by:"),
        "no verdict from a dead path: {all}"
    );
}

/// `stream --udp` of 8K datagrams toward a node behind a switch port at 1500 (cluster
/// lab, NICs at 9000): every datagram is lost and the agent's report with them (its
/// TCP segments cannot pass either). The run names the path as the likely cause, as
/// rr and the TCP stream do, in its JSON (typed, schema-valid) and in its text, read
/// back from the history.
#[test]
fn a_udp_stream_that_loses_everything_names_the_switch_port() {
    require_lab!(false);
    let lab = TestLab::up(&[
        "--scenario",
        "cluster",
        "--nodes",
        "3",
        "--nets",
        "2",
        "--fault",
        "port-mtu=n3:2:1500",
    ]);
    let out = lab_support::mtuperf(&["lab", "serve", "--name", &lab.name]);
    assert!(out.status.success(), "lab serve: {}", text(&out));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let db = db.to_str().unwrap();
    let out = lab.exec(
        "n1",
        &[
            BIN,
            "--db",
            db,
            "stream",
            "--udp",
            "198.19.2.3",
            "--block",
            "8K",
            "--rate",
            "100M",
            "--time",
            "2s",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(5), "{}", text(&out));
    let doc = json(&out);
    assert_eq!(doc["schema"], "mtuperf.stream-udp/5");
    assert_schema(
        &doc,
        include_str!("../../../../schemas/stream-udp.schema.json"),
    );
    let r = &doc["runs"][0]["result"];
    let cause = &r["diagnosis"]["cause"];
    assert_eq!(cause["cause"], "path_mtu", "{cause}");
    assert_eq!(cause["carries"], 1500, "{cause}");
    assert_eq!(cause["packet"]["way"], "to_agent", "{cause}");
    assert_eq!(
        cause["packet"]["kind"],
        serde_json::json!({"kind": "udp_datagram", "datagram": 8192}),
        "{cause}"
    );
    assert_eq!(cause["packet"]["bytes"], 8220, "{cause}");
    assert_eq!(r["diagnosis"]["path"]["faults"][0]["class"], "switch_port");
    let id = doc["runs"][0]["run_id"].as_i64().expect("stored");
    let shown = lab_support::mtuperf(&["--db", db, "show", &id.to_string()]);
    let all = text(&shown);
    assert!(
        all.contains("likely cause: the path carries 1500 of 9000 client → agent: 8 KiB datagrams (8220-byte IP packets) cannot pass; both directions between this host and the agent's host stop above 1500"),
        "{all}"
    );
}

/// A stream whose path dies 2 s in: the agent's report never comes, and the headline
/// is the rate over the 2 s that moved data (the bytes the agent's kernel acked),
/// said to be partial, not "0.0 kbit/s".
#[test]
fn a_stream_cut_by_a_dead_path_is_headlined_over_what_moved() {
    require_lab!(false);
    let lab = TestLab::up(&["--scenario", "jumbo", "--offload", "off"]);
    let out = lab_support::mtuperf(&["lab", "serve", "--name", &lab.name]);
    assert!(out.status.success(), "lab serve: {}", text(&out));
    let db = tempfile::tempdir().unwrap();
    let db_path = db.path().join("history.db");
    let db_arg = db_path.to_str().unwrap();
    let stream = lab
        .exec_cmd(
            "client",
            &[
                BIN, "--db", db_arg, "stream", JUMBO, "--time", "6s", "--json",
            ],
        )
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let down = lab.exec("jumbo", &["ip", "link", "set", "dev", "eth0", "down"]);
    assert!(down.status.success(), "{}", text(&down));
    let out = stream.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", text(&out));
    let doc = json(&out);
    assert_schema(&doc, include_str!("../../../../schemas/stream.schema.json"));
    let m = &doc["runs"][0]["metrics"];
    assert_eq!(m["partial"]["counted_by"], "sender_acked", "{m}");
    let over = m["partial"]["over_s"].as_f64().unwrap();
    assert!((1.0..=4.0).contains(&over), "measured {over} s");
    assert!(m["headline_bps"].as_f64().unwrap() > 0.0, "{m}");
    assert!(m["directions"][0]["limit"].is_null(), "{m}");
    assert_eq!(
        doc["runs"][0]["result"]["diagnosis"]["cause"]["cause"],
        "agent_gone"
    );
    // The history's headline says it.
    let hist = lab_support::mtuperf(&["--db", db_arg, "history"]);
    let h = text(&hist);
    assert!(
        h.contains(" measured (interrupted; bytes the agent acknowledged)"),
        "{h}"
    );
    assert!(!h.contains("0.0 kbit/s"), "{h}");
}

/// Every block comes back, but later than the timeout: the agent's link shaped to
/// 10 Mbit/s (an 8K block takes 6.6 ms to leave, eight clients queue behind each
/// other), a 5 ms timeout. After the first blocks every answer is late, for seconds:
/// the agent served the step, so it is no stall (issue 28's 4096-client retry storm
/// read "no block answered by the agent", exit 5). A step that never gets an answer
/// in time names that cause.
#[test]
fn answers_later_than_the_timeout_are_a_served_step() {
    require_lab!(false);
    let lab = TestLab::up(&["--scenario", "jumbo", "--offload", "off"]);
    let out = lab_support::mtuperf(&["lab", "serve", "--name", &lab.name]);
    assert!(out.status.success(), "lab serve: {}", text(&out));
    let shape = lab.exec(
        "jumbo",
        &[
            "tc", "qdisc", "replace", "dev", "eth0", "root", "tbf", "rate", "10mbit", "burst",
            "10kb", "latency", "400ms",
        ],
    );
    assert!(shape.status.success(), "{}", text(&shape));
    let rr = |extra: &[&str]| {
        let base = [
            BIN,
            "--no-store",
            "rr",
            JUMBO,
            "--time",
            "4s",
            "--timeout",
            "5ms",
            "--json",
        ];
        lab.exec("client", &[&base[..], extra].concat())
    };
    let out = rr(&["--clients", "8"]);
    assert!(out.status.success(), "{}", text(&out));
    let r = json(&out)["steps"][0]["result"].clone();
    assert_eq!(r["interrupted"], false, "{}", r["interrupted_by"]);
    let c = &r["client"]["counts"];
    assert!(c["blocks"].as_u64().unwrap() > 0, "{c}");
    assert!(c["late"].as_u64().unwrap() > 10, "{c}");
    let quiet: Vec<&serde_json::Value> = r["client"]["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["blocks"] == 0 && i["late"].as_u64().unwrap() > 0)
        .collect();
    assert!(quiet.len() >= 2, "{}", r["client"]["intervals"]);
    assert!(quiet.iter().all(|i| i["mean_ns"].is_null()));
    assert!(r["diagnosis"].is_null(), "{r}");

    // 60 KiB blocks take 48 ms to leave: not one in time (and the re-sends soon
    // overflow the shaper's queue, so nothing at all comes back after a while: that
    // is a stall). The cause is named.
    let r = json(&rr(&["--block", "60K"]))["steps"][0]["result"].clone();
    assert_eq!(r["client"]["counts"]["blocks"], 0, "{r}");
    assert_eq!(r["diagnosis"]["cause"]["cause"], "answered_late", "{r}");
}
