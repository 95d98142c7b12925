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
        serde_json::from_str(include_str!("../../../../schemas/path.schema.json")).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    assert!(
        v.is_valid(&doc),
        "{:?}",
        v.iter_errors(&doc)
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
    );
    assert_eq!(doc["schema"], "mtuperf.path/4");
    (code, doc)
}

fn target(lab: &LabGuard, s: Scenario, v6: bool) -> String {
    if v6 { lab.target_v6(s) } else { lab.target(s) }
        .unwrap()
        .to_string()
}

/// The fault `path` names, as a JSON value: its class, its numbers, where.
fn fault(class: &str, extra: Value, at: Value) -> Value {
    let mut f = serde_json::json!({"class": class, "at": at, "mtu": 1500, "expect": 9000});
    for (k, v) in extra.as_object().unwrap() {
        f[k] = v.clone();
    }
    f
}

#[test]
fn every_scenario_gets_its_exact_verdict_in_v4_and_v6() {
    let Some(lab) = lab(&Scenario::ALL, None) else {
        return;
    };
    for v6 in [false, true] {
        let ovh = if v6 { 48 } else { 28 };
        let ip = |net: u8, host: u8| {
            if v6 {
                format!("fd6d:7475:0:{net}::{host}")
            } else {
                format!("198.18.{net}.{host}")
            }
        };
        for s in Scenario::ALL {
            let (code, doc) = path(&lab, &[&target(&lab, s, v6)]);
            let a = &doc["agent"];
            let (fwd, rev) = (
                a["forward"]["largest_ok"].as_u64().unwrap(),
                a["reverse"]["largest_ok"].as_u64().unwrap(),
            );
            let faults = &a["faults"];
            let ctx = format!("{s} v6={v6}: {doc:#}");
            let router = |r: String| serde_json::json!({"kind": "router", "addr": r});
            match s {
                Scenario::Std | Scenario::Jumbo => {
                    let m = if s == Scenario::Std { 1500 } else { 9000 };
                    assert_eq!((code, fwd, rev), (0, m, m), "{ctx}");
                    assert_eq!(faults, &serde_json::json!([]), "{ctx}");
                    assert_eq!(a["expect"], m, "{ctx}");
                    let (_, text) = path_text(&lab, &[&target(&lab, s, v6)]);
                    assert!(
                        text.contains(&format!(
                            "verdict:  carries MTU {m} end to end, both ways ({m} = {} + {ovh})",
                            m - ovh
                        )),
                        "{text}"
                    );
                }
                Scenario::Routed => {
                    assert_eq!((code, fwd, rev), (1, 1500, 1500), "{ctx}");
                    assert_eq!(a["forward"]["limit"]["kind"], "icmp", "{ctx}");
                    let want = fault(
                        "router_mtu",
                        serde_json::json!({"hop": null}),
                        router(ip(3, 254)),
                    );
                    assert_eq!(faults, &serde_json::json!([want]), "{ctx}");
                }
                Scenario::Blackhole => {
                    assert_eq!((code, fwd, rev), (1, 1500, 1500), "{ctx}");
                    assert_eq!(a["forward"]["limit"]["kind"], "silent", "{ctx}");
                    // TTL-limited probes name the router past which 1501 vanishes.
                    let want = fault(
                        "black_hole",
                        serde_json::json!({"hop": 1}),
                        router(ip(4, 254)),
                    );
                    assert_eq!(faults, &serde_json::json!([want]), "{ctx}");
                    assert_eq!(a["black_hole_hop"]["last_addr"], ip(4, 254), "{ctx}");
                    assert_eq!(a["black_hole_hop"]["at_ttl"], 2, "{ctx}");
                    assert_eq!(a["first_router"], ip(4, 254), "{ctx}");
                    assert_eq!(a["tcp"]["hides_problem"], true, "{ctx}");
                }
                Scenario::Mismatch => {
                    // veth accepts up to 4 bytes over its MTU on receive (VLAN allowance):
                    // that slack is read as the peer's MTU. The fault is the peer's NIC,
                    // below the network's 9000 (never "set this host to 1500").
                    assert!(
                        (code, rev) == (1, 1500) && (1500..=1508).contains(&fwd),
                        "{ctx}"
                    );
                    assert_eq!(
                        (&a["forward_mtu"], &a["reverse_mtu"]),
                        (&Value::from(1500), &Value::from(1500)),
                        "{ctx}"
                    );
                    let at = serde_json::json!({"kind": "node", "addr": ip(5, 2)});
                    let want = fault(
                        "nic_mtu",
                        serde_json::json!({"iface": "eth0", "nic_mtu": 1500}),
                        at,
                    );
                    assert_eq!(faults, &serde_json::json!([want]), "{ctx}");
                    assert_eq!(a["first_router"], Value::Null, "{ctx}");
                    assert_eq!(a["tcp"]["hides_problem"], true, "{ctx}");
                }
                Scenario::Switchport => {
                    // Both NICs 9000, the bridge's port 1500: not "asymmetric", whatever
                    // slack each direction shows; one pair cannot tell which port.
                    assert_eq!(code, 1, "{ctx}");
                    assert!((1500..=1508).contains(&fwd) && (1500..=1508).contains(&rev));
                    let at = serde_json::json!({"kind": "segment", "a": ip(6, 1), "b": ip(6, 2)});
                    let want = fault("switch_port", serde_json::json!({"nic_mtu": 9000}), at);
                    assert_eq!(faults, &serde_json::json!([want]), "{ctx}");
                }
                Scenario::Asym => {
                    // Forward 9000; the return path's router answers too-big at 1500.
                    assert_eq!((code, fwd, rev), (1, 9000, 1500), "{ctx}");
                    assert_eq!(a["reverse"]["limit"]["from"], ip(17, 254), "{ctx}");
                    let want = fault(
                        "router_mtu",
                        serde_json::json!({"hop": null}),
                        router(ip(17, 254)),
                    );
                    assert_eq!(faults, &serde_json::json!([want]), "{ctx}");
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
        assert_eq!(doc["agent"]["faults"], serde_json::json!([]), "{doc:#}");
        assert_eq!(doc["agent"]["forward_mtu"], 9000, "{doc:#}");
        assert_eq!(doc["agent"]["reverse_mtu"], 9000, "{doc:#}");
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
const HOLD: &str = "import socket,time; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('0.0.0.0',40000)); time.sleep(5)";

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
    // The kernel records the ICMP's path MTU only for a bound socket: wait until
    // the holder has bound (python can take seconds to start on a loaded host).
    let bound = (0..100).any(|_| {
        let ss = exec(&lab, "client", &["ss", "-Hlun", "sport = :40000"]);
        let up = !String::from_utf8_lossy(&ss.stdout).trim().is_empty();
        if !up {
            std::thread::sleep(Duration::from_millis(100));
        }
        up
    });
    assert!(bound, "the UDP holder never bound port 40000");
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
    assert_eq!(a["faults"], serde_json::json!([]));
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
        let server = target(&lab, Scenario::Mismatch, v6);
        let (code, text) = path_text(&lab, &[&server]);
        assert_eq!(code, 1, "{text}");
        let fwd = line(&text, "forward:");
        assert!(
            fwd.starts_with("forward:  1500 passes") || fwd.starts_with("forward:  MTU 1500 ("),
            "{text}"
        );
        assert_eq!(
            line(&text, "verdict:"),
            format!("verdict:  NIC eth0 of the agent's host {server} is at MTU 1500, below the network's 9000: paths through it carry 1500"),
            "{text}"
        );
        // The fix raises the small side toward the network's MTU.
        assert!(
            line(&text, "fix:").starts_with(&format!(
                "fix:      ip link set dev eth0 mtu 9000 on the agent's host {server}"
            )),
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
            verdict.contains(
                "stop above 1500, silently, while both NICs say 9000: an L2 device between them"
            ),
            "{text}"
        );
        assert!(!verdict.contains("asymmetric"), "{text}");
    }
}

#[test]
fn hops_names_the_black_hole_hop_and_backs_off_in_under_15_s() {
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
        // A deadline on the tool's own run in the lab (the walk, then the agent's
        // path check toward the same server), not a speed claim. Probe waits follow
        // the slowest answer seen (a late answer must not pass for a lost one), so on
        // a host loaded enough to hold one answer for tens of milliseconds on a veth
        // every later lost probe waits longer: then the bound is what those waits
        // allow, and the run must still end well inside the pair's deadline.
        let took = t0.elapsed();
        let slowest_ms = doc["hops"]["agent"]["forward"]["rtt_us"]
            .as_u64()
            .unwrap_or(0)
            / 1000;
        let bound = if slowest_ms < 10 { 15 } else { 60 };
        assert!(
            took < Duration::from_secs(bound),
            "{took:?} (slowest answer {slowest_ms} ms) {doc:#}"
        );
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
        // The walk and the agent's check name the same fault.
        let want = fault(
            "black_hole",
            serde_json::json!({"hop": 1}),
            serde_json::json!({"kind": "router", "addr": router}),
        );
        assert_eq!(h["faults"], serde_json::json!([want]), "{doc:#}");
        assert_eq!(h["agent"]["faults"], h["faults"], "{doc:#}");
    }
}
