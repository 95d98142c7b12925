//! End-to-end tests in the project's own lab of network namespaces (root; each test skips with its reason otherwise).
//!
//! One test binary for these files (each a module): one link instead of one per file,
//! and their tests run side by side in one process.

#[path = "../support/lab_support/mod.rs"]
#[allow(dead_code)]
#[macro_use]
mod lab_support;
#[path = "../support/agent_support.rs"]
mod agent_support;
#[path = "../support/deadline_lab_support/mod.rs"]
mod deadline_lab_support;
#[path = "../support/watch_support/mod.rs"]
mod watch_support;

mod cluster_lab;
mod compare_lab;
mod deadline_lab;
mod demo_cluster_lab;
mod demo_placement_lab;
mod diagnosis_lab;
mod doctor_lab;
mod fresh_machine_lab;
mod lab;
mod lab_exec_signals;
mod mesh_faults_lab;
mod mesh_lab;
mod mesh_rac_lab;
mod mesh_silent_lab;
mod mesh_ssh_lab;
mod placement_lab;
mod rr_from_lab;
mod rr_lab;
mod stream_lab;
mod stream_udp_io_lab;
mod stream_udp_lab;
mod truth_lab;
mod watch_lab;
mod watch_rac_lab;
