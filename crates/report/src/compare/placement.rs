//! Placement per path in a comparison: how many of each path's repetitions (rr,
//! stream, UDP stream) ran
//! with both ends on one CPU or across CPUs, and a warning when the paths differ
//! (a latency difference may then come from placement, not from the path).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::RepRow;
use mtuperf_engine::compare::Plan;

/// One path's repetitions by placement.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PathPlacement {
    pub path: String,
    /// Repetitions with a recorded placement (every test).
    pub repetitions: u32,
    /// Of those: both ends' threads mostly on the same CPU (one host).
    pub shared_cpu: u32,
    /// Of those: on different CPUs of one host.
    pub cross_cpu: u32,
    /// CPUs the client's and the agent's test threads were seen on, over all of them.
    pub client_cpus: Vec<u32>,
    pub agent_cpus: Vec<u32>,
}

/// Per path, in plan order; empty when no repetition recorded a placement.
pub fn per_path(plan: &Plan, runs: &[RepRow]) -> Vec<PathPlacement> {
    let mut out = Vec::new();
    for p in &plan.paths {
        let mut pp = PathPlacement {
            path: p.name.clone(),
            ..PathPlacement::default()
        };
        for s in runs
            .iter()
            .filter(|r| r.path == p.name)
            .filter_map(|r| r.placement.as_ref())
        {
            pp.repetitions += 1;
            match s.shared_cpu {
                Some(true) => pp.shared_cpu += 1,
                Some(false) => pp.cross_cpu += 1,
                None => {}
            }
            pp.client_cpus.extend(&s.client_cpus);
            pp.agent_cpus.extend(&s.agent_cpus);
        }
        for v in [&mut pp.client_cpus, &mut pp.agent_cpus] {
            v.sort_unstable();
            v.dedup();
        }
        if pp.repetitions > 0 {
            out.push(pp);
        }
    }
    out
}

/// "std ran cross-CPU in 7/10 repetitions, jumbo in 2/10: latency differences may
/// come from placement", when the paths' cross-CPU shares differ by more than 10
/// percentage points; None when they agree (or there is one path).
pub fn warning(per: &[PathPlacement]) -> Option<String> {
    let share = |p: &PathPlacement| f64::from(p.cross_cpu) / f64::from(p.repetitions.max(1));
    let lo = per.iter().map(share).fold(f64::INFINITY, f64::min);
    let hi = per.iter().map(share).fold(f64::NEG_INFINITY, f64::max);
    if per.len() < 2 || hi - lo <= 0.1 {
        return None;
    }
    let parts: Vec<String> = per
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if i == 0 {
                format!(
                    "{} ran cross-CPU in {}/{} repetitions",
                    p.path, p.cross_cpu, p.repetitions
                )
            } else {
                format!("{} in {}/{}", p.path, p.cross_cpu, p.repetitions)
            }
        })
        .collect();
    Some(format!(
        "{}: latency and throughput differences may come from placement (compare --placement same or split fixes it)",
        parts.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pp(path: &str, cross: u32, n: u32) -> PathPlacement {
        PathPlacement {
            path: path.into(),
            repetitions: n,
            cross_cpu: cross,
            shared_cpu: n - cross,
            ..PathPlacement::default()
        }
    }

    #[test]
    fn paths_that_differ_in_placement_are_named_with_their_counts() {
        let w = warning(&[pp("std", 7, 10), pp("jumbo", 2, 10)]).unwrap();
        assert!(
            w.starts_with("std ran cross-CPU in 7/10 repetitions, jumbo in 2/10: latency and throughput differences may come from placement"),
            "{w}"
        );
        assert_eq!(warning(&[pp("std", 5, 10), pp("jumbo", 5, 10)]), None);
        assert_eq!(warning(&[pp("std", 5, 10)]), None);
    }
}
