//! What each end of a stream run spent: CPU, bytes, and its interface's counters.
//! Apart from `metrics` so the verdict, which `metrics` calls, reads it without
//! importing its caller.

use mtuperf_proto::host::Offloads;
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
