//! The CLI against agents on loopback: every subcommand, its JSON and its history.
//! Driven in-process through the library (`support/inproc.rs`) wherever no process
//! boundary is under test; the agents, signals, closed pipes, the environment and
//! `--ssh` use the real binary (`support/agent_support.rs`).
//!
//! One test binary for these files (each a module), the hostile ones (`hostile::`) and
//! the lab's (`lab::`): one link, and one pool of test threads, so the lab tests that
//! wait on real deadlines overlap the CPU-bound ones instead of running after them.
//! Only `calm` (tests that need the machine to themselves) is a binary of its own.

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
#[path = "../support/deadline_lab_support/mod.rs"]
mod deadline_lab_support;
#[path = "../support/inproc.rs"]
mod inproc;
#[path = "../support/watch_support/mod.rs"]
mod watch_support;

mod agent_idle;
mod agent_json_log;
mod agent_log;
mod compare;
mod cpu_sources;
mod demo_loopback;
mod doctor_cli;
mod engine_flags;
mod fn_budget;
mod format_axis;
mod json_errors;
mod library;
mod messages;
mod packaging;
mod path;
mod path_loopback;
mod placement;
mod placement_stream;
mod records;
mod records_compare;
mod report;
mod report_browser;
mod rr;
mod rr_from;
mod series;
mod ssh_loopback;
mod stream;
mod stream_udp;
mod watch;
mod watch_names;

#[path = "../hostile/mod.rs"]
mod hostile;
#[path = "../lab/mod.rs"]
mod lab;
