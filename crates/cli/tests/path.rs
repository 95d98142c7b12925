//! `mtuperf path` with the real binary inside lab namespaces: every scenario in IPv4
//! and IPv6, loss, a planted stale PMTU exception, --icmp and --hops. Each test builds
//! its own uniquely named lab, removed on drop; without root or tools they skip.

use std::process::{Output, Stdio};
use std::time::Duration;

use mtuperf_lab::{check_environment, unique_name, LabGuard, LabOptions, Scenario};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_mtuperf");

fn lab(scenarios: &[Scenario], loss_pct: Option<f64>) -> Option<LabGuard> {
    if let Err(e) = check_environment() {
        eprintln!("skipped: {e}");
        return None;
    }
    std::env::set_var("MTUPERF_BIN", BIN);
    let mut lab = LabGuard::up(LabOptions {
        name: unique_name(),
        scenarios: scenarios.to_vec(),
        loss_pct,
        ..LabOptions::default()
    })
    .unwrap();
    lab.serve(&[]).unwrap();
    Some(lab)
}

fn exec(lab: &LabGuard, host: &str, argv: &[&str]) -> Output {
    let argv: Vec<String> = argv.iter().map(|s| (*s).to_string()).collect();
    lab.exec_command(host, &argv).output().unwrap()
}

/// Runs `mtuperf path ARGS --json` in the client; returns (exit code, document).
fn path(lab: &LabGuard, args: &[&str]) -> (i32, Value) {
    let out = exec(
        lab,
        "client",
        &[&[BIN, "--no-store", "path", "--json"][..], args].concat(),
    );
    let code = out.status.code().unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let schema: Value =
        serde_json::from_str(include_str!("../../../schemas/path.schema.json")).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    assert!(
        v.is_valid(&doc),
        "{:?}",
        v.iter_errors(&doc)
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
    );
    assert_eq!(doc["schema"], "mtuperf.path/1");
    (code, doc)
}

fn target(lab: &LabGuard, s: Scenario, v6: bool) -> String {
    if v6 { lab.target_v6(s) } else { lab.target(s) }
        .unwrap()
        .to_string()
}

