//! The agent and the CLI against hostile peers, hostile input and exhausted resources
//! (real binary, loopback and lab). Modules of the `cli` test binary.

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
