//! The CLI against agents on loopback: every subcommand, its JSON and its history.
//! Driven in-process through the library (`support/inproc.rs`) wherever no process
//! boundary is under test; the agents, signals, closed pipes, the environment and
//! `--ssh` use the real binary (`support/agent_support.rs`).
//!
//! One test binary for these files (each a module): one link instead of one per file,
//! and their tests run side by side in one process.

#[path = "../support/lab_support/mod.rs"]
#[allow(dead_code)]
#[macro_use]
mod lab_support;
#[path = "../support/agent_support.rs"]
mod agent_support;
#[path = "../support/inproc.rs"]
mod inproc;
#[path = "../support/watch_support/mod.rs"]
mod watch_support;

mod agent_idle;
mod agent_json_log;
mod compare;
mod cpu_sources;
mod demo_loopback;
mod doctor_cli;
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