#[test]
fn every_scenario_gets_its_exact_verdict_in_v4_and_v6() {
    let Some(lab) = lab(&Scenario::ALL, None) else {
        return;
    };
    for v6 in [false, true] {
        let ovh = if v6 { 48 } else { 28 };
        let router = if v6 {
            "fd6d:7475:0:3::254"
        } else {
            "198.18.3.254"
        };
        for s in Scenario::ALL {
            let (code, doc) = path(&lab, &[&target(&lab, s, v6)]);
            let a = &doc["agent"];
            let (fwd, rev) = (
                a["forward"]["largest_ok"].as_u64().unwrap(),
                a["reverse"]["largest_ok"].as_u64().unwrap(),
            );
            let text = doc["verdict"].as_str().unwrap();
            let ctx = format!("{s} v6={v6}: {doc:#}");
            match s {
                Scenario::Std | Scenario::Jumbo => {
                    let m = if s == Scenario::Std { 1500 } else { 9000 };
                    assert_eq!((code, fwd, rev), (0, m, m), "{ctx}");
                    assert_eq!(
                        text,
                        format!("carries MTU {m} end to end ({m} = {} + {ovh})", m - ovh),
                        "{ctx}"
                    );
                }
                Scenario::Routed => {
                    assert_eq!((code, fwd, rev), (1, 1500, 1500), "{ctx}");
                    assert_eq!(a["forward"]["limit"]["kind"], "icmp", "{ctx}");
                    assert_eq!(
                        text,
                        format!("limited to 1500 by hop {router} (ICMP frag-needed) (1500 = {} + {ovh})", 1500 - ovh),
                        "{ctx}"
                    );
                }
                Scenario::Blackhole => {
                    let hop_router = if v6 {
                        "fd6d:7475:0:4::254"
                    } else {
                        "198.18.4.254"
                    };
                    assert_eq!((code, fwd, rev), (1, 1500, 1500), "{ctx}");
                    assert_eq!(a["forward"]["limit"]["kind"], "silent", "{ctx}");
                    // TTL-limited probes name the router past which 1501 vanishes.
                    assert_eq!(a["verdict"]["hop"], format!("1 {hop_router}"), "{ctx}");
                    assert_eq!(a["black_hole_hop"]["last_addr"], hop_router, "{ctx}");
                    assert_eq!(a["black_hole_hop"]["at_ttl"], 2, "{ctx}");
                    assert!(
                        text.starts_with(&format!(
                            "black hole above 1500 after hop 1 {hop_router}: larger packets vanish past it, no ICMP"
                        )),
                        "{ctx}"
                    );
                    assert_eq!(a["tcp"]["hides_problem"], true, "{ctx}");
                }
                Scenario::Mismatch => {
                    // veth accepts up to 4 bytes over its MTU on receive (VLAN allowance):
                    // that slack is read as the peer's MTU, in the line and the verdict.
                    assert!(
                        (code, rev) == (1, 1500) && (1500..=1508).contains(&fwd),
                        "{ctx}"
                    );
                    assert_eq!(
                        (&a["forward_mtu"], &a["reverse_mtu"]),
                        (&Value::from(1500), &Value::from(1500)),
                        "{ctx}"
                    );
                    assert!(
                        text.starts_with(
                            "mismatch: local MTU 9000, peer accepts ≤ 1500 on the same segment"
                        ),
                        "{ctx}"
                    );
                    assert_eq!(a["tcp"]["hides_problem"], true, "{ctx}");
                }
                Scenario::Switchport => {
                    // Both NICs 9000, the bridge's port 1500: not "asymmetric", whatever
                    // slack each direction shows.
                    assert_eq!(code, 1, "{ctx}");
                    assert!((1500..=1508).contains(&fwd) && (1500..=1508).contains(&rev));
                    assert_eq!(
                        a["verdict"],
                        serde_json::json!({"kind": "switch_port", "mtu": 1500, "local_mtu": 9000, "peer_mtu": 9000}),
                        "{ctx}"
                    );
                    assert!(
                        text.starts_with(&format!(
                            "switch port: an L2 device between these two interfaces (a switch port, a bridge, a VLAN sub-interface) passes at most 1500; both NICs say 9000 (1500 = {} + {ovh})",
                            1500 - ovh
                        )),
                        "{ctx}"
                    );
                }
                Scenario::Asym => {
                    // Forward 9000; the return path's router answers too-big at 1500.
                    let back = if v6 {
                        "fd6d:7475:0:17::254"
                    } else {
                        "198.18.17.254"
                    };
                    assert_eq!((code, fwd, rev), (1, 9000, 1500), "{ctx}");
                    assert_eq!(a["reverse"]["limit"]["from"], back, "{ctx}");
                    assert_eq!(text, "asymmetric: forward 9000, reverse 1500", "{ctx}");
                }
                Scenario::Cluster => unreachable!("cluster is not in Scenario::ALL"),
            }
        }
    }
}

#[test]
fn expect_sets_the_exit_code_and_a_missing_agent_is_exit_2() {
    let Some(lab) = lab(&[Scenario::Routed], None) else {
        return;
    };
    let t = target(&lab, Scenario::Routed, false);
    assert_eq!(path(&lab, &[&t, "--expect", "1500"]).0, 0);
    assert_eq!(path(&lab, &[&t, "--expect", "1501"]).0, 1);
    let out = exec(
        &lab,
        "client",
        &[BIN, "--no-store", "path", &format!("{t}:7999")],
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn five_percent_loss_on_jumbo_still_carries_9000() {
    let Some(lab) = lab(&[Scenario::Jumbo], Some(5.0)) else {
        return;
    };
    for v6 in [false, true] {
        let (code, doc) = path(&lab, &[&target(&lab, Scenario::Jumbo, v6)]);
        assert_eq!(code, 0, "{doc:#}");
        assert_eq!(
            doc["agent"]["verdict"],
            serde_json::json!({"kind": "carries", "mtu": 9000})
        );
    }
}

/// Sends the client an ICMP frag-needed (MTU 1500) from the jumbo server about a UDP
/// flow of a socket the client holds open, so the kernel caches a real exception.
const PLANT: &str = r#"
import socket, struct, sys
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b)//2), b))
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff
client, server = sys.argv[1], sys.argv[2]
inner = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 9000, 0, 0x4000, 64, 17, 0,
                    socket.inet_aton(client), socket.inet_aton(server))
