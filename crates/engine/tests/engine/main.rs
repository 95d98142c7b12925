//! The engine driven in-process: clients, agents and mesh on loopback, fake agents, deadlines.
//!
//! One test binary for these files (each a module): one link instead of one per file,
//! and their tests run side by side in one process.

#[path = "../support/fake_agent/mod.rs"]
#[allow(dead_code)]
mod fake_agent;
#[path = "../support/test_agent/mod.rs"]
mod test_agent;

mod agent_dispatch;
mod deadlines;
mod mesh_faults;
mod mesh_loopback;
mod rr_bidir;
mod rr_from_loopback;
mod rr_loopback;
mod stream_loopback;
mod udp_stream_io_loopback;
mod udp_stream_loopback;
mod watch_cycle;
