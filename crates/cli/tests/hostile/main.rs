//! The agent and the CLI against hostile peers, hostile input and exhausted resources (real binary, loopback and lab).
//!
//! One test binary for these files (each a module): one link instead of one per file,
//! and their tests run side by side in one process.

#[path = "../support/lab_support/mod.rs"]
#[allow(dead_code)]
#[macro_use]
mod lab_support;
#[path = "../support/adversarial_lab_support/mod.rs"]
mod adversarial_lab_support;
#[path = "../support/adversarial_support/mod.rs"]
mod adversarial_support;
#[path = "../support/agent_support.rs"]
mod agent_support;

mod adversarial;
mod adversarial_doctor;
mod adversarial_hijack;
mod adversarial_keygen;
mod adversarial_lab;
mod adversarial_output;
mod adversarial_udp;
mod hostile_peer;
mod overload;
mod overload_metrics;