inner = inner[:10] + struct.pack("!H", csum(inner)) + inner[12:]
icmp = struct.pack("!BBHHH", 3, 4, 0, 0, 1500) + inner + struct.pack("!HHHH", 40000, 40001, 8972, 0)
icmp = icmp[:2] + struct.pack("!H", csum(icmp)) + icmp[4:]
socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP).sendto(icmp, (client, 0))
"#;
const HOLD: &str = "import socket,time; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('0.0.0.0',40000)); time.sleep(2)";

#[test]
fn a_stale_cached_pmtu_does_not_change_the_live_verdict_and_is_reported() {
    let Some(lab) = lab(&[Scenario::Jumbo], None) else {
        return;
    };
    let t = target(&lab, Scenario::Jumbo, false);
    let argv: Vec<String> = ["python3", "-c", HOLD]
        .iter()
        .map(|s| (*s).to_string())
        .collect();
    let mut hold = lab
        .exec_command("client", &argv)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        exec(&lab, "jumbo", &["python3", "-c", PLANT, "198.18.2.1", &t])
            .status
            .success()
    );
    hold.wait().unwrap();
    let route = String::from_utf8_lossy(&exec(&lab, "client", &["ip", "route", "get", &t]).stdout)
        .to_string();
    assert!(route.contains("mtu 1500"), "no exception planted: {route}");
    let (code, doc) = path(&lab, &[&t]);
    assert_eq!(code, 0, "{doc:#}");
    let a = &doc["agent"];
    assert_eq!(a["verdict"]["kind"], "carries");
    assert_eq!(a["forward"]["largest_ok"], 9000);
    assert_eq!(a["local"]["route"]["cached_pmtu"], 1500);
    let notes = a["notes"].to_string();
    assert!(
        notes.contains("stale: the kernel caches path MTU 1500"),
        "{notes}"
    );
}

#[test]
fn icmp_and_hops_on_routed_and_jumbo() {
    let Some(lab) = lab(&[Scenario::Routed, Scenario::Jumbo], None) else {
        return;
    };
    for v6 in [false, true] {
        let routed = target(&lab, Scenario::Routed, v6);
        let jumbo = target(&lab, Scenario::Jumbo, v6);
        let router = if v6 {
            "fd6d:7475:0:3::254"
        } else {
            "198.18.3.254"
        };
        let (code, doc) = path(&lab, &["--icmp", &routed]);
        assert_eq!(
            (code, &doc["icmp"]["both"]["largest_ok"]),
            (1, &Value::from(1500)),
            "{doc:#}"
        );
        assert_eq!(doc["icmp"]["both"]["limit"]["from"], router);
        let (code, doc) = path(&lab, &["--icmp", &jumbo]);
        assert_eq!(
            (code, &doc["icmp"]["both"]["largest_ok"]),
            (0, &Value::from(9000)),
            "{doc:#}"
        );
        let (code, doc) = path(&lab, &["--hops", &routed]);
        let h = &doc["hops"];
        assert_eq!((code, &h["path_mtu"]), (1, &Value::from(1500)), "{doc:#}");
        assert_eq!(h["hops"][0]["addr"], router);
        assert_eq!(h["hops"][0]["reports_mtu"], 1500);
        assert_eq!(h["hops"][1]["addr"], routed.as_str());
        assert_eq!(h["hops"][1]["destination"], true);
        let (code, doc) = path(&lab, &["--hops", &jumbo]);
        assert_eq!(
            (code, &doc["hops"]["path_mtu"]),
            (0, &Value::from(9000)),
            "{doc:#}"
        );
        assert_eq!(doc["hops"]["hops"].as_array().unwrap().len(), 1);
    }
}

