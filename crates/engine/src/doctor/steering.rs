//! Where each interconnect interface's receive work runs: its queue IRQs' affinity,
//! RPS/RFS, and whether irqbalance moves them. Information, never a failure: seed
//! 004's advice (a processor set for the block-serving processes, fenced from
//! interrupts) depends on the workload, and mtuperf can only say where things are.

use mtuperf_proto::msg::doctor::Steering;

use super::finding::finding;
use super::{Check, Finding, HostFacts, Status};

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

/// One finding per interface whose steering was read: PASS with the facts (none for
/// interfaces whose steering could not be read).
pub fn check(facts: &HostFacts) -> Vec<Finding> {
    facts
        .ifaces
        .iter()
        .filter_map(|f| {
            let s = f.steering.as_ref()?;
            let rps_queues_on = s
                .rps_cpus
                .iter()
                .filter(|m| !mtuperf_sys::affinity::mask_is_empty(m))
                .count();
            Some(finding(
                "iface.irq_steering",
                &f.info.name,
                Status::Pass,
                Check::IrqSteering {
                    steering: s.clone(),
                    rps_queues_on,
                    rps_sock_flow_entries: facts.rps_sock_flow_entries,
                    irqbalance: facts.irqbalance,
                },
                None,
            ))
        })
        .collect()
}
