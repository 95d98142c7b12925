//! End-to-end tests in the project's own lab of network namespaces (root; each test
//! skips with its reason otherwise). Modules of the `cli` test binary.

mod cluster_lab;
mod compare_lab;
mod deadline_lab;
mod demo_cluster_lab;
mod demo_placement_lab;
mod diagnosis_lab;
mod doctor_lab;
mod fresh_machine_lab;
mod lab_command;
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
