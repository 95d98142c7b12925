//! Every kernel interface mtuperf reads: CPU times, interface facts and counters,
//! routes, offloads, IP/UDP/TCP counters, sysctls, host identity and socket options.
//! Text formats are parsed by pure functions tested against fixtures; the thin
//! readers around them only open files or make syscalls.

// This crate is the one audited place in the workspace where `unsafe` is allowed:
// ioctl, getsockopt/setsockopt, recvmsg, netlink and getifaddrs need raw libc calls.
// Every `unsafe` block carries a `// SAFETY:` comment explaining why it is sound.
#![allow(unsafe_code)]

pub mod cpu;
mod error;
pub mod ethtool;
#[doc(hidden)]
pub mod fuzz;
pub mod host;
pub mod limits;
pub mod netdev;
mod netlink;
pub mod route;
pub mod snmp;
pub mod sockopt;
pub mod sysctl;
pub mod thread;

pub use error::Error;
