//! The finer CPU sources on loopback: the tool's own threads' schedstat runtime (ns)
//! agrees with their getrusage RUSAGE_THREAD time, and every placement carries the
//! per-CPU softirq time with its tick and uncertainty.

use crate::agent_support;

use crate::inproc::{json_in, mtuperf_in};
use agent_support::AgentProc;

#[test]
fn rr_threads_schedstat_agrees_with_rusage_thread_and_softirq_time_is_recorded() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let doc = json_in(mtuperf_in(&dir.path().join("h.db")).args([
        "--no-store",
        "rr",
        &agent.target(),
        "--time",
        "1s",
        "--json",
    ]));
    let r = &doc["steps"][0]["result"];
    for end in ["client", "agent"] {
        let cpu = &r[end]["cpu"];
        let sched = cpu["sched_ns"]
            .as_u64()
            .unwrap_or_else(|| panic!("{end}: {cpu}"));
        let ru = cpu["user_ns"].as_u64().unwrap() + cpu["system_ns"].as_u64().unwrap();
        assert!(sched > 0 && ru > 0, "{end}: {cpu}");
        // Both are the scheduler's runtime, read back to back at each thread's end;
        // getrusage rounds each thread to µs. 5% or 2 ms per thread.
        let threads = cpu["threads"].as_u64().unwrap();
        let tol = (ru / 20).max(2_000_000 * threads);
        assert!(
            sched.abs_diff(ru) <= tol,
            "{end}: schedstat {sched} ns vs rusage {ru} ns"
        );
        let s = &r[end]["placement"]["softirq"];
        assert_eq!(s["tick_ns"], 10_000_000, "{end}: {s}");
        assert_eq!(s["plus_minus_ticks_per_cpu"], 1, "{end}: {s}");
        assert!(s["per_cpu"].is_array(), "{end}: {s}");
    }
    let text = include_str!("../../../../schemas/rr.schema.json");
    let v: serde_json::Value = serde_json::from_str(text).unwrap();
    let schema = jsonschema::validator_for(&v).unwrap();
    let errors: Vec<String> = schema.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
}
