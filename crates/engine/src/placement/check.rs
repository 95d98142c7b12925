//! Checks of asked CPU lists against the host's online CPUs and the agent's
//! processor set (`serve --cpus`).

use mtuperf_proto::placement::format_cpu_list;

/// The CPUs of `asked` that are not in `allowed`, formatted (`2-3`), or None.
fn outside(asked: &[u32], allowed: &[u32]) -> Option<String> {
    let out: Vec<u32> = asked
        .iter()
        .copied()
        .filter(|c| !allowed.contains(c))
        .collect();
    (!out.is_empty()).then(|| format_cpu_list(&out))
}

/// Checks a CPU list against the host's online CPUs; the error says which are not
/// online and which are.
pub fn check_cpus(asked: &[u32], online: &[u32]) -> Result<(), String> {
    match outside(asked, online) {
        Some(bad) => Err(format!(
            "CPU {bad} is not online on this host (online: {})",
            format_cpu_list(online)
        )),
        None => Ok(()),
    }
}

/// The agent's check of `--agent-cpu` against its processor set (`serve --cpus`,
/// None: every online CPU); the refusal names the limit and the allowed set.
pub fn check_agent_cpus(asked: &[u32], set: Option<&[u32]>, online: &[u32]) -> Result<(), String> {
    if asked.is_empty() {
        return Err("--agent-cpu: empty CPU list".into());
    }
    let (allowed, limit) = match set {
        Some(s) => (s, "the agent's processor set (serve --cpus)"),
        None => (online, "the agent host's online CPUs"),
    };
    match outside(asked, allowed) {
        Some(bad) => Err(format!(
            "--agent-cpu {}: CPU {bad} is outside {limit} {}; ask for CPUs in {}",
            format_cpu_list(asked),
            format_cpu_list(allowed),
            format_cpu_list(allowed)
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpus_outside_the_set_are_named_with_the_limit() {
        assert_eq!(check_agent_cpus(&[0], Some(&[0]), &[0, 1]), Ok(()));
        let e = check_agent_cpus(&[1], Some(&[0]), &[0, 1]).unwrap_err();
        assert!(e.contains("CPU 1 is outside"), "{e}");
        assert!(e.contains("serve --cpus"), "{e}");
        let e = check_agent_cpus(&[0, 5], None, &[0, 1]).unwrap_err();
        assert!(e.contains("CPU 5") && e.contains("online CPUs 0-1"), "{e}");
        assert!(check_agent_cpus(&[], None, &[0]).is_err());
        assert_eq!(check_cpus(&[1], &[0, 1]), Ok(()));
        let e = check_cpus(&[2, 3], &[0, 1]).unwrap_err();
        assert!(e.contains("CPU 2-3") && e.contains("online: 0-1"), "{e}");
    }
}
