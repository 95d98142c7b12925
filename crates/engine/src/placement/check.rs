//! Checks of asked CPU lists against the host's online CPUs and the agent's
//! processor set (`serve --cpus`).

use mtuperf_proto::msg::{CpuLimit, Refusal};
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

/// The agent's check of a request's CPU list against its processor set (`serve
/// --cpus`, None: every online CPU): the refusal carries the CPUs asked and allowed
/// and which limit it is (its words are the refusal's).
pub fn check_agent_cpus(asked: &[u32], set: Option<&[u32]>, online: &[u32]) -> Result<(), Refusal> {
    let (allowed, limit) = match set {
        Some(s) => (s, CpuLimit::ProcessorSet),
        None => (online, CpuLimit::Online),
    };
    if asked.is_empty() || outside(asked, allowed).is_some() {
        return Err(Refusal::AgentCpus {
            asked: asked.to_vec(),
            allowed: allowed.to_vec(),
            limit,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpus_outside_the_set_are_refused_with_the_limit() {
        assert_eq!(check_agent_cpus(&[0], Some(&[0]), &[0, 1]), Ok(()));
        let refused = |asked: &[u32], allowed: &[u32], limit| {
            Err(Refusal::AgentCpus {
                asked: asked.to_vec(),
                allowed: allowed.to_vec(),
                limit,
            })
        };
        assert_eq!(
            check_agent_cpus(&[1], Some(&[0]), &[0, 1]),
            refused(&[1], &[0], CpuLimit::ProcessorSet)
        );
        let e = check_agent_cpus(&[0, 5], None, &[0, 1]);
        assert_eq!(e, refused(&[0, 5], &[0, 1], CpuLimit::Online));
        // Their words are report's (`mtuperf_report::refusal`, its table test).
        assert_eq!(
            check_agent_cpus(&[], None, &[0]),
            refused(&[], &[0], CpuLimit::Online)
        );
        assert_eq!(check_cpus(&[1], &[0, 1]), Ok(()));
        let e = check_cpus(&[2, 3], &[0, 1]).unwrap_err();
        assert!(e.contains("CPU 2-3") && e.contains("online: 0-1"), "{e}");
    }
}
