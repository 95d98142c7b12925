//! CPU placement in lab namespaces (root): rr with the client and the agent pinned to
//! the same CPU, then to different CPUs. Both placements must be recorded in the JSON
//! as sampled (not just as asked), and the cross-CPU runs' median p50 must be higher.
//! The machine running the tests is loaded (other builds): each placement runs
//! several times, alternating, and medians are compared; no absolute value is asserted.

use crate::lab_support;

use lab_support::{text, TestLab, BIN};

const JUMBO: &str = "198.18.2.2";
const REPS: usize = 5;

fn rr(lab: &TestLab, cpu: &str, agent_cpu: &str) -> serde_json::Value {
    let out = lab.exec(
        "client",
        &[
            BIN,
            "--no-store",
            "rr",
            JUMBO,
            "--time",
            "1s",
            "--workers",
            "1",
            "--cpu",
            cpu,
            "--agent-cpu",
            agent_cpu,
            "--json",
        ],
    );
    assert!(out.status.success(), "rr: {}", text(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

/// Checks one step's recorded placement; returns its p50 (ns).
fn recorded(doc: &serde_json::Value, client: u64, agent: u64, shared: bool) -> u64 {
    let s = &doc["steps"][0];
    let ends = [
        ("client", &s["result"]["client"]["placement"], client),
        ("agent", &s["result"]["agent"]["placement"], agent),
    ];
    for (end, p, cpu) in ends {
        assert_eq!(p["pinned"], serde_json::json!([cpu]), "{end}: {p}");
        let threads = p["threads"].as_array().unwrap();
        assert!(!threads.is_empty(), "{end}: no thread recorded: {p}");
        for t in threads {
            // Sampled: every sample of every thread saw the pinned CPU.
            let cpus = t["cpus"].as_array().unwrap();
            assert!(!cpus.is_empty(), "{end}: thread never sampled: {p}");
            assert!(cpus.iter().all(|c| c[0] == cpu), "{end}: {p}");
        }
    }
    let sum = &s["placement"];
    assert_eq!(sum["same_host"], true, "{sum}");
    assert_eq!(sum["shared_cpu"], shared, "{sum}");
    s["result"]["client"]["latency"]["p50"].as_u64().unwrap()
}

#[test]
fn lab_same_cpu_then_different_cpus_both_recorded_and_cross_cpu_is_slower() {
    require_lab!(false);
    if mtuperf_sys::affinity::online_cpus().len() < 2 {
        eprintln!("skipping: needs two online CPUs");
        return;
    }
    let lab = TestLab::up(&["--scenario", "jumbo", "--offload", "off"]);
    let out = lab_support::mtuperf(&["lab", "serve", "--name", &lab.name]);
    assert!(out.status.success(), "lab serve: {}", text(&out));
    let (mut same, mut split) = (Vec::new(), Vec::new());
    for _ in 0..REPS {
        same.push(recorded(&rr(&lab, "0", "0"), 0, 0, true));
        split.push(recorded(&rr(&lab, "0", "1"), 0, 1, false));
    }
    let (same_p50, split_p50) = (median(same.clone()), median(split.clone()));
    assert!(
        split_p50 > same_p50,
        "median p50 cross-CPU {split_p50} ns not above same-CPU {same_p50} ns (same {same:?}, split {split:?})"
    );
}
