//! Every kernel interface mtuperf reads: CPU times, interface facts and counters,
//! routes, offloads, IP/UDP/TCP counters, sysctls, host identity and socket options;
//! and the few it writes for the lab: network namespaces ([`netns`]), links, addresses
//! and routes ([`rtnl`]) and offload settings ([`ethtool`]).
//! Text formats are parsed by pure functions tested against fixtures; the thin
//! readers around them only open files or make syscalls.

// This crate is the one audited place in the workspace where `unsafe` is allowed:
// ioctl, getsockopt/setsockopt, recvmsg, netlink and getifaddrs need raw libc calls,
// and entering a namespace in a child before exec needs `pre_exec`.
// Every `unsafe` block carries a `// SAFETY:` comment explaining why it is sound.
#![allow(unsafe_code)]

pub mod affinity;
pub mod cpu;
mod error;
pub mod ethtool;
#[doc(hidden)]
pub mod fuzz;
pub mod host;
pub mod limits;
pub mod netdev;
mod netlink;
pub mod netns;
pub mod route;
pub mod rtnl;
pub mod snmp;
pub mod sock;
pub mod sockopt;
pub mod sysctl;
pub mod thread;

pub use error::Error;
