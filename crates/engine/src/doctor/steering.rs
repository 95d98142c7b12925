//! Where each interconnect interface's receive work runs: its queue IRQs' affinity,
//! RPS/RFS, and whether irqbalance moves them. Information, never a failure: seed
//! 004's advice (a processor set for the block-serving processes, fenced from
//! interrupts) depends on the workload, and mtuperf can only say where things are.

use mtuperf_proto::msg::doctor::Steering;

use super::{Finding, FindingBuilder, HostFacts, Status};

/// The seed-004 advice, as the finding's reason.
const ADVICE: &str = "where the NIC's interrupts and the receive softirq run decides which CPUs the block-serving threads share with them; placing the block-serving (LMS) processes in a processor set fenced from interrupts gave up to 40% more throughput at 10 GbE in seed 004 (information, not a requirement: measure with rr --agent-cpu and compare --placement)";

/// Reads the live steering of `iface`.
pub(super) fn read(iface: &str) -> Steering {
    let (rps_cpus, rps_flow_cnt) = mtuperf_sys::affinity::rx_steering(iface)
        .into_iter()
        .unzip();
    Steering {
        irqs: mtuperf_sys::affinity::iface_irqs(iface),
        rps_cpus,
        rps_flow_cnt,
    }
}

fn describe(s: &Steering, facts: &HostFacts) -> String {
    let irqs = if s.irqs.is_empty() {
        "no queue IRQs found (veth, loopback and bridges have none: receive work runs where the sender's softirq does)"
            .to_string()
    } else {
        let v: Vec<String> = s
            .irqs
            .iter()
            .map(|i| format!("{} ({}) → CPU {}", i.irq, i.name, i.cpus))
            .collect();
        format!("queue IRQs {}", v.join(", "))
    };
    let rps_on = s
        .rps_cpus
        .iter()
        .filter(|m| !mtuperf_sys::affinity::mask_is_empty(m))
        .count();
    let rps = if s.rps_cpus.is_empty() {
        "RPS unknown (no rx queues listed)".to_string()
    } else if rps_on == 0 {
        format!("RPS off on all {} rx queues", s.rps_cpus.len())
    } else {
        format!(
            "RPS on {rps_on} of {} rx queues (masks {})",
            s.rps_cpus.len(),
            s.rps_cpus.join(" ")
        )
    };
    let rfs_queues = s.rps_flow_cnt.iter().filter(|&&c| c > 0).count();
    let rfs = match facts.rps_sock_flow_entries {
        Some(0) | None if rfs_queues == 0 => "RFS off".to_string(),
        Some(n) => format!("RFS {n} socket flow entries, {rfs_queues} queues with flow counts"),
        None => format!("RFS table unknown, {rfs_queues} queues with flow counts"),
    };
    let irqbalance = match facts.irqbalance {
        Some(true) => "irqbalance running (it may move the IRQs during a test)",
        Some(false) => "irqbalance not running",
        None => "irqbalance unknown",
    };
    format!("{irqs}; {rps}; {rfs}; {irqbalance}")
}

/// One finding per interface whose steering was read: PASS with the facts (none for
/// interfaces whose steering could not be read).
pub fn check(facts: &HostFacts) -> Vec<Finding> {
    facts
        .ifaces
        .iter()
        .filter_map(|f| {
            let s = f.steering.as_ref()?;
            Some(
                FindingBuilder::new("iface.irq_steering", &f.info.name)
                    .why(ADVICE)
                    .source("seed 004 (RAC Cache Fusion on T5440); kernel Documentation/networking/scaling.rst")
                    .status(Status::Pass)
                    .measured(describe(s, facts))
                    .expected("known placement; no fixed target")
                    .build(),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mtuperf_proto::placement::IrqAffinity;

    #[test]
    fn steering_is_information_with_the_facts_and_the_advice() {
        let s = Steering {
            irqs: vec![IrqAffinity {
                irq: 24,
                name: "eth0-TxRx-0".into(),
                cpus: "0-1".into(),
            }],
            rps_cpus: vec!["00000000".into(), "00000003".into()],
            rps_flow_cnt: vec![0, 0],
        };
        let facts = HostFacts {
            irqbalance: Some(true),
            rps_sock_flow_entries: Some(0),
            ..HostFacts::default()
        };
        let t = describe(&s, &facts);
        assert!(t.contains("24 (eth0-TxRx-0) → CPU 0-1"), "{t}");
        assert!(t.contains("RPS on 1 of 2 rx queues"), "{t}");
        assert!(
            t.contains("RFS off") && t.contains("irqbalance running"),
            "{t}"
        );
        let veth = describe(&Steering::default(), &HostFacts::default());
        assert!(veth.contains("no queue IRQs"), "{veth}");
        assert!(ADVICE.contains("40%") && ADVICE.contains("fenced from interrupts"));
    }
}