/// Runs `mtuperf path ARGS` (text) in the client; returns (exit code, stdout).
fn path_text(lab: &LabGuard, args: &[&str]) -> (i32, String) {
    let out = exec(
        lab,
        "client",
        &[&[BIN, "--no-store", "path"][..], args].concat(),
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    // Not a terminal: no progress on stderr.
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap(), text)
}

fn line<'a>(text: &'a str, prefix: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix} line in:\n{text}"))
}

#[test]
fn text_lines_agree_with_the_verdict_on_mismatch_and_switchport() {
    let Some(lab) = lab(&[Scenario::Mismatch, Scenario::Switchport], None) else {
        return;
    };
    for v6 in [false, true] {
        let (code, text) = path_text(&lab, &[&target(&lab, Scenario::Mismatch, v6)]);
        assert_eq!(code, 1, "{text}");
        let fwd = line(&text, "forward:");
        assert!(
            fwd.starts_with("forward:  1500 passes") || fwd.starts_with("forward:  MTU 1500 ("),
            "{text}"
        );
        assert!(
            line(&text, "verdict:").contains("peer accepts ≤ 1500"),
            "{text}"
        );
        let (code, text) = path_text(&lab, &[&target(&lab, Scenario::Switchport, v6)]);
        assert_eq!(code, 1, "{text}");
        for dir in ["forward:", "reverse:"] {
            let l = line(&text, dir);
            assert!(
                l.contains(" 1500 passes") || l.contains("MTU 1500 ("),
                "{text}"
            );
        }
        let verdict = line(&text, "verdict:");
        assert!(
            verdict.contains("passes at most 1500; both NICs say 9000"),
            "{text}"
        );
        assert!(!verdict.contains("asymmetric"), "{text}");
    }
}

#[test]
fn hops_names_the_black_hole_hop_and_backs_off_in_under_8_s() {
    let Some(lab) = lab(&[Scenario::Blackhole], None) else {
        return;
    };
    // Twice per family back to back: the search spends few of the hosts' ICMP
    // rate-limit tokens (a burst of 6, then one a second), so a rerun still works.
    for v6 in [false, false, true, true] {
        let (router, server) = if v6 {
            ("fd6d:7475:0:4::254", "fd6d:7475:0:14::2")
        } else {
            ("198.18.4.254", "198.18.14.2")
        };
        let t0 = std::time::Instant::now();
        let (code, doc) = path(&lab, &["--hops", &target(&lab, Scenario::Blackhole, v6)]);
        // A deadline on the tool's own run in the lab, not a speed claim.
        let took = t0.elapsed();
        assert!(took < Duration::from_secs(8), "{took:?} {doc:#}");
        let h = &doc["hops"];
        assert_eq!((code, &h["path_mtu"]), (1, &Value::from(1500)), "{doc:#}");
        assert_eq!(h["black_hole"]["last_ttl"], 1, "{doc:#}");
        assert_eq!(h["black_hole"]["last_addr"], router, "{doc:#}");
        assert_eq!(
            (&h["black_hole"]["passes"], &h["black_hole"]["vanishes"]),
            (&Value::from(1500), &Value::from(1501)),
            "{doc:#}"
        );
        // Two hops, both answering: the router (large probe), the server (backed off).
        let hops = h["hops"].as_array().unwrap();
        assert_eq!(hops.len(), 2, "{doc:#}");
        assert_eq!(hops[0]["addr"], router);
        assert_eq!(hops[0]["probe_size"], 9000);
        assert_eq!(hops[1]["addr"], server);
        assert_eq!(hops[1]["destination"], true);
        assert_eq!(hops[1]["probe_size"], 1500);
        let verdict = doc["verdict"].as_str().unwrap();
        assert!(
            verdict.starts_with(&format!(
                "black hole after hop 1 {router}, the last hop that answers them"
            )),
            "{verdict}"
        );
    }
}
