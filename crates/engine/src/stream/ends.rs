//! What each end of a stream run spent: CPU, bytes, and its interface's counters.
//! Apart from `metrics` so the verdict, which `metrics` calls, reads it without
//! importing its caller.

use mtuperf_proto::host::Offloads;
use mtuperf_proto::msg::EndReport;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::End;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IfaceMetrics {
    pub name: String,
    pub mtu: u32,
    pub kind: String,
    pub tx_packets: u64,
    pub rx_packets: u64,
    pub tx_bytes: u64,
    pub rx_bytes: u64,
    pub errors: u64,
    pub drops: u64,
    pub frames_per_block: Option<f64>,
    pub avg_frame_bytes: Option<f64>,
    pub offloads: Offloads,
    /// Segmentation offloads are on: counters count super-packets, not wire frames.
    pub counts_super_packets: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EndMetrics {
    pub end: End,
    pub wall_s: f64,
    pub process_user_pct: f64,
    pub process_sys_pct: f64,
    /// Process user+sys as % of one core.
    pub process_pct: f64,
    pub system_user_pct: f64,
    pub system_sys_pct: f64,
    pub system_irq_pct: f64,
    pub system_softirq_pct: f64,
    /// System-wide busy time of all CPUs as % of one core.
    pub system_busy_pct: f64,
    pub ncpu: u32,
    pub bytes_moved: u64,
    pub service_demand_us_per_mib: Option<f64>,
    /// What the system-wide figures (`system_*_pct`, `service_demand_us_per_mib`)
    /// rest on: /proc/stat ticks counted, ± one tick per CPU.
    pub cpu_resolution: Option<crate::cpu_res::CpuResolution>,
    pub process_us_per_mib: Option<f64>,
    pub iface: Option<IfaceMetrics>,
}

/// The ends' CPU as the verdict and the advice weigh it: a polling receiver's
/// process time without its empty reads (they are CPU it spends by choice, not what
/// the transfer needs; the CPU table still shows the whole). Only when the run asked
/// for polling (`polled`), and an end's claim is held to what it can be: a
/// connection's empty reads are part of its time in reads, so they count at most
/// that (an agent's report is the agent's word).
pub(super) fn without_polling(
    ends: &[EndMetrics],
    polled: bool,
    client: &EndReport,
    agent: &EndReport,
) -> Vec<EndMetrics> {
    ends.iter()
        .map(|e| {
            let report = match e.end {
                End::Client => client,
                End::Agent => agent,
            };
            let empty_ns: u64 = if polled {
                report
                    .conns
                    .iter()
                    .map(|c| c.empty_ns.min(c.in_call_ns))
                    .sum()
            } else {
                0
            };
            let wall_ns = (e.wall_s * 1e9) as u64;
            let mut w = e.clone();
            w.process_pct =
                (e.process_pct - empty_ns as f64 * 100.0 / wall_ns.max(1) as f64).max(0.0);
            w
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::verdict::tests::end;
    use mtuperf_proto::msg::ConnReport;

    #[test]
    fn a_polling_receiver_is_weighed_without_its_empty_reads() {
        let ends = [
            end(End::Client, 98.0, 0.0, 0.0),
            end(End::Agent, 97.0, 0.0, 0.0),
        ];
        let reads = |empty_ns, in_call_ns| EndReport {
            conns: vec![ConnReport {
                empty_ns,
                in_call_ns,
                ..ConnReport::default()
            }],
            ..EndReport::default()
        };
        let none = EndReport::default();
        let agent = reads(410_000_000, 900_000_000);
        let w = without_polling(&ends, true, &none, &agent);
        // 0.41 s of empty reads in a 1 s wall: 41% of a core less.
        assert!((w[1].process_pct - 56.0).abs() < 1e-9, "{:?}", w[1]);
        assert!((w[0].process_pct - 98.0).abs() < 1e-9, "{:?}", w[0]);
        // A run that did not poll: whatever a report says, nothing is taken off.
        let w = without_polling(&ends, false, &none, &agent);
        assert!((w[1].process_pct - 97.0).abs() < 1e-9, "{:?}", w[1]);
        // A claim beyond the connection's own read time counts as that time.
        let w = without_polling(&ends, true, &none, &reads(900_000_000, 200_000_000));
        assert!((w[1].process_pct - 77.0).abs() < 1e-9, "{:?}", w[1]);
        // Never below zero.
        let all = without_polling(&ends, true, &none, &reads(5_000_000_000, u64::MAX));
        assert!(all[1].process_pct.abs() < 1e-9, "{:?}", all[1]);
    }
}
