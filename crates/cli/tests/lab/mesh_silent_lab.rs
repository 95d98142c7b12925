//! A silent direction's search is bounded by the pair's round trip (issue 33): each
//! probe waits `max(4 × RTT + 2 ms, 20 ms)` (at most 1 s), never a fixed timeout,
//! and a silent search loses at most one probe per bisection step plus the final
//! attempts at one byte more. Asserted on the probes counted and the waits the
//! summaries record, never on wall-clock speed. Real namespaces (root needed;
//! otherwise the test prints why and passes).
use crate::lab_support;

use lab_support::{mtuperf, text, TestLab};

/// Attempts at one byte more than a silent direction's answer
/// (`engine::path::search::ATTEMPTS`).
const ATTEMPTS: u64 = 3;

/// The wait a probe gets on a pair whose round trip is `rtt_us`
/// (`engine::path::wait::bound`), µs.
fn bound(rtt_us: u64) -> u64 {
    (4 * rtt_us + 2_000).clamp(20_000, 1_000_000)
}

/// Bisection steps between IPv4's base size (576) and `top`: one per halving of the
/// range, and the first probe at `top`.
fn steps(top: u64) -> u64 {
    u64::from((top - 576 + 1).next_power_of_two().trailing_zeros()) + 1
}

/// Every direction of every pair in `doc` (a mesh document): a silent one lost at
/// most `steps + ATTEMPTS` probes, each waiting at most the bound of the round trip
/// it recorded, so its silent time is at most `(steps + ATTEMPTS) × bound(rtt)`; a
/// direction that reached its top passed at once (the base, then the top, no
/// confirmation of a size that passed). Returns the number of silent directions.
pub fn assert_searches_bounded(doc: &serde_json::Value) -> usize {
    let mut silent = 0;
    for p in doc["pairs"].as_array().expect("pairs") {
        for d in ["forward", "reverse"] {
            let s = &p["path"][d];
            let num = |k: &str| s[k].as_u64().unwrap_or_else(|| panic!("{k}: {p}"));
            let (lost, probes, rtt, wait) =
                (num("lost"), num("probes"), num("rtt_us"), num("wait_us"));
            // Within the rounding of the round trip to whole µs (× 4).
            assert!(
                wait.abs_diff(bound(rtt)) < 4,
                "the wait follows the round trip: {p}"
            );
            match s["stop"].as_str() {
                Some("silent") => {
                    silent += 1;
                    let most = steps(9000) + ATTEMPTS;
                    assert!(lost <= most, "{lost} probes lost, at most {most}: {p}");
                    // A lost steering size is followed by one control probe (two
                    // between the final attempts), and each passing size costs one.
                    assert!(
                        probes <= 2 * most + 1,
                        "{probes} probes, at most {}: {p}",
                        2 * most + 1
                    );
                    assert!(lost * wait <= most * (bound(rtt) + 4), "{p}");
                }
                Some("top") if lost == 0 => assert_eq!(probes, 2, "{p}"),
                _ => {}
            }
        }
    }
    silent
}

/// Four nodes on two networks, net2's switch port toward n3 at 1500 (the agents are
/// asked on net1): every path through n3 on net2 is silent both ways above 1500 (12
/// directions), the rest carry 9000 at once.
/// Each silent search stays within its round-trip bound, and the answer is the one
/// the search always gave: a switch port at n3, 1500 both ways.
#[test]
fn a_silent_directions_search_is_bounded_by_the_pairs_round_trip() {
    require_lab!(false);
    let lab = TestLab::up(&[
        "--scenario",
        "cluster",
        "--nodes",
        "4",
        "--nets",
        "2",
        "--fault",
        "port-mtu=n3:2:1500",
    ]);
    let serve = mtuperf(&["lab", "serve", "--name", &lab.name]);
    assert!(serve.status.success(), "lab serve: {}", text(&serve));
    let mut argv = vec![
        lab_support::BIN,
        "--no-store",
        "mesh",
        "--json",
        "--net",
        "198.19.0.0/16",
    ];
    let nodes: Vec<String> = (1..=4).map(|i| format!("n{i}=198.19.1.{i}")).collect();
    argv.extend(nodes.iter().map(String::as_str));
    let out = lab.exec("n1", &argv);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("mesh JSON");
    assert_eq!(assert_searches_bounded(&doc), 12);
    for p in doc["pairs"].as_array().unwrap() {
        let through = p["net"] == 1 && (p["from"] == 2 || p["to"] == 2);
        for d in ["forward", "reverse"] {
            let want = if through { 1500 } else { 9000 };
            assert_eq!(p["path"][d]["mtu"], want, "{p}");
        }
    }
    let findings = doc["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0]["diagnosis"]["class"], "switch_port");
    assert_eq!(
        (&findings[0]["node"], &findings[0]["net"]),
        (&2.into(), &1.into())
    );
}
