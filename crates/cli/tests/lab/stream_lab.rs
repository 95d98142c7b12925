//! Stream in lab namespaces: the interface frame counts a result reports must match
//! the kernel's own counters (`ip -s link`) for the same interval within 1%.

use std::process::Command;

use mtuperf_lab::{check_environment, LabGuard, LabOptions, Scenario};

const BIN: &str = env!("CARGO_BIN_EXE_mtuperf");

fn ip_link_packets(lab: &LabGuard, iface: &str) -> (u64, u64) {
    let argv: Vec<String> = ["ip", "-s", "-j", "link", "show", "dev", iface]
        .iter()
        .map(|s| (*s).to_string())
        .collect();
    let out = lab.exec_command("client", &argv).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &v[0]["stats64"];
    (
        s["tx"]["packets"].as_u64().unwrap(),
        s["rx"]["packets"].as_u64().unwrap(),
    )
}

/// Packets of the control connection (connect, handshake, request, ready, the data
/// connections' handshakes, Stop, the end report, Bye, the FINs) that `ip -s link`
/// around the whole command counts but the run's own interval, from Go to the end of
/// the data, does not: about 15 to 30 each way.
const CONTROL_PACKETS: f64 = 40.0;

/// Our count of the measured interval against the kernel's around the whole
/// command: within 1%, less at most the control connection's packets.
fn within_1pct(ours: u64, kernel: u64) -> bool {
    let (a, b) = (ours as f64, kernel as f64);
    a <= b + 0.01 * b.max(1.0) && b - a <= 0.01 * b.max(1.0) + CONTROL_PACKETS
}

#[test]
fn frame_counts_match_ip_link_within_one_percent() {
    if let Err(e) = check_environment() {
        eprintln!("skipped: {e}");
        return;
    }
    std::env::set_var("MTUPERF_BIN", BIN);
    let mut lab = LabGuard::up(LabOptions {
        scenarios: vec![Scenario::Std, Scenario::Jumbo],
        offload: false,
        ..LabOptions::default()
    })
    .unwrap();
    lab.serve(&[]).unwrap();
    // An 8K write leaves as 8192/1448 = 5.66 full-MSS frames when writes coalesce and
    // as 6 (five full, one short) when each goes out alone; which depends on timing.
    // At MTU 9000 a block fits one frame, and coalesced writes need fewer.
    for (sc, iface, expect_fpb) in [
        (Scenario::Std, "std0", 5.6..6.05),
        (Scenario::Jumbo, "jumbo0", 0.9..1.05),
    ] {
        let target = lab.target(sc).unwrap().to_string();
        let before = ip_link_packets(&lab, iface);
        let argv: Vec<String> = [
            BIN,
            "--no-store",
            "stream",
            &target,
            "--block",
            "8K",
            "--time",
            "1s",
            "--json",
        ]
        .iter()
        .map(|s| (*s).to_string())
        .collect();
        let out = lab.exec_command("client", &argv).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let after = ip_link_packets(&lab, iface);
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let client = &doc["runs"][0]["metrics"]["ends"][0];
        assert_eq!(client["end"], "client");
        let i = &client["iface"];
        assert_eq!(i["name"], iface);
        let (tx, rx) = (
            i["tx_packets"].as_u64().unwrap(),
            i["rx_packets"].as_u64().unwrap(),
        );
        let (ktx, krx) = (after.0 - before.0, after.1 - before.1);
        assert!(tx > 1000, "{tx}");
        assert!(
            within_1pct(tx, ktx),
            "{iface}: ours tx {tx}, ip -s link {ktx}"
        );
        assert!(
            within_1pct(rx, krx),
            "{iface}: ours rx {rx}, ip -s link {krx}"
        );
        let fpb = i["frames_per_block"].as_f64().unwrap();
        assert!(expect_fpb.contains(&fpb), "{iface}: frames per block {fpb}");
        assert_eq!(i["counts_super_packets"], false);
        let d = &doc["runs"][0]["metrics"]["directions"][0];
        assert_eq!(d["bytes_written"], d["bytes_read"]);
        // The agent's view of the same traffic is its eth0 in the server namespace.
        let agent = &doc["runs"][0]["metrics"]["ends"][1]["iface"];
        assert_eq!(agent["name"], "eth0");
        assert!(
            within_1pct(agent["rx_packets"].as_u64().unwrap(), tx),
            "agent rx vs client tx"
        );
    }
    let _ = Command::new("true").status();
}
