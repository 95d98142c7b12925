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

/// Fixtures the crate's unit tests share.
#[cfg(test)]
pub(crate) mod testing {
    use std::net::UdpSocket;
    use std::time::Duration;

    /// Two loopback UDP sockets: (tx, connected to rx; rx, reads time out in 500 ms).
    pub fn udp_pair() -> (UdpSocket, UdpSocket) {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        tx.connect(rx.local_addr().unwrap()).unwrap();
        rx.set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        (tx, rx)
    }
}
